package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// reconcileHold is the hold every reconcile carries, whatever the rules say.
const reconcileHold = "reconcile"

// Reconcile proposes, for who, applying exactly the plan drift check
// checkID kept: a new run of kind reconcile with the check's template,
// working directory and answers, its proposal the check's (digest, counts,
// basis, plan text), held for a person by the "reconcile" hold and by the
// rules (reconcileDecision: the rules now read the plan's kept rendering,
// with the check's recorded decision as the floor). The kept plan moves to
// it: sealed again bound to the new run, the check's blobs deleted, the
// check marked reconciled. `approve --digest` then releases it like any
// held apply. It is refused, with a sentence, for a run that is not a
// check, a check that kept no plan or no rendering of it, one a newer
// check superseded and one already reconciled; and when the rules refuse
// the plan, now or at the check.
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
	rendering, err := s.openKeptRendering(check)
	if err != nil {
		return store.Run{}, err
	}
	defer clear(rendering)
	run, checked, err := s.createReconcile(ctx, check, who, plain, rendering)
	if err != nil {
		return store.Run{}, err
	}
	s.changed(checked)
	s.changed(run)
	return run, nil
}

// reconcilable refuses, with a sentence, a run whose kept plan cannot be
// proposed as a reconcile; nil when it can.
func (s *Server) reconcilable(r store.Run) error {
	c, t := r.Check, s.config().Templates[r.Template]
	switch {
	case r.Kind != KindCheck:
		return errorf(ErrInvalid, "run %s is %s, not a drift check; a reconcile is proposed only from a check that kept a plan (`launch %s --check`)", r.ID, kindPhrase(r.Kind), r.Template)
	case c != nil && c.SupersededBy != "":
		return errorf(ErrConflict, "check %s's plan was dropped by check %s, a newer check of the same working directory; propose the reconcile from that one (`show %s`)", r.ID, c.SupersededBy, c.SupersededBy)
	case c != nil && c.ReconciledBy != "":
		return errorf(ErrConflict, "check %s was already reconciled by run %s (`show %s`); a kept plan is proposed once", r.ID, c.ReconciledBy, c.ReconciledBy)
	case c != nil && !c.Drifted:
		return errorf(ErrConflict, "check %s found no drift, so it kept no plan and there is nothing to reconcile", r.ID)
	case r.Status != StatusSucceeded || c == nil || !c.Kept || c.Plan == nil:
		return errorf(ErrConflict, "check %s kept no plan (it %s: %s); run the check again", r.ID, api.StatusSaid(r.Status), screentext.Sentence(r.Message))
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

// createReconcile stores, in one transaction, the held reconcile run of
// check with plan sealed bound to it, the check marked reconciled with its
// kept plan deleted, and the audit entries of both, once the rules decided
// on the plan's rendering (reconcileDecision); it returns the reconcile and
// the check as written. When any of it fails nothing is stored.
func (s *Server) createReconcile(ctx context.Context, check store.Run, who Identity, plan, rendering []byte) (store.Run, store.Run, error) {
	r := reconcileRun(check, who)
	m, err := s.reconcileMasker(check, rendering)
	if err != nil {
		return store.Run{}, store.Run{}, errorf(ErrConflict, "the reconcile of check %s cannot mask what it shows (%v); nothing was proposed: run the check again", check.ID, err)
	}
	holds, err := s.reconcileDecision(ctx, check, *r, rendering, m)
	if err != nil {
		return store.Run{}, store.Run{}, err
	}
	cs, err := s.carriedChanges(check, rendering, m)
	if err != nil {
		s.log.Warn("a kept plan's rendering could not be read for its change set; the reconcile is proposed without one", "check", check.ID)
	}
	var checked store.Run
	err = s.db.Update(func(tx *store.Tx) error {
		err := tx.CreateRun(r, func(r *store.Run) error {
			if err := resealAnswers(s, check, r); err != nil {
				return err
			}
			r.Proposal = reconcileProposal(check, *r, holds)
			r.Message = fmt.Sprintf("Held for approval: a reconcile carries the plan check %s kept (%s); a person releases exactly that plan with: approve %s --digest %s", check.ID, planCounts(r.Proposal), r.ID, r.Proposal.Digest)
			return nil
		})
		if err != nil {
			return err
		}
		if checked, err = moveKept(s, tx, check.ID, *r, plan); err != nil {
			return err
		}
		if err := s.storeChangesIn(tx, r.ID, r.Proposal.Digest, &cs); err != nil {
			return err
		}
		if err := tx.Audit(auditEvent(check.ID, who.Name, "reconciled", "run "+r.ID+" carries the plan this check kept")); err != nil {
			return err
		}
		return tx.Audit(auditEvent(r.ID, who.Name, "reconcile", fmt.Sprintf("proposes applying the plan check %s kept, %s, %s", check.ID, r.Proposal.Digest, planCounts(r.Proposal))))
	})
	var coded *Error
	if errors.As(err, &coded) {
		return store.Run{}, store.Run{}, err
	}
	if err != nil {
		return store.Run{}, store.Run{}, fmt.Errorf("storing the reconcile: %w", err)
	}
	if cs != nil {
		s.changeCache.put(r.ID, r.Proposal.Digest, cs)
	}
	return *r, checked, nil
}

// moveKept, inside tx, seals plan bound to the reconcile r and stores it,
// deletes the plan check checkID kept and marks the check reconciled by r;
// it returns the check as written. A check that no longer keeps its plan
// is a conflict.
func moveKept(s *Server, tx *store.Tx, checkID string, r store.Run, plan []byte) (store.Run, error) {
	sealed, err := seal.Seal(s.key, r.ID, plan)
	if err != nil {
		return store.Run{}, fmt.Errorf("sealing the kept plan for the reconcile: %w", err)
	}
	if err := tx.PutBlob(blobPlan, r.ID, sealed); err != nil {
		return store.Run{}, err
	}
	for _, kind := range []string{blobDrift, blobDriftRendering} {
		if err := tx.DeleteBlob(kind, checkID); err != nil {
			return store.Run{}, err
		}
	}
	return tx.UpdateRun(checkID, func(c *store.Run) error {
		if c.Check == nil || !c.Check.Kept {
			return errorf(ErrConflict, "check %s no longer keeps its plan (`show %s` says why); nothing was proposed", checkID, checkID)
		}
		c.Check.Kept, c.Check.ReconciledBy = false, r.ID
		return nil
	})
}

// reconcileRun is the reconcile of check as who asks for it, held.
func reconcileRun(check store.Run, who Identity) *store.Run {
	r := &store.Run{
		Template: check.Template, Project: check.Project, Tool: check.Tool, Command: check.Command,
		Workdir: check.Workdir, WorkdirID: check.WorkdirID, Queue: check.Queue,
		Kind: KindReconcile, ReconcileOf: check.ID,
		Requester: who.Name, RequesterKind: RequesterPerson,
		Vars: check.Vars, SecretVars: check.SecretVars, Answers: check.Answers,
		Status: StatusAwaitingApproval, Phase: phasePlan, ExitCode: -1, CreatedAt: time.Now(),
	}
	if who.Agent {
		r.RequesterKind = RequesterAgent
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
// and then by holds (reconcileDecision's).
func reconcileProposal(check store.Run, r store.Run, holds []store.Hold) *store.Proposal {
	p := *check.Check.Plan
	p.Requested = requestedHow(r) + ", a reconcile of check " + check.ID
	p.Stage = StagePlan
	p.Used, p.Stale, p.StaleReason = false, false, ""
	p.Holds = append([]store.Hold{{Rule: reconcileHold, Reason: "a reconcile carries the plan check " + check.ID + " kept; a person releases it"}}, holds...)
	p.Refusals = nil
	return &p
}

// carriedChanges is the change set a reconcile of check shows: the one
// the check stored for the plan it kept, masked by the check's own masker
// (which knew every secret the check's run was given, a command-source
// credential's output included) and again with m, the reconcile's; or,
// when the check stored none, the change set of rendering masked with m.
// The check's change set is copied, never changed. An error says the
// rendering cannot be read (the reconcile then has no change set).
func (s *Server) carriedChanges(check store.Run, rendering []byte, m *mask.Masker) (*planview.ChangeSet, error) {
	kept, err := s.changesOf(check)
	if err != nil || kept == nil {
		return s.changesOfPlan(rendering, m)
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, fmt.Errorf("copying check %s's change set: %w", check.ID, err)
	}
	defer clear(b)
	cs := &planview.ChangeSet{}
	if err := json.Unmarshal(b, cs); err != nil {
		return nil, fmt.Errorf("copying check %s's change set: %w", check.ID, err)
	}
	cs.Mask(m.String)
	return cs, nil
}
