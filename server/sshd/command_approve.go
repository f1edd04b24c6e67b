package sshd

import (
	"flag"
	"fmt"

	"github.com/switchtender/switchtender/store"
)

var approveCommand = command{
	name:    "approve",
	example: `ssh -p 2222 HOST approve 4 --digest sha256:3f1a…`,
	usage:   "approve RUN --digest sha256:HEX [--wait] [--json]",
	summary: "release exactly the held proposal with that digest",
	help: `Releases every rule that holds the run and names you (or names nobody),
bound to the digest ` + "`show RUN`" + ` gives: any other digest, a stale or used
plan, or a rule that does not name you is refused with a sentence. When
no rule still holds the run it is queued: to apply exactly that saved
plan, or (a run held before planning) to plan. Otherwise it prints the
rules that still hold it and whom each waits for.

--wait then streams the run's masked log (what comes after the approval)
until it ends or is held again, and exits 0 if it succeeded, 3 if it waits
for approval (again, or still: other rules hold it), 1 otherwise.`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		digest := fs.String("digest", "", "the digest of the held proposal you release, `sha256:HEX` as show RUN gives it")
		wait := fs.Bool("wait", false, "follow the released run until it ends or is held again")
		return func(c *call) int { return c.approve(*digest, *wait) }
	},
}

// approve releases the rules of a held proposal that name the caller.
func (c *call) approve(digest string, wait bool) int {
	if digest == "" {
		return c.usageErr("approve needs --digest sha256:HEX, the digest of the plan you release; `show %s` gives it", c.arg(0))
	}
	from := logSize(c.s, c.arg(0))
	run, err := c.s.Approve(c.ctx, c.id, c.arg(0), digest)
	if err != nil {
		return c.refuse(err)
	}
	if !wait {
		return c.printRun(run, false)
	}
	if store.Status(run.Status) == store.StatusAwaitingApproval {
		c.printRun(run, false)
		return ExitHeld
	}
	if !c.json {
		fmt.Fprintf(c.out, "run %s released; following it\n", run.ID)
	}
	if run, err = c.follow(run.ID, from); err != nil {
		return c.refuse(err)
	}
	c.printRun(run, false)
	return followExit(store.Status(run.Status))
}
