package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// The words a run's record is written in: where a run stands (Status), what
// it is for (Kind), what a proposal releases (Stage), which part of a run
// executes next (Phase), what an approval says (Decision) and who asked for
// a run (RequesterKind). The stored fields of Run, Proposal and Approval
// have these types; each encodes in JSON as its plain string.

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

// Transitions returns a copy of the transition table: for every non-final
// status, the statuses that may follow it, in the order `help` lists them.
func Transitions() map[Status][]Status {
	out := maps.Clone(transitions)
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	return out
}

// Next lists the statuses that may follow s; none for a final status.
func (s Status) Next() []Status { return slices.Clone(transitions[s]) }

// Final reports whether nothing may follow s.
func (s Status) Final() bool { _, ok := transitions[s]; return !ok }

// Active reports whether a run in s goes on without a person acting.
func (s Status) Active() bool { return s == StatusQueued || s == StatusRunning }

// TransitionError is a move between two statuses the table does not allow.
type TransitionError struct {
	From, To Status
}

// Error names both statuses: a run that already ended, or one whose status
// does not allow the move.
func (e *TransitionError) Error() string {
	if e.From.Final() {
		return fmt.Sprintf("the run already ended (%s); it cannot become %s", e.From, e.To)
	}
	return fmt.Sprintf("a run that is %s cannot become %s", e.From, e.To)
}

// To reports whether a run in s may move to next: nil, or a
// *TransitionError that names both statuses.
func (s Status) To(next Status) error {
	if slices.Contains(transitions[s], next) {
		return nil
	}
	return &TransitionError{From: s, To: next}
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
	PhasePlan  Phase = "plan"
	PhaseApply Phase = "apply"
)

// Decision is what an approval record says.
type Decision string

// Decisions on a proposal.
const (
	DecisionApprove Decision = "approve" // a person released one or more holding rules
	DecisionReject  Decision = "reject"  // a person turned the proposal down
	DecisionPass    Decision = "pass"    // no rule held the saved plan (By is "rules")
)

// RequesterKind is who launched a run: a person or an agent.
type RequesterKind string

// Requester kinds, as the gate, the JSON contract and the text name them.
const (
	RequesterPerson RequesterKind = "person" // a user of the config
	RequesterAgent  RequesterKind = "agent"  // an agent of the config
	RequesterForge  RequesterKind = "forge"  // a forge account: a pull request's author or merger (docs/forges.md)
)

// requesterUser is the word runs stored before "person" was written say
// for a person.
const requesterUser = "user"

// UnmarshalJSON reads a JSON string into k; the old word "user" reads as
// [RequesterPerson], so a data directory written before keeps its runs'
// requesters. Any other string is kept as it is.
func (k *RequesterKind) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("requester_kind: %w", err)
	}
	if s == requesterUser {
		s = string(RequesterPerson)
	}
	*k = RequesterKind(s)
	return nil
}
