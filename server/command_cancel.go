package server

var cancelCommand = command{
	name:    "cancel",
	example: `ssh -p 2222 HOST cancel 4`,
	usage:   "cancel RUN [--json]",
	summary: "stop a run (tofu gets an interrupt first)",
	help: `A queued run never starts; a running one's tool gets SIGINT (so it
releases its state lock) and SIGKILL only after cancel_grace; a held one
ends. The requester may cancel their run, a person with the approve role
any run; a run that ended cannot be cancelled.`,
	args: []string{"RUN"},
	json: true,
	bind: noFlags((*call).cancel),
}

// cancel stops a run.
func (c *call) cancel() int {
	run, err := c.s.Cancel(c.ctx, c.id, c.arg(0))
	if err != nil {
		return c.refuse(err)
	}
	return c.printRun(run, false)
}
