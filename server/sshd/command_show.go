package sshd

var showCommand = command{
	name:    "show",
	example: `ssh -p 2222 HOST show 4 --json`,
	usage:   "show RUN [--json]",
	summary: "a run, its proposal, whom it waits for, and its masked plan text",
	help: `A run: its variables (secret ones as (sensitive)), the decisions on it,
and its proposal: the digest, the destroy count the rules measure (every
delete), the counts in tofu's words, the addresses by action, each rule
that holds it with whom it waits for (or who released it), findings, and
tofu's plan text (masked). A held plan is first checked against the
working directory's state: if it changed, the run is shown STALE with
the reason (it can never apply; rerun plans it afresh). It says when a
newer proposal exists for the same working directory, and "waiting for
you" only when you can release something now.

--json: the run with "holds" (rule, reason, approvers, released_by,
waits_for), "stale", "stale_reason", "newer_proposal", "counts",
"waiting_for_you", "rerun_of" and the proposal with its plan_text.`,
	args: []string{"RUN"},
	json: true,
	bind: noFlags((*call).show),
}

// show prints one run in detail.
func (c *call) show() int {
	run, err := c.s.Run(c.arg(0))
	if err != nil {
		return c.refuse(err)
	}
	return c.printRun(c.s.Refreshed(run), true)
}
