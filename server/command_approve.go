package server

import "flag"

var approveCommand = command{
	name:    "approve",
	example: `ssh -p 2222 HOST approve 4 --digest sha256:3f1a…`,
	usage:   "approve RUN --digest sha256:HEX [--json]",
	summary: "release exactly the held proposal with that digest",
	help: `Releases every rule that holds the run and names you (or names nobody),
bound to the digest ` + "`show RUN`" + ` gives: any other digest, a stale or used
plan, or a rule that does not name you is refused with a sentence. When
no rule still holds the run it is queued: to apply exactly that saved
plan, or (a run held before planning) to plan. Otherwise it prints the
rules that still hold it and whom each waits for.`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		digest := fs.String("digest", "", "the digest of the held proposal you release, `sha256:HEX` as show RUN gives it")
		return func(c *call) int { return c.approve(*digest) }
	},
}

// approve releases the rules of a held proposal that name the caller.
func (c *call) approve(digest string) int {
	if digest == "" {
		return c.usageErr("approve needs --digest sha256:HEX, the digest of the plan you release; `show %s` gives it", c.arg(0))
	}
	run, err := c.s.Approve(c.ctx, c.id, c.arg(0), digest)
	if err != nil {
		return c.refuse(err)
	}
	return c.printRun(run, false)
}
