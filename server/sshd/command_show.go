package sshd

import (
	"flag"
	"fmt"
	"io"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

var showCommand = command{
	name:    "show",
	example: `ssh -p 2222 HOST show 4 --changes`,
	usage:   "show RUN [--changes] [--json]",
	summary: "a run, its proposal, whom it waits for, and its masked plan text (--changes: its change set)",
	help: `A run: its variables (secret ones as (sensitive)), the decisions on it,
and its proposal: the digest, the destroy count the rules measure (every
delete), the counts in tofu's words, the addresses by action, each rule
that holds it with whom it waits for (or who released it), findings, and
tofu's plan text (masked). A held plan is first checked against the
working directory's state: if it changed, the run is shown STALE with
the reason (it can never apply; rerun plans it afresh). It says when a
newer proposal exists for the same working directory, and "waiting for
you" only when you can release something now. A dry run shows the digest
and counts of the plan it made (the plan file itself is never kept); a
run a forge launched names its pull request, and a merge's apply what
comparing it with the plan shown on the pull request found.

--changes: the change set of the saved plan instead (a dry run's: the
plan it made; a drift check's: the plan it kept), under the lines show
has for it (stale, a newer proposal, cannot be approved, whether a
reconcile can carry it), risk first: replaced and deleted resources, then
forgotten, updated, created, read, imported and moved ones, each changed
attribute with its value before and after, then outputs and drift. A
sensitive value is never shown: it says whether it changed, with keyed
fingerprints that are equal for equal values. It was computed once, when
the plan was measured; reading it runs no tofu. A run without one (no
saved plan yet, a plan whose rendering could not be read, a plan made
before change sets were kept) is refused, naming ` + "`show RUN`" + ` for tofu's text.

--json: the run with "holds" (rule, reason, approvers, released_by,
waits_for), "stale", "stale_reason", "newer_proposal", "counts",
"waiting_for_you", "rerun_of", the proposal with its plan_text, "plan"
(the digest and counts of every saved plan, a dry run's included),
"pull_request" (a forge-launched run's) and "changes" (the change set,
left out when there is none). With --changes,
--json prints that change set object alone, refused as the text is.`,
	args: []string{"RUN"},
	json: true,
	bind: func(fs *flag.FlagSet) handler {
		changes := fs.Bool("changes", false, "the saved plan's change set, risk first, instead of the whole run")
		return func(c *call) int { return c.show(*changes) }
	},
}

// show prints one run in detail, or with changes the change set of its
// saved plan (as text, or with --json as the run object's "changes").
func (c *call) show(changes bool) int {
	run, err := c.s.Run(c.arg(0))
	if err != nil {
		return c.refuse(err)
	}
	run = c.s.Refreshed(run)
	if !changes {
		return c.printRun(run, true)
	}
	cs, err := c.s.Changes(run.ID)
	if err != nil {
		return c.refuse(err)
	}
	if cs == nil {
		return c.refuse(noChanges(run))
	}
	if c.json {
		return writeJSON(c.out, api.ChangesJSON(cs))
	}
	writeChangesHead(c.out, c.s.View(run, c.id, false))
	fmt.Fprint(c.out, planview.Text(cs, 0))
	return exitOK
}

// writeChangesHead is the lines above the change set of run v, as show
// and the console say them: the run, its status and the digest of the plan
// the change set describes, then whether that plan is stale, the newer
// proposal for its working directory, why it cannot be approved, and (a
// drift check's) whether a reconcile can still carry it.
func writeChangesHead(w io.Writer, v api.RunView) {
	r := v.Run
	what, p := changesOfWhat(r)
	digest := ""
	if plan := api.PlanOf(r); plan != nil {
		digest = plan.Digest
	}
	fmt.Fprintf(w, "run %s: %s; the change set of the %s %s\n", r.ID, r.Status, what, digest)
	if p != nil && p.Stale {
		fmt.Fprintf(w, "  STALE: %s\n", screentext.Sentence(p.StaleReason))
	}
	if v.NewerProposal != "" {
		fmt.Fprintf(w, "  a newer proposal exists: run %s\n", screentext.Field(v.NewerProposal))
	}
	if v.Unapprovable != "" {
		fmt.Fprintf(w, "  CANNOT BE APPROVED: %s\n", screentext.Sentence(v.Unapprovable))
	}
	if v.Reconcile != "" {
		fmt.Fprintf(w, "  reconcile: %s\n", screentext.Sentence(v.Reconcile))
	}
}

// changesOfWhat names the plan run r's change set describes, in the order
// api.PlanOf takes them, with the proposal it belongs to (nil for a dry
// run's plan, which proposes nothing).
func changesOfWhat(r store.Run) (string, *store.Proposal) {
	switch {
	case r.DryPlan != nil:
		return "plan this dry run made (not kept)", nil
	case r.Proposal != nil && r.Proposal.Stage == store.StagePlan:
		return "saved plan", r.Proposal
	case r.Kind == store.KindCheck && r.Check != nil && r.Check.Plan != nil:
		return "plan this drift check kept", r.Check.Plan
	}
	return "saved plan", r.Proposal
}

// noChanges is the refusal of `show --changes` for run r, which has no
// change set: why, and that `show` (or, for a dry run, `log`) prints tofu's
// own text.
func noChanges(r store.Run) error {
	hasPlan := api.PlanOf(r) != nil
	switch {
	case !hasPlan && r.Kind == store.KindPlan && r.PlannedBy != "":
		return api.Errorf(api.ErrConflict, "run %s has no change set: a dry run on a relay worker hands no plan to the control node, so it keeps none; `log %s` shows its plan", r.ID, r.ID)
	case !hasPlan && r.Kind == store.KindPlan:
		return api.Errorf(api.ErrConflict, "run %s has no change set: this dry run measured no plan (it did not get as far, its plan's rendering could not be read, or it ran before dry runs kept one); `log %s` shows its plan", r.ID, r.ID)
	case !hasPlan:
		return api.Errorf(api.ErrConflict, "run %s has no change set: it has no saved plan (status %s); `show %s` shows the run", r.ID, r.Status, r.ID)
	case r.DryPlan != nil:
		return api.Errorf(api.ErrConflict, "run %s's plan has no change set: its rendering could not be read; `log %s` shows tofu's own plan text (masked)", r.ID, r.ID)
	}
	return api.Errorf(api.ErrConflict, "run %s's plan has no change set: its rendering could not be read, or the plan was made before change sets were kept; `show %s` prints tofu's own plan text (masked)", r.ID, r.ID)
}
