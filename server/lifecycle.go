package server

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchtender/switchtender/store"
)

// Status is where a run stands. A run is active while queued or running,
// waits for people while awaiting_approval, and every other status is final:
// it never changes again. The transitions below are the only ones the server
// makes; [Status.To] guards each (after OTF's runstatus).
type Status string

// Run statuses, as `runs`, `show` and the console show them.
const (
	StatusQueued           Status = "queued"            // waits for a slot and its working directory
	StatusRunning          Status = "running"           // a step is executing
	StatusAwaitingApproval Status = "awaiting_approval" // a proposal waits for approvers
	StatusSucceeded        Status = "succeeded"         // final: the run did what it was for
	StatusFailed           Status = "failed"            // final: a step failed or could not start
	StatusCancelled        Status = "cancelled"         // final: someone cancelled it
	StatusInterrupted      Status = "interrupted"       // final: the server stopped while it executed; never re-run
	StatusRejected         Status = "rejected"          // final: an approver turned its proposal down
	StatusRefused          Status = "refused"           // final: a plan_gate denied the apply
	StatusStale            Status = "stale"             // final: the state changed after the plan; nothing applied
)

// transitions lists, for every non-final status, the statuses that may
// follow it. A final status has no entry: nothing follows it.
var transitions = map[Status][]Status{
	StatusQueued: {StatusRunning, StatusCancelled, StatusFailed},
	StatusRunning: {StatusAwaitingApproval, StatusSucceeded, StatusFailed, StatusCancelled,
		StatusInterrupted, StatusRefused, StatusStale},
	StatusAwaitingApproval: {StatusQueued, StatusRejected, StatusCancelled, StatusStale, StatusFailed},
}

// Final reports whether nothing may follow s.
func (s Status) Final() bool { _, ok := transitions[s]; return !ok }

// Active reports whether a run in s goes on without a person acting.
func (s Status) Active() bool { return s == StatusQueued || s == StatusRunning }

// To reports whether a run in s may move to next: nil, or a coded conflict
// that names both statuses.
func (s Status) To(next Status) error {
	if slices.Contains(transitions[s], next) {
		return nil
	}
	if s.Final() {
		return errorf(ErrConflict, "the run already ended (%s); it cannot become %s", s, next)
	}
	return errorf(ErrConflict, "a run that is %s cannot become %s", s, next)
}

// Kind is what a run is for.
type Kind string

// Run kinds, as launch names them.
const (
	KindApply     Kind = "apply"     // a real run
	KindPlan      Kind = "plan"      // a dry run
	KindCheck     Kind = "check"     // a drift check: a dry run that keeps a plan that finds drift
	KindReconcile Kind = "reconcile" // an apply of exactly the plan a drift check kept
)

// Stage is what a proposal asks to release.
type Stage string

// Proposal stages.
const (
	StageRequest Stage = "request" // held before anything plans; releasing it lets the run plan
	StageScan    Stage = "scan"    // the configuration scan found something before anything planned; releasing it lets the run plan exactly the scanned modules
	StagePlan    Stage = "plan"    // a saved plan; releasing it applies exactly that plan
)

// Phase is which part of a run executes next.
type Phase string

// Phases: the plan phase runs init and then the one-step apply, a dry run's
// plan or a gated apply's plan; the apply phase carries out a released saved
// plan.
const (
	phasePlan  Phase = "plan"
	phaseApply Phase = "apply"
)

// Decision is what an approval record says.
type Decision string

// Decisions on a proposal.
const (
	DecisionApprove Decision = "approve" // a person released one or more holding rules
	DecisionReject  Decision = "reject"  // a person turned the proposal down
	DecisionPass    Decision = "pass"    // no rule held the saved plan (By is "rules")
)

// statusOf is a stored run's status, typed.
func statusOf(r store.Run) Status { return Status(r.Status) }

// transition moves run id to status to in one store transaction: it reads
// the run, checks the move with [Status.To], lets fn (may be nil) change the
// run and veto the move with an error, sets the status (and FinishedAt for a
// final one), writes, and tells watchers. Every status change the server
// makes goes through here or [Server.transitionAudited].
func (s *Server) transition(id string, to Status, fn func(r *store.Run) error) (store.Run, error) {
	return s.transitionAudited(id, to, fn, nil)
}

// transitionAudited is transition that also appends the audit entry entry
// (may be nil: none) makes of the run as written, in the same transaction,
// so the move and its entry are stored together or not at all.
func (s *Server) transitionAudited(id string, to Status, fn func(r *store.Run) error, entry func(r store.Run) store.AuditEvent) (store.Run, error) {
	return s.updateAudited(id, func(r *store.Run) error {
		if err := statusOf(*r).To(to); err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
		if fn != nil {
			if err := fn(r); err != nil {
				return err
			}
		}
		return setStatus(r, to)
	}, entry)
}

// updateAudited updates run id with fn and appends the audit entry entry
// (may be nil: none) makes of the run as written, in one store
// transaction, then tells watchers. Its errors are coded (s.coded).
func (s *Server) updateAudited(id string, fn func(r *store.Run) error, entry func(r store.Run) store.AuditEvent) (store.Run, error) {
	var run store.Run
	err := s.db.Update(func(tx *store.Tx) error {
		var err error
		if run, err = tx.UpdateRun(id, fn); err != nil || entry == nil {
			return err
		}
		return tx.Audit(entry(run))
	})
	if err != nil {
		return store.Run{}, s.coded(id, err)
	}
	s.changed(run)
	return run, nil
}

// auditEvent is the audit entry of actor's action on run runID (""
// for none), stamped now.
func auditEvent(runID, actor, action, detail string) store.AuditEvent {
	return store.AuditEvent{At: time.Now(), RunID: runID, Actor: actor, Action: action, Detail: detail}
}

// changed tells watchers a run changed and keeps the held index current;
// every write of a status calls it.
func (s *Server) changed(r store.Run) {
	s.held.note(s.runDir(r), r)
	s.noteRun(r)
	s.broker.runChanged()
}

// setStatus moves r to status to, guarded by [Status.To], inside a store
// transaction the caller holds; it sets StatusAt, PrevStatus (for the
// operator log, never stored) and FinishedAt for a final status.
func setStatus(r *store.Run, to Status) error {
	if err := statusOf(*r).To(to); err != nil {
		return fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.PrevStatus, r.Status, r.StatusAt = r.Status, string(to), time.Now()
	if to.Final() {
		r.FinishedAt = r.StatusAt
	}
	return nil
}

// statusHelp is the README's table of statuses, for `help`: what each means
// and what may follow it.
func statusHelp() string {
	var b strings.Builder
	for _, st := range []Status{StatusQueued, StatusRunning, StatusAwaitingApproval, StatusSucceeded,
		StatusFailed, StatusCancelled, StatusInterrupted, StatusRejected, StatusRefused, StatusStale} {
		next := "nothing (final)"
		if n := transitions[st]; len(n) > 0 {
			var names []string
			for _, x := range n {
				names = append(names, string(x))
			}
			next = strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "  %-18s then: %s\n", st, next)
	}
	return b.String()
}
