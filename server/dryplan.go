package server

import (
	"context"
	"fmt"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// A dry run's saved plan is measured as a gated plan is (plan, show,
// measure), and what it would do is recorded on the run (store.DryPlan: the
// plan file's digest and the gate's counts) beside its change set, sealed
// as blob "changes" bound to the run and that digest, in one write. The
// plan file itself is never stored: it is wiped when the run ends, as
// before. A pull request's plan (launch --ref) is a dry run and is measured
// the same way. A relay worker's dry run hands nothing over (the relay
// carries a saved plan for a gated plan only), so it records none.

// dryRunSteps are a dry run's steps after init: plan, then the saved plan
// rendered (show -json), measured, and recorded.
func dryRunSteps() []step {
	return []step{xstep("plan", dryRunStep), xstep("show", showStep), xstep("measure", measureStep), xstep("record", recordDryPlanStep)}
}

// recordDryPlanStep digests the saved plan, wipes it, records the plan's
// digest and counts on the run with its change set, and ends the dry run.
// A plan the gate could not measure (a rendering it cannot read) records
// nothing and says so: the plan itself succeeded, and its log shows it.
func recordDryPlanStep(ctx context.Context, x *execution) error {
	defer x.dropRendering()
	digest, err := seal.FileDigest(x.planPath)
	wipe(x.s, x.planPath)
	id := x.run.ID
	sum := x.summary
	if err != nil {
		x.say("the saved plan could not be digested (%v), so this dry run records no plan digest and no change set", err)
		return end(StatusSucceeded, 0, "Dry run complete: its log (`log %s`) shows the plan, whose saved file could not be digested, so it keeps no plan digest or change set; nothing was applied.", id)
	}
	if sum == nil {
		x.say("the plan's rendering could not be measured, so this dry run records no plan digest and no change set")
		return end(StatusSucceeded, 0, "Dry run complete: its log (`log %s`) shows the plan, whose rendering could not be measured, so it keeps no plan digest or change set; nothing was applied.", id)
	}
	dp := &store.DryPlan{Digest: digest, Add: sum.Add, Change: sum.Change, Destroy: sum.Destroy, Replace: sum.Replace, Forget: sum.Forget}
	if err := x.s.storeDryPlan(id, dp, x.changes); err != nil {
		return fmt.Errorf("recording the dry run's plan: %w", err)
	}
	counts := screentext.PlanCounts(dp.Add, dp.Change, dp.Destroy, dp.Replace, dp.Forget)
	x.say("dry run's plan: %s; plan digest %s (the plan file is not kept)", counts, digest)
	shows := fmt.Sprintf("its log (`log %s`) shows the plan", id)
	if x.changes != nil {
		shows += fmt.Sprintf(" and `show %s --changes` its change set", id)
	}
	return end(StatusSucceeded, 0, "Dry run complete: it would make %s; %s; nothing was applied.", counts, shows)
}

// storeDryPlan records dp as run id's dry-run plan and cs, its change set,
// sealed bound to id and dp's digest, in one write; a nil cs (a rendering
// planview could not read) stores none. A change set that cannot be
// sealed is logged and left out: the digest and counts stand without it.
func (s *Server) storeDryPlan(id string, dp *store.DryPlan, cs *planview.ChangeSet) error {
	sealed := s.sealedOrNone(id, dp.Digest, &cs)
	err := s.db.Update(func(tx *store.Tx) error {
		if err := putChanges(tx, id, sealed); err != nil {
			return err
		}
		_, err := tx.UpdateRun(id, func(r *store.Run) error { r.DryPlan = dp; return nil })
		return err
	})
	if err == nil && cs != nil {
		s.changeCache.put(id, dp.Digest, cs)
	}
	return err
}
