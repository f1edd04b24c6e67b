package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// stateBasis is a state's lineage and serial: for a saved plan, those of
// the prior state it was made from (Lineage is empty when there was none).
type stateBasis struct {
	Lineage string `json:"lineage"`
	Serial  int64  `json:"serial"`
}

// parseBasis reads lineage and serial from a state document; empty input
// (no state yet) is the empty basis.
func parseBasis(state []byte) (stateBasis, error) {
	var sb stateBasis
	if len(bytes.TrimSpace(state)) == 0 {
		return sb, nil
	}
	if err := json.Unmarshal(state, &sb); err != nil {
		return stateBasis{}, err
	}
	return sb, nil
}

// planBasis reads the prior state a saved plan was made from: OpenTofu's
// plan file is a zip archive whose "tfstate" entry is that state, so this
// works for every backend, not only local state.
func planBasis(plan []byte) (stateBasis, error) {
	zr, err := zip.NewReader(bytes.NewReader(plan), int64(len(plan)))
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	f, err := zr.Open("tfstate")
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	defer f.Close()
	state, err := io.ReadAll(f)
	defer clear(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	sb, err := parseBasis(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the saved plan's prior state: %w", err)
	}
	return sb, nil
}

// currentBasis reads the working directory's current state through the
// tool (`state pull`, so any backend), never logging it: state holds
// sensitive values in clear text.
func (x *execution) currentBasis(ctx context.Context) (stateBasis, error) {
	state, res, err := exec.Capture(ctx, exec.Invocation{
		Binary: x.binary, Dir: x.dir, Env: x.env, Args: []string{"state", "pull"},
		Output: x.out, Grace: x.s.cfg.Server.CancelGrace,
	})
	defer clear(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the current state: %w", err)
	}
	if res.ExitCode != 0 {
		return stateBasis{}, fmt.Errorf("reading the current state: state pull exited %d", res.ExitCode)
	}
	sb, err := parseBasis(state)
	if err != nil {
		return stateBasis{}, fmt.Errorf("reading the current state: %w", err)
	}
	return sb, nil
}

// gatedPlan is the first of a gated apply's two steps: plan with -out into
// the run's private directory, render the saved plan with show -json, measure
// it and let the rules decide on the proposal, seal the plan file and wipe
// its plaintext. A passing proposal is applied at once; a held one waits for
// an approver with the plan it is shown; a refused one ends.
func (s *Server) gatedPlan(ctx context.Context, x *execution) {
	r := x.run
	planPath := filepath.Join(x.private, planFileName)
	defer wipe(s, planPath)
	x.out.Flush()
	if err := x.sink.Flush(); err != nil {
		x.finish(StatusFailed, err.Error(), -1)
		return
	}
	from, err := s.db.LogSize(r.ID)
	if err != nil {
		x.finish(StatusFailed, fmt.Sprintf("reading log size: %v", err), -1)
		return
	}
	res, err := x.step(ctx, "plan", exec.PlanArgs(planPath))
	if x.stopped("plan", res, err) {
		return
	}
	x.sink.Flush()
	planText := s.logText(r.ID, from)

	// The gate reads the saved plan, never the text the tool printed.
	planJSON, res, err := exec.Capture(ctx, exec.Invocation{
		Binary: x.binary, Dir: x.dir, Env: x.env, Args: exec.ShowJSONArgs(planPath),
		Output: x.out, Grace: s.cfg.Server.CancelGrace,
	})
	x.out.Flush()
	if x.stopped("show -json", res, err) {
		return
	}
	planBytes, err := os.ReadFile(planPath)
	if err != nil {
		x.finish(StatusFailed, fmt.Sprintf("reading the saved plan: %v", err), -1)
		return
	}
	basis, err := planBasis(planBytes)
	if err != nil {
		clear(planBytes)
		x.say("%v", err)
		x.finish(StatusFailed, err.Error()+"; nothing was applied", -1)
		return
	}
	digest := seal.Digest(planBytes)
	sealed, err := seal.Seal(s.key, r.ID, planBytes)
	clear(planBytes)
	if err != nil {
		x.finish(StatusFailed, fmt.Sprintf("sealing the saved plan: %v", err), -1)
		return
	}
	if err := s.db.PutBlob(blobPlan, r.ID, sealed); err != nil {
		x.finish(StatusFailed, fmt.Sprintf("storing the sealed plan: %v", err), -1)
		return
	}
	wipe(s, planPath)

	// Decide fails closed: a plan it cannot read is held (rule "gate"),
	// alongside every covering rule's own hold with its approvers.
	sum, _ := gate.AnalyzePlan(planJSON)
	dec := gate.Decide(ctx, s.gateRequest(r), planJSON, sum, s.rules, s.policyTime)
	clear(planJSON)
	if ctx.Err() != nil {
		// Cancelled while the rules decided: a policy that failed on the
		// cancelled context must not leave the run held.
		s.dropSealedPlan(r.ID)
		x.finish(StatusCancelled, "Cancelled while the rules decided on the proposal; nothing was applied.", -1)
		return
	}
	p := &store.Proposal{
		Digest:    digest,
		PlanText:  planText,
		Requested: requestedHow(r),
		Lineage:   basis.Lineage,
		Serial:    basis.Serial,
		Stage:     "plan",
		CreatedAt: time.Now(),
	}
	if sum != nil {
		p.Add, p.Change, p.Destroy, p.Replace, p.Forget = sum.Add, sum.Change, sum.Destroy, sum.Replace, sum.Forget
		p.Addresses = sum.ByAction
	}
	for _, h := range dec.Holds {
		p.Holds = append(p.Holds, store.Hold{Rule: h.Rule, Reason: h.Reason, Approvers: h.Approvers})
	}
	for _, h := range dec.Refusals {
		p.Refusals = append(p.Refusals, store.Hold{Rule: h.Rule, Reason: h.Reason})
	}
	x.say("proposal: %d to add, %d to change, %d to destroy (%d replaced); plan digest %s", p.Add, p.Change, p.Destroy, p.Replace, digest)
	switch dec.Outcome {
	case gate.Refuse:
		s.setProposal(r.ID, p)
		s.dropSealedPlan(r.ID)
		msg := "The rules refuse this apply: " + reasons(p.Refusals) + ". Nothing was applied."
		x.say("%s", msg)
		x.finish(StatusRefused, msg, -1)
	case gate.Hold:
		s.setProposal(r.ID, p)
		msg := fmt.Sprintf("Held for approval: %s. An approver releases exactly this plan with: approve %s --digest %s", reasons(p.Holds), r.ID, digest)
		x.say("%s", msg)
		x.finish(StatusAwaitingApproval, msg, -1)
	default:
		s.setProposal(r.ID, p)
		x.say("no rule holds this proposal; applying the saved plan")
		run, err := s.db.UpdateRun(r.ID, func(r *store.Run) error {
			r.Phase = phaseApply
			r.Approvals = append(r.Approvals, store.Approval{By: "rules", Digest: digest, Stage: "plan", Decision: "pass", At: time.Now()})
			return nil
		})
		if err != nil {
			x.finish(StatusFailed, fmt.Sprintf("recording the rules' decision: %v", err), -1)
			return
		}
		x.run = run
		s.applyPhase(ctx, x)
	}
}

func reasons(hs []store.Hold) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s (rule %s)", h.Reason, h.Rule))
	}
	return strings.Join(parts, "; ")
}

func (s *Server) setProposal(id string, p *store.Proposal) {
	if _, err := s.db.UpdateRun(id, func(r *store.Run) error { r.Proposal = p; return nil }); err != nil {
		s.log.Error("storing proposal", "run", id, "err", err)
	}
}

func (s *Server) dropSealedPlan(id string) {
	if err := s.db.DeleteBlob(blobPlan, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("dropping sealed plan", "run", id, "err", err)
	}
}

// logText reads a run's stored (masked) log from an offset as text.
func (s *Server) logText(id string, from int64) string {
	chunks, err := s.db.ReadLog(id, from)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range chunks {
		b.Write(c.Data)
	}
	return b.String()
}

// approvedDigest is the digest the last plan-stage approval released.
func approvedDigest(r store.Run) string {
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		a := r.Approvals[i]
		if a.Stage == "plan" && (a.Decision == "approve" || a.Decision == "pass") {
			return a.Digest
		}
	}
	return ""
}

// applyPhase carries out exactly the approved saved plan: it marks the
// proposal used (a plan file is applied at most once), unseals the plan into
// the private directory, checks its digest against the proposal and the
// approval, refuses a plan whose state basis changed, adds the values the
// plan marks sensitive to the masker, runs apply <planfile>, and wipes the
// plaintext however the apply ends. A stale plan ends the run as stale and
// is never planned again by itself.
func (s *Server) applyPhase(ctx context.Context, x *execution) {
	id := x.run.ID
	defer s.dropSealedPlan(id)
	run, err := s.db.UpdateRun(id, func(r *store.Run) error {
		if r.Proposal == nil || r.Proposal.Stage != "plan" {
			return errors.New("there is no saved plan to apply")
		}
		if r.Proposal.Used {
			return errors.New("this saved plan was already applied once; submit the apply again")
		}
		r.Proposal.Used = true
		return nil
	})
	if err != nil {
		x.say("refusing to apply: %v", err)
		x.finish(StatusFailed, "Refused to apply: "+err.Error(), -1)
		return
	}
	p := run.Proposal
	approved := approvedDigest(run)
	if approved == "" || approved != p.Digest {
		msg := fmt.Sprintf("Refused to apply: the approval released %q but the proposal's plan is %s; nothing was applied. Submit the apply again.", approved, p.Digest)
		x.say("%s", msg)
		x.finish(StatusFailed, msg, -1)
		return
	}
	blob, err := s.db.GetBlob(blobPlan, id)
	if err != nil {
		msg := fmt.Sprintf("Refused to apply: the sealed plan is missing (%v); nothing was applied. Submit the apply again.", err)
		x.say("%s", msg)
		x.finish(StatusFailed, msg, -1)
		return
	}
	plain, digest, err := seal.Open(s.key, id, blob)
	if err != nil || digest != approved {
		if err == nil {
			err = fmt.Errorf("its digest %s is not the approved %s", digest, approved)
		}
		msg := fmt.Sprintf("Refused to apply: the sealed plan does not open as this run's approved plan (%v); nothing was applied.", err)
		x.say("%s", msg)
		x.finish(StatusFailed, msg, -1)
		return
	}
	basis, err := x.currentBasis(ctx)
	if err != nil && ctx.Err() != nil {
		clear(plain)
		x.stopped("state pull", exec.Result{ExitCode: -1}, ctx.Err())
		return
	}
	if err != nil {
		clear(plain)
		msg := fmt.Sprintf("Refused to apply: %v, so the plan's basis could not be checked; nothing was applied.", err)
		x.say("%s", msg)
		x.finish(StatusFailed, msg, -1)
		return
	}
	if basis != (stateBasis{Lineage: p.Lineage, Serial: p.Serial}) {
		clear(plain)
		msg := staleMessage(run)
		x.say("the state changed after the plan was made (lineage %q serial %d, now lineage %q serial %d); refusing the saved plan", p.Lineage, p.Serial, basis.Lineage, basis.Serial)
		x.finish(StatusStale, msg, -1)
		return
	}
	planPath, err := seal.WriteFile(x.private, planFileName, plain)
	clear(plain)
	if err != nil {
		x.finish(StatusFailed, fmt.Sprintf("writing the saved plan into the run's private directory: %v", err), -1)
		return
	}
	defer wipe(s, planPath)

	// The values the plan marks sensitive join the masker before the tool
	// prints anything.
	planJSON, res, err := exec.Capture(ctx, exec.Invocation{
		Binary: x.binary, Dir: x.dir, Env: x.env, Args: exec.ShowJSONArgs(planPath),
		Output: x.out, Grace: s.cfg.Server.CancelGrace,
	})
	if x.stopped("show -json", res, err) {
		return
	}
	sens, err := gate.SensitiveValues(planJSON)
	clear(planJSON)
	if err != nil {
		msg := fmt.Sprintf("Refused to apply: the saved plan's sensitive values could not be read (%v), so they could not be masked; nothing was applied.", err)
		x.say("%s", msg)
		x.finish(StatusFailed, msg, -1)
		return
	}
	x.masker.Add(sens...)

	// Check the file once more just before the tool starts.
	if d, err := seal.FileDigest(planPath); err != nil || d != approved {
		msg := fmt.Sprintf("Refused to apply: the plan file in the private directory is not the approved %s; nothing was applied.", approved)
		x.say("%s", msg)
		x.finish(StatusFailed, msg, -1)
		return
	}
	if _, err := s.db.UpdateRun(id, func(r *store.Run) error { r.Message = "Applying the approved plan " + approved; return nil }); err == nil {
		s.broker.runChanged()
	}
	res, err = x.step(ctx, "apply", exec.ApplyPlanArgs(planPath))
	if err == nil && res.Stale && res.ExitCode != 0 {
		msg := staleMessage(run)
		x.say("%s", msg)
		x.finish(StatusStale, msg, res.ExitCode)
		return
	}
	if x.stopped("apply", res, err) {
		return
	}
	msg := "Applied the approved plan " + approved + "."
	if run.Approvals[len(run.Approvals)-1].Decision == "pass" {
		msg = "Applied the saved plan " + approved + "; no rule held it."
	}
	x.finish(StatusSucceeded, msg, res.ExitCode)
}

func staleMessage(r store.Run) string {
	return "The saved plan is stale: the state changed after the plan was made, so it was refused and nothing was applied. The proposal has to be made again: submit the apply again, and it is planned afresh."
}

// Approve releases a held run for who, binding the approval to digest: the
// held proposal's plan digest (or, for a run held before planning, its
// request digest). It refuses a wrong or superseded digest, a proposal
// already used, an identity without the approve role or not among the
// approvers the holding rules name, agents, and (unless the configuration
// allows it) the requester approving their own run.
func (s *Server) Approve(ctx context.Context, who Identity, id, digest string) (store.Run, error) {
	if who.Agent {
		return store.Run{}, errorf(ErrForbidden, "agents cannot approve; a person with the approve role must")
	}
	if !who.Has("approve") {
		return store.Run{}, errorf(ErrForbidden, "%s may not approve: the approve role is missing from user %q in the configuration", who.Name, who.Name)
	}
	if err := seal.CheckDigest(digest); err != nil {
		return store.Run{}, errorf(ErrInvalid, "%v", err)
	}
	var stage string
	run, err := s.db.UpdateRun(id, func(r *store.Run) error {
		if r.Status != StatusAwaitingApproval || r.Proposal == nil {
			return notHeld(*r)
		}
		p := r.Proposal
		if digest != p.Digest {
			return errorf(ErrConflict, "digest %s is not the digest of run %s's held proposal (it may be another run's, or a superseded plan's); read the plan with `show %s`, then approve the digest shown there", digest, r.ID, r.ID)
		}
		if p.Used {
			return errorf(ErrConflict, "run %s's plan was already used", r.ID)
		}
		if r.Requester == who.Name && r.RequesterKind == "user" && !s.cfg.Server.AllowSelfApproval {
			return errorf(ErrForbidden, "%s asked for run %s and cannot approve it; another approver must (allow_self_approval is off)", who.Name, r.ID)
		}
		for _, h := range p.Holds {
			if len(h.Approvers) > 0 && !slices.Contains(h.Approvers, who.Name) {
				return errorf(ErrForbidden, "%s is not among the approvers rule %s names (%s); every rule that holds this run must be released by one of its own approvers", who.Name, h.Rule, strings.Join(h.Approvers, ", "))
			}
		}
		stage = p.Stage
		r.Approvals = append(r.Approvals, store.Approval{By: who.Name, Digest: digest, Stage: p.Stage, Decision: "approve", At: time.Now()})
		r.Status = StatusQueued
		if p.Stage == "plan" {
			r.Phase = phaseApply
			r.Message = fmt.Sprintf("Approved by %s; the saved plan %s is queued to apply.", who.Name, digest)
		} else {
			r.Phase = phasePlan
			r.Proposal = nil
			r.Message = fmt.Sprintf("Released by %s; queued to plan. The apply its plan proposes is held again.", who.Name)
		}
		return nil
	})
	if err != nil {
		return store.Run{}, err
	}
	s.audit(id, who.Name, "approve", stage+" "+digest)
	wd, err := s.workdir(run)
	if err != nil {
		s.finish(id, StatusFailed, err.Error(), -1)
		return s.db.GetRun(id)
	}
	s.sched.enqueue(job{runID: id, workdir: wd})
	s.broker.runChanged()
	return run, nil
}

// notHeld is the refusal for approving or rejecting a run that does not
// wait for approval, saying what became of it.
func notHeld(r store.Run) error {
	var last *store.Approval
	if n := len(r.Approvals); n > 0 {
		last = &r.Approvals[n-1]
	}
	switch {
	case r.Status == StatusSucceeded && r.Proposal != nil && r.Proposal.Used:
		return errorf(ErrConflict, "run %s already applied its plan; an approval cannot be given twice", r.ID)
	case isFinal(r.Status):
		return errorf(ErrConflict, "run %s is %s, not awaiting approval; submit it again for a new proposal", r.ID, r.Status)
	case last != nil && last.Decision == "approve" && last.By != "rules":
		return errorf(ErrConflict, "run %s was already released by %s and is %s", r.ID, last.By, r.Status)
	}
	return errorf(ErrConflict, "run %s is %s, not awaiting approval", r.ID, r.Status)
}

func namedApprovers(hs []store.Hold) []string {
	var names []string
	for _, h := range hs {
		for _, a := range h.Approvers {
			if !slices.Contains(names, a) {
				names = append(names, a)
			}
		}
	}
	return names
}

// Reject ends a held run with a reason; its sealed plan is dropped.
func (s *Server) Reject(ctx context.Context, who Identity, id, reason string) (store.Run, error) {
	if who.Agent || !who.Has("approve") {
		return store.Run{}, errorf(ErrForbidden, "%s may not reject: only people with the approve role can", who.Name)
	}
	run, err := s.db.UpdateRun(id, func(r *store.Run) error {
		if r.Status != StatusAwaitingApproval || r.Proposal == nil {
			return notHeld(*r)
		}
		r.Approvals = append(r.Approvals, store.Approval{By: who.Name, Stage: r.Proposal.Stage, Digest: r.Proposal.Digest, Decision: "reject", Reason: reason, At: time.Now()})
		r.Status = StatusRejected
		r.Message = fmt.Sprintf("Rejected by %s: %s", who.Name, reason)
		r.FinishedAt = time.Now()
		return nil
	})
	if err != nil {
		return store.Run{}, err
	}
	s.dropSealedPlan(id)
	s.audit(id, who.Name, "reject", reason)
	s.broker.runChanged()
	return run, nil
}

// Cancel stops a run: a queued one never starts; a running one's tool gets
// an interrupt first and a kill only after the grace period; a held one is
// ended and its sealed plan dropped.
func (s *Server) Cancel(ctx context.Context, who Identity, id string) (store.Run, error) {
	r, err := s.db.GetRun(id)
	if err != nil {
		return store.Run{}, s.notFound(id, err)
	}
	own := r.Requester == who.Name
	if !own && (who.Agent || !who.Has("approve")) {
		return store.Run{}, errorf(ErrForbidden, "%s may cancel only runs they asked for; run %s was asked for by %s (people with the approve role may cancel any run)", who.Name, id, r.Requester)
	}
	if isFinal(r.Status) {
		return store.Run{}, errorf(ErrConflict, "run %s already ended (%s)", id, r.Status)
	}
	for attempt := 0; attempt < 3; attempt++ {
		if _, signalled := s.sched.cancel(id); signalled {
			s.audit(id, who.Name, "cancel", "interrupt sent")
			return s.db.GetRun(id)
		}
		// Not executing: end it only from a state where nothing runs, in one
		// transaction, so an approval or the scheduler cannot slip between.
		msg := "Cancelled by " + who.Name + " before it ran further."
		_, err := s.db.TransitionRun(id, []string{StatusAwaitingApproval, StatusQueued}, func(r *store.Run) error {
			r.Status, r.Message, r.FinishedAt = StatusCancelled, msg, time.Now()
			return nil
		})
		if err == nil {
			s.dropSealedPlan(id)
			s.audit(id, who.Name, StatusCancelled, msg)
			s.broker.runChanged()
			return s.db.GetRun(id)
		}
		if !errors.Is(err, store.ErrConflict) {
			return store.Run{}, err
		}
		// It started meanwhile: interrupt it on the next pass.
	}
	r, err = s.db.GetRun(id)
	if err != nil {
		return store.Run{}, err
	}
	if isFinal(r.Status) {
		return r, nil
	}
	return store.Run{}, errorf(ErrConflict, "run %s is %s and could not be cancelled right now; try again", id, r.Status)
}

func (s *Server) notFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(ErrNotFound, "no run %q; `runs` lists them", id)
	}
	return err
}
