package server

import (
	"flag"

	"github.com/switchtender/switchtender/store"
)

var logCommand = command{
	name:    "log",
	example: `ssh -p 2222 HOST log 4 --follow`,
	usage:   "log RUN [--follow]",
	summary: "a run's masked log (--follow: until it stops or is held)",
	help: `The run's log as stored, secrets masked and control characters escaped.
--follow keeps streaming until the run ends or is held for approval.`,
	args: []string{"RUN"},
	bind: func(fs *flag.FlagSet) handler {
		follow := fs.Bool("follow", false, "keep streaming until the run stops or is held")
		return func(c *call) int { return c.log(*follow) }
	},
}

// log prints a run's masked log, or follows it.
func (c *call) log(follow bool) int {
	rid := c.arg(0)
	if _, err := c.s.getRun(rid); err != nil {
		return c.refuse(err)
	}
	write := func(ch store.Chunk) error { _, err := c.out.Write(ch.Data); return err }
	if follow {
		if err := c.s.FollowLog(c.ctx, rid, 0, write); err != nil {
			return c.refuse(err)
		}
		return exitOK
	}
	chunks, err := c.s.db.ReadLog(rid, 0)
	if err != nil {
		return c.refuse(err)
	}
	for _, ch := range chunks {
		if write(ch) != nil {
			break
		}
	}
	return exitOK
}
