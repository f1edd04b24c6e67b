package server

import (
	"context"
	"fmt"
	"github.com/switchtender/switchtender/screentext"
	"time"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// reconcileHold is the hold every reconcile carries, whatever the rules say.
const reconcileHold = "reconcile"

// Reconcile proposes, for who, applying exactly the plan drift check
// checkID kept: a new run of kind reconcile with the check's template,
// working directory and answers, its proposal the check's (digest, counts,
// basis, plan text), held for a person by the "reconcile" hold and by any
// rule that held the check's plan. The kept plan moves to it: sealed again
// bound to the new run, the check's blob deleted, the check marked
// reconciled. `approve --digest` then releases it like any held apply.
// It is refused, with a sentence, for a run that is not a check, a check
// that kept no plan, one a newer check superseded and one already
// reconciled; and when the rules refuse the plan.
func (s *Server) Reconcile(ctx context.Context, who Identity, checkID string) (store.Run, error) {
	who, err := s.current(who)
	if err != nil {
		return store.Run{}, err
	}
	if !who.Agent && !who.Has("launch") {
		return store.Run{}, errorf(ErrForbidden, "%s may not propose a reconcile: the launch role is missing from user %q in the configuration", who.Name, who.Name)
	}
	s.driftMu.Lock()
	defer s.driftMu.Unlock()
	check, err := s.getRun(checkID)
	if err != nil {
		return store.Run{}, err
	}
	if err := s.reconcilable(check); err != nil {
		return store.Run{}, err
	}
	plain, err := s.openKept(check)
	if err != nil {
		return store.Run{}, err
	}
	defer clear(plain)
	run, err := s.createReconcile(ctx, check, who, plain)
	if err != nil {
		return store.Run{}, err
	}
	s.dropKept(check.ID, func(c *store.Check) { c.ReconciledBy = run.ID })
	s.changed(run)
	s.audit(check.ID, who.Name, "reconciled", "run "+run.ID+" carries the plan this check kept")
	s.audit(run.ID, who.Name, "reconcile", fmt.Sprintf("proposes applying the plan check %s kept, %s, %s", check.ID, run.Proposal.Digest, planCounts(run.Proposal)))
	return run, nil
}

// reconcilable refuses, with a sentence, a run whose kept plan cannot be
// proposed as a reconcile; nil when it can.
func (s *Server) reconcilable(r store.Run) error {
	c, t := r.Check, s.config().Templates[r.Template]
	switch {
	case Kind(r.Kind) != KindCheck:
		return errorf(ErrInvalid, "run %s is %s, not a drift check; a reconcile is proposed only from a check that kept a plan (`launch %s --check`)", r.ID, kindPhrase(Kind(r.Kind)), r.Template)
	case c != nil && c.SupersededBy != "":
		return errorf(ErrConflict, "check %s's plan was dropped by check %s, a newer check of the same working directory; propose the reconcile from that one (`show %s`)", r.ID, c.SupersededBy, c.SupersededBy)
	case c != nil && c.ReconciledBy != "":
		return errorf(ErrConflict, "check %s was already reconciled by run %s (`show %s`); a kept plan is proposed once", r.ID, c.ReconciledBy, c.ReconciledBy)
	case c != nil && !c.Drifted:
		return errorf(ErrConflict, "check %s found no drift, so it kept no plan and there is nothing to reconcile", r.ID)
	case statusOf(r) != StatusSucceeded || c == nil || !c.Kept || c.Plan == nil:
		return errorf(ErrConflict, "check %s kept no plan (it is %s: %s); run the check again", r.ID, r.Status, screentext.Sentence(r.Message))
	case t == nil:
		return errorf(ErrConflict, "template %q of check %s is no longer configured, so its plan cannot be applied", r.Template, r.ID)
	case t.Project != r.Project || t.Command != r.Command:
		return errorf(ErrConflict, "template %q now runs in %s of project %s, and check %s's plan was made for %s of project %s; run the check again", r.Template, t.Command, t.Project, r.ID, r.Command, r.Project)
	}
	return nil
}

// kindPhrase names a run kind for a sentence.
func kindPhrase(k Kind) string {
	switch k {
	case KindPlan:
		return "a dry run"
	case KindApply:
		return "an apply"
	case KindReconcile:
		return "a reconcile"
	}
	return "a run of kind " + string(k)
}

// openKept unseals the plan check kept and checks it is the one the check
// showed.
func (s *Server) openKept(check store.Run) ([]byte, error) {
	blob, err := s.db.GetBlob(blobDrift, check.ID)
	if err != nil {
		return nil, errorf(ErrConflict, "check %s's kept plan is missing from the store, so no reconcile can carry it; run the check again", check.ID)
	}
	plain, digest, err := seal.Open(s.key, driftBinding(check.ID), blob)
	if err == nil && digest != check.Check.Plan.Digest {
		clear(plain)
		err = fmt.Errorf("its digest %s is not the check's %s", digest, check.Check.Plan.Digest)
	}
	if err != nil {
		return nil, errorf(ErrConflict, "check %s's kept plan does not open as the plan it showed (%v); run the check again", check.ID, err)
	}
	return plain, nil
}

// createReconcile stores the held reconcile run of check and seals plan
// bound to it; a reconcile whose plan could not be stored ends failed.
func (s *Server) createReconcile(ctx context.Context, check store.Run, who Identity, plan []byte) (store.Run, error) {
	r := reconcileRun(check, who)
	dec := s.reconcileDecision(ctx, check, *r)
	if len(dec.Refusals) > 0 {
		var rs []store.Hold
		for _, h := range dec.Refusals {
			rs = append(rs, store.Hold{Rule: h.Rule, Reason: h.Reason})
		}
		return store.Run{}, errorf(ErrConflict, "the rules refuse applying check %s's plan as %s's reconcile: %s; nothing was proposed", check.ID, who.Name, reasons(rs))
	}
	err := s.db.CreateRunFunc(r, func(r *store.Run) error {
		if err := resealAnswers(s, check, r); err != nil {
			return err
		}
		r.Proposal = reconcileProposal(check, *r, dec)
		r.Message = fmt.Sprintf("Held for approval: a reconcile carries the plan check %s kept (%s); a person releases exactly that plan with: approve %s --digest %s", check.ID, planCounts(r.Proposal), r.ID, r.Proposal.Digest)
		return nil
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("storing the reconcile: %w", err)
	}
	sealed, err := seal.Seal(s.key, r.ID, plan)
	if err == nil {
		err = s.db.PutBlob(blobPlan, r.ID, sealed)
	}
	if err != nil {
		_, _ = s.transition(r.ID, StatusFailed, func(r *store.Run) error {
			r.Message = "The kept plan could not be stored for this reconcile; nothing was applied."
			return nil
		})
		return store.Run{}, fmt.Errorf("storing the reconcile's sealed plan: %w", err)
	}
	return *r, nil
}

// reconcileRun is the reconcile of check as who asks for it, held.
func reconcileRun(check store.Run, who Identity) *store.Run {
	r := &store.Run{
		Template: check.Template, Project: check.Project, Tool: check.Tool, Command: check.Command,
		Workdir: check.Workdir, WorkdirID: check.WorkdirID, Queue: check.Queue,
		Kind: string(KindReconcile), ReconcileOf: check.ID,
		Requester: who.Name, RequesterKind: "user",
		Vars: check.Vars, SecretVars: check.SecretVars, Answers: check.Answers,
		Status: string(StatusAwaitingApproval), Phase: string(phasePlan), ExitCode: -1, CreatedAt: time.Now(),
	}
	if who.Agent {
		r.RequesterKind = "agent"
	}
	return r
}

// resealAnswers seals the check's secret values again, bound to the
// reconcile r.
func resealAnswers(s *Server, check store.Run, r *store.Run) error {
	for _, f := range []struct{ from, to *[]byte }{{&check.SealedVars, &r.SealedVars}, {&check.SealedAnswers, &r.SealedAnswers}} {
		if len(*f.from) == 0 {
			continue
		}
		m, err := openSealedMap(s.key, check.ID, *f.from)
		if err != nil {
			return fmt.Errorf("opening check %s's sealed answers: %w", check.ID, err)
		}
		*f.to, err = sealMap(s.key, r.ID, m)
		clear(m)
		if err != nil {
			return err
		}
	}
	return nil
}

// reconcileProposal is the check's plan proposed by reconcile r: the same
// digest, counts, basis and plan text, held by the reconcile hold first
// and by every rule that held the check's plan.
func reconcileProposal(check store.Run, r store.Run, dec gate.Decision) *store.Proposal {
	p := *check.Check.Plan
	p.Requested = requestedHow(r) + ", a reconcile of check " + check.ID
	p.Stage = string(StagePlan)
	p.Used, p.Stale, p.StaleReason = false, false, ""
	p.Holds = []store.Hold{{Rule: reconcileHold, Reason: "a reconcile carries the plan check " + check.ID + " kept; a person releases it"}}
	for _, h := range dec.Holds {
		p.Holds = append(p.Holds, store.Hold{Rule: h.Rule, Reason: h.Reason, Approvers: h.Approvers})
	}
	p.Refusals = nil
	return &p
}

// reconcileDecision asks the rules, as they are now, about the reconcile
// r proposes: its own requester and kind, and the plan's counts as the
// check measured them. The plan itself is not rendered again, so a
// plan_gate cannot read it and holds the reconcile (the gate fails closed).
func (s *Server) reconcileDecision(ctx context.Context, check store.Run, r store.Run) gate.Decision {
	p := check.Check.Plan
	sum := &gate.Summary{FormatVersion: "1.2", Add: p.Add, Change: p.Change, Destroy: p.Destroy,
		Replace: p.Replace, Forget: p.Forget, ByAction: p.Addresses}
	return gate.Decide(ctx, s.gateRequest(r), nil, sum, s.currentRules(), s.policyTime)
}
