package sshd

import "flag"

var rerunCommand = command{
	name:    "rerun",
	example: `ssh -p 2222 HOST rerun 4 --wait`,
	usage:   "rerun RUN [--wait] [--json]",
	summary: "submit a run that ended again: same template, kind and answers",
	help: `Queues a new run with the run's template, kind, approval request and
answers; secret answers are reused from the sealed store, never shown or
retyped. The new run says which run it repeats (rerun_of). Use it for a
stale, failed, rejected or cancelled run. A run that has not ended is
refused, and so is one whose template's survey changed incompatibly (the
refusal names the field); you need the launch role.

--wait streams the new run's masked log until it ends or is held, then
prints it; it exits 1 unless the run succeeded or waits for approval.`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		wait := fs.Bool("wait", false, "stream the log and wait until the new run ends or is held")
		return func(c *call) int { return c.rerun(*wait) }
	},
}

// rerun submits a run that ended again and prints the new run.
func (c *call) rerun(wait bool) int {
	run, err := c.s.Rerun(c.ctx, c.id, c.arg(0))
	if err != nil {
		return c.refuse(err)
	}
	return c.queued(run, wait)
}
