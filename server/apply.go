package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// The steps that carry out a saved plan (spec "A gated apply carries out the
// approved plan"): verify that the plan is the released one and still fits
// the state, add its sensitive values to the masker, apply exactly that
// file. The plaintext is wiped however the apply ends (execute defers it).

// useReleasedPlan marks run id's proposal used (a plan file is applied at
// most once) and returns the run and the digest its release covers, or why
// it cannot be applied (a sentence: no saved plan, already used, or a
// release that does not cover the proposal's plan). Both the control
// node's verify step and a relay apply's lease use it.
func (s *Server) useReleasedPlan(id string) (store.Run, string, string) {
	run, err := s.db.UpdateRun(id, func(r *store.Run) error {
		if r.Proposal == nil || r.Proposal.Stage != StagePlan {
			return fmt.Errorf("there is no saved plan to apply")
		}
		if r.Proposal.Used {
			return fmt.Errorf("this saved plan was already applied once; submit the apply again")
		}
		r.Proposal.Used = true
		return nil
	})
	if err != nil {
		return run, "", fmt.Sprintf("Refused to apply: %v.", err)
	}
	approved := releasedDigest(run)
	if approved == "" || approved != run.Proposal.Digest {
		return run, "", fmt.Sprintf("Refused to apply: the release covers %q but the proposal's plan is %s; nothing was applied. Submit the apply again.", approved, run.Proposal.Digest)
	}
	return run, approved, ""
}

// verifyStep marks the proposal used (a plan file is applied at most once),
// unseals the plan into the private directory, checks its digest against
// the proposal and the release, and refuses a plan whose state basis
// changed: the run ends stale and is never planned again by itself.
func verifyStep(ctx context.Context, x *execution) error {
	run, approved, why := x.s.useReleasedPlan(x.run.ID)
	if why != "" {
		return end(StatusFailed, -1, "%s", why)
	}
	x.run, x.approved = run, approved
	p := run.Proposal
	plain, err := x.s.openSealedPlan(run.ID, x.approved)
	if err != nil {
		return err
	}
	defer clear(plain)
	basis, err := x.currentBasis(ctx)
	if err != nil {
		return err
	}
	if basis != (stateBasis{Lineage: p.Lineage, Serial: p.Serial}) {
		x.say("the state changed after the plan was made (lineage %q serial %d, now lineage %q serial %d); refusing the saved plan", p.Lineage, p.Serial, basis.Lineage, basis.Serial)
		return end(StatusStale, -1, "%s", staleMessage(x.run))
	}
	x.planPath, err = runstep.WritePlan(x, plain)
	return err
}

// openSealedPlan unseals run id's plan and checks it is the released one.
func (s *Server) openSealedPlan(id, approved string) ([]byte, error) {
	blob, err := s.db.GetBlob(blobPlan, id)
	if err != nil {
		return nil, end(StatusFailed, -1, "Refused to apply: the sealed plan is missing (%v); nothing was applied. Submit the apply again.", err)
	}
	plain, digest, err := seal.Open(s.key, id, blob)
	if err == nil && digest != approved {
		clear(plain)
		err = fmt.Errorf("its digest %s is not the released %s", digest, approved)
	}
	if err != nil {
		return nil, end(StatusFailed, -1, "Refused to apply: the sealed plan does not open as this run's released plan (%v); nothing was applied.", err)
	}
	return plain, nil
}

// maskStep adds the values the plan marks sensitive to the masker before
// the tool prints anything.
func maskStep(ctx context.Context, x *execution) error {
	return runstep.MaskPlan(ctx, x, x.planPath)
}

// applyPlanStep runs apply PLANFILE through runstep.ApplyPlan, which checks
// the file's digest once more just before the tool starts. OpenTofu's own
// stale refusal ends the run stale.
func applyPlanStep(ctx context.Context, x *execution) error {
	what := appliedPlan(x.run, x.approved)
	if _, err := x.s.db.UpdateRun(x.run.ID, func(r *store.Run) error { r.Message = "Applying " + what + "."; return nil }); err == nil {
		x.s.broker.RunChanged()
	}
	res, err := runstep.ApplyPlan(ctx, x, x.planPath, x.approved)
	if errors.Is(err, runstep.ErrStale) {
		return end(StatusStale, res.ExitCode, "%s", staleMessage(x.run))
	}
	if err != nil {
		return err
	}
	return end(StatusSucceeded, res.ExitCode, "Applied %s.", what)
}

// staleMessage is what run r says when its saved plan proved stale.
func staleMessage(r store.Run) string {
	if r.Kind == KindReconcile {
		return "The saved plan is stale: the state changed after check " + r.ReconcileOf + " made it, so it was refused and nothing was applied. " + againHint(r)
	}
	return "The saved plan is stale: the state changed after the plan was made, so it was refused and nothing was applied. The proposal has to be made again: `rerun " + r.ID + "` (same answers), or submit the apply again, and it is planned afresh."
}

// againHint says how a stale proposal is made again: a rerun, or for a
// reconcile the check run again and the reconcile proposed from it.
func againHint(r store.Run) string {
	if r.Kind == KindReconcile {
		return "Run the check again (`launch " + r.Template + " --check`) and propose the reconcile from it (`reconcile` with the new check's run)."
	}
	return "`rerun " + r.ID + "` plans it afresh with the same answers."
}

// releasedDigest is the digest the last plan-stage release covered: a
// person's approval or the rules' pass.
func releasedDigest(r store.Run) string {
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		a := r.Approvals[i]
		d := a.Decision
		if a.Stage == StagePlan && (d == DecisionApprove || d == DecisionPass) {
			return a.Digest
		}
	}
	return ""
}

// appliedPlan names the saved plan digest that r's apply phase carries
// out, as every end sentence of an apply says it: "the approved plan D" when
// a person released it, "the saved plan D, which no rule held" otherwise.
func appliedPlan(r store.Run, digest string) string {
	if approvedByPerson(r) {
		return "the approved plan " + digest
	}
	return "the saved plan " + digest + ", which no rule held"
}

// approvedByPerson reports whether a person approved r's current plan, as
// opposed to no rule holding it.
func approvedByPerson(r store.Run) bool {
	for _, a := range r.Approvals {
		if a.Stage == StagePlan && a.Decision == DecisionApprove && r.Proposal != nil && a.Digest == r.Proposal.Digest {
			return true
		}
	}
	return false
}
