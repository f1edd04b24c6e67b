package sshd

import "flag"

var rejectCommand = command{
	name:    "reject",
	example: `ssh -p 2222 HOST "reject 4 --reason 'too risky'"`,
	usage:   "reject RUN [--reason TEXT] [--json]",
	summary: "end a held run",
	help: `Turns the held proposal down and ends the run (rejected); its sealed plan
is dropped. Only a person with the approve role whom one of the holding
rules names (or any such person, for a rule that names nobody) may; the
requester may cancel instead.`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		reason := fs.String("reason", "", "why, shown to the requester (`TEXT`)")
		return func(c *call) int { return c.reject(*reason) }
	},
}

// reject turns a held proposal down.
func (c *call) reject(reason string) int {
	run, err := c.s.Reject(c.ctx, c.id, c.arg(0), reason)
	if err != nil {
		return c.refuse(err)
	}
	return c.printRun(run, false)
}
