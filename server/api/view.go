package api

import (
	"time"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// RunView is a run as commands show it (`show`, `runs`, and what launch,
// approve, reject, cancel and rerun print): never the sealed answers, the
// plan text only where asked for, and what the server knows about the run
// beyond the stored record: who it waits for, whether its plan is stale,
// whether a newer proposal exists.
type RunView struct {
	store.Run
	SealedVars    []byte    `json:"sealed_vars,omitempty"`    // always empty: hides the stored field
	SealedAnswers []byte    `json:"sealed_answers,omitempty"` // always empty: hides the stored field
	StatusAt      *struct{} `json:"status_at,omitempty"`      // always nil: hides the stored field (not in docs/json.md)
	DryPlan       *struct{} `json:"dry_plan,omitempty"`       // always nil: hides the stored field, which Plan says
	// Plan is the saved plan the run made, as measured (PlanOf): a dry
	// run's, a gated run's plan-stage proposal's, a drift check's kept
	// plan's digest and counts; nil when it saved none. JSON writes
	// PlanOf(Run) when it is nil.
	Plan *SavedPlan `json:"plan,omitempty"`
	// Waiting is the command that releases the held proposal, while it is held.
	Waiting string `json:"waiting,omitempty"`
	// WaitingForYou is true when the caller can release something of the
	// held proposal now.
	WaitingForYou bool `json:"waiting_for_you"`
	// Stale is true when the proposal's plan can never apply: the state
	// changed after it was made. StaleReason says what changed and what to do.
	Stale       bool   `json:"stale"`
	StaleReason string `json:"stale_reason,omitempty"`
	// Unapprovable says, for a held run that can never be released, why
	// (the sealing key cannot open its saved plan or secret answers) and
	// what to do; such a run offers no approve command (Waiting is empty).
	Unapprovable string `json:"unapprovable,omitempty"`
	// Holds lists the rules that hold the proposal: released ones with who
	// released them, the others with whom they wait for.
	Holds []HoldView `json:"holds,omitempty"`
	// NewerProposal is the ID of a newer held or applied proposal for the
	// same working directory, or empty.
	NewerProposal string `json:"newer_proposal,omitempty"`
	// Counts is the plan's counts in tofu's words ("N to add, N to change,
	// N to destroy"), for a saved plan.
	Counts string `json:"counts,omitempty"`
	// Reconcile says, for a drift check, whether a reconcile can still be
	// proposed from it and, if not, why not.
	Reconcile string `json:"reconcile,omitempty"`
	// Findings are the configuration scan's findings, by address with
	// file:line and reason; empty when the run was not scanned or the scan
	// found nothing (scan says which).
	Findings []store.Finding `json:"findings"`
	// WaitsBehind says, for a queued run, what it waits for: "waiting
	// behind run 31 in the same working directory".
	WaitsBehind string `json:"waits_behind,omitempty"`
	// Lookalikes marks the proposal's addresses (a drift check's plan's,
	// for a check) that a person could take for another: a hidden or
	// confusable character, or the same look as another address of the
	// plan (screentext.Lookalikes).
	Lookalikes []screentext.Lookalike `json:"lookalikes,omitempty"`
	// Changes is the change set of the run's saved plan (its proposal's,
	// or the plan a drift check kept; docs/json.md "changes"), where the
	// plan text is shown too; nil when the run has none. It is shared with
	// the service's cache: never change it.
	Changes *planview.ChangeSet `json:"changes,omitempty"`
	// JSONPhase is the phase JSON shows (the service's jsonPhase).
	JSONPhase string `json:"-"`
}

// HoldView is one rule that holds a proposal, as `show` and the console
// present it: who it waits for, or who released it.
type HoldView struct {
	Rule       string   `json:"rule"`
	Reason     string   `json:"reason"`
	Approvers  []string `json:"approvers"`             // empty: anyone with the approve role
	ReleasedBy string   `json:"released_by,omitempty"` // who released it; empty while it holds
	WaitsFor   string   `json:"waits_for,omitempty"`   // a phrase naming who may release it, while it holds
}

// WorkerView is one worker as `workers` prints it.
type WorkerView struct {
	Name     string    `json:"name"`
	Pool     string    `json:"pool"`
	Version  string    `json:"version"`
	State    string    `json:"state"` // idle, running, draining, disconnected
	Run      string    `json:"run"`   // the run it holds a lease for, or ""
	LastSeen time.Time `json:"last_seen"`
}
