package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// Approve releases, for who, every rule that holds run id's proposal and
// names who (or names nobody), binding the approval to digest: the held
// proposal's plan digest, or for a run held before planning its request
// digest. When no rule still holds the proposal the run is queued: to apply
// exactly that saved plan, or (request stage) to plan. It refuses a
// malformed, wrong or superseded digest, a stale or used proposal, agents,
// people without the approve role or whom no pending rule names, and
// (unless allow_self_approval) the requester. The right digest is never
// echoed in a refusal.
func (s *Server) Approve(ctx context.Context, who Identity, id, digest string) (store.Run, error) {
	who, err := s.current(who)
	if err != nil {
		return store.Run{}, err
	}
	if err := seal.CheckDigest(digest); err != nil {
		return store.Run{}, errorf(ErrInvalid, "%v", err)
	}
	if err := s.beforeApprove(id, who); err != nil {
		return store.Run{}, err
	}
	var released []string
	var done bool
	run, err := s.updateAudited(id, func(r *store.Run) error {
		if err := s.mayApprove(*r, who); err != nil {
			return err
		}
		p := r.Proposal
		if digest != p.Digest {
			return errorf(ErrConflict, "digest %s is not the digest of run %s's held proposal (it may be another run's, or a superseded plan's); read the plan with `show %s`, then approve the digest shown there", digest, r.ID, r.ID)
		}
		released = releasable(*r, who)
		a := store.Approval{By: who.Name, Digest: digest, Stage: p.Stage, Decision: DecisionApprove, Rules: released, At: time.Now()}
		if p.Stage == StageScan && r.Scan != nil {
			a.Modules = r.Scan.Digest // the approval carries the modules the scan read
		}
		r.Approvals = append(r.Approvals, a)
		if pending := pendingHolds(*r); len(pending) > 0 {
			var waits []string
			for _, h := range pending {
				waits = append(waits, fmt.Sprintf("rule %s (%s)", h.Rule, waitsFor(h)))
			}
			r.Message = fmt.Sprintf("%s released %s; still held by %s.", who.Name, rulesPhrase(released), strings.Join(waits, ", "))
			return nil
		}
		if err := setStatus(r, StatusQueued); err != nil {
			return err
		}
		done = true
		queueReleased(r, who.Name)
		return nil
	}, func(r store.Run) store.AuditEvent {
		return auditEvent(id, who.Name, "approve", fmt.Sprintf("%s %s %s", r.Approvals[len(r.Approvals)-1].Stage, digest, rulesPhrase(released)))
	})
	if err != nil {
		return store.Run{}, err
	}
	s.log.Info("approval", "run", id, "template", run.Template, "by", who.Name, "stage", run.Approvals[len(run.Approvals)-1].Stage,
		"digest", digest, "rules", released, "released", done)
	if done {
		s.enqueue(run)
	}
	return s.getRun(id)
}

// beforeApprove refuses an approval the key cannot carry out (the held
// plan was sealed to another key), and marks a held plan whose state
// changed stale before the approval is weighed.
func (s *Server) beforeApprove(id string, who Identity) error {
	r, err := s.getRun(id)
	if err != nil {
		return err
	}
	if err := s.unsealable(r); err != nil && s.mayApprove(r, who) == nil {
		return err
	}
	if err := s.checkStale(r); err != nil {
		s.log.Error("checking whether a held plan is stale", "run", id, "err", err)
	}
	return nil
}

// queueReleased sets what a run released by by does next, by its
// proposal's stage: apply the saved plan, plan exactly the scanned modules,
// or plan (a request-stage proposal is done with).
func queueReleased(r *store.Run, by string) {
	switch r.Proposal.Stage {
	case StagePlan:
		r.Phase = phaseApply
		r.Message = fmt.Sprintf("Approved by %s; the saved plan %s is queued to apply.", by, r.Proposal.Digest)
	case StageScan:
		r.Phase = phasePlan
		r.Message = fmt.Sprintf("Released by %s; queued to plan exactly the modules scanned (%s).", by, r.Scan.Digest)
	default:
		r.Phase = phasePlan
		r.Proposal = nil
		r.Message = fmt.Sprintf("Released by %s; queued to plan.", by)
		if r.Kind != KindPlan {
			r.Message += " The apply its plan proposes is held again."
		}
	}
}

// notHeld is the refusal for approving or rejecting a run that does not
// wait for approval, saying what became of it.
func notHeld(r store.Run) error {
	var last *store.Approval
	if n := len(r.Approvals); n > 0 {
		last = &r.Approvals[n-1]
	}
	st := r.Status
	switch {
	case st == StatusSucceeded && r.Proposal != nil && r.Proposal.Used:
		return errorf(ErrConflict, "run %s already applied its plan; an approval cannot be given twice", r.ID)
	case st == StatusStale:
		return errorf(ErrConflict, "run %s is stale: the state changed after its plan was made, so it can never apply. %s", r.ID, againHint(r))
	case st.Final():
		return errorf(ErrConflict, "run %s %s and awaits no approval; `rerun %s` submits it again for a new proposal", r.ID, api.Ended(r.Status), r.ID)
	case last != nil && last.Decision == DecisionApprove:
		return errorf(ErrConflict, "run %s was already released by %s and %s", r.ID, last.By, api.StatusSaid(r.Status))
	}
	return errorf(ErrConflict, "run %s %s, not awaiting approval", r.ID, api.StatusSaid(r.Status))
}
