package sshd

var reconcileCommand = command{
	name:    "reconcile",
	example: `ssh -p 2222 HOST reconcile 7`,
	usage:   "reconcile CHECK [--json]",
	summary: "propose applying exactly the plan a drift check kept",
	help: `Makes a reconcile run that carries the plan drift check CHECK kept: its
proposal has the check's digest, counts and plan, and it is held for a person
whatever the rules say (and by any rule that holds the plan). Release it with
approve RUN --digest DIGEST; it then applies exactly that plan file. If the
state changed after the check, it ends stale: run the check again and propose
the reconcile from the new check.

Refused for a run that is not a check, a check that kept no plan (no drift),
a check whose plan a newer check of the same working directory dropped, and
a check already reconciled; you need the launch role.`,
	args: []string{"CHECK"},
	json: true,
	bind: noFlags(func(c *call) int { return c.reconcile() }),
}

// reconcile proposes the kept plan of the check named by the argument and
// prints the held reconcile.
func (c *call) reconcile() int {
	run, err := c.s.Reconcile(c.ctx, c.id, c.arg(0))
	if err != nil {
		return c.refuse(err)
	}
	return c.printRun(run, false)
}
