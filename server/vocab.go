package server

import (
	"errors"

	"github.com/switchtender/switchtender/store"
)

// The run vocabulary lives in package store; these short names keep
// package server's code as it reads.

// Status is where a run stands ([store.Status]).
type Status = store.Status

// Kind is what a run is for ([store.Kind]).
type Kind = store.Kind

// Stage is what a proposal asks to release ([store.Stage]).
type Stage = store.Stage

// Phase is which part of a run executes next ([store.Phase]).
type Phase = store.Phase

// Decision is what an approval record says ([store.Decision]).
type Decision = store.Decision

// RequesterKind is who launched a run ([store.RequesterKind]).
type RequesterKind = store.RequesterKind

// Run statuses.
const (
	StatusQueued           = store.StatusQueued
	StatusRunning          = store.StatusRunning
	StatusAwaitingApproval = store.StatusAwaitingApproval
	StatusSucceeded        = store.StatusSucceeded
	StatusFailed           = store.StatusFailed
	StatusCancelled        = store.StatusCancelled
	StatusInterrupted      = store.StatusInterrupted
	StatusRejected         = store.StatusRejected
	StatusRefused          = store.StatusRefused
	StatusStale            = store.StatusStale
)

// Run kinds.
const (
	KindApply     = store.KindApply
	KindPlan      = store.KindPlan
	KindCheck     = store.KindCheck
	KindReconcile = store.KindReconcile
)

// Proposal stages.
const (
	StageRequest = store.StageRequest
	StageScan    = store.StageScan
	StagePlan    = store.StagePlan
)

// Phases.
const (
	phasePlan  = store.PhasePlan
	phaseApply = store.PhaseApply
)

// Decisions on a proposal.
const (
	DecisionApprove = store.DecisionApprove
	DecisionReject  = store.DecisionReject
	DecisionPass    = store.DecisionPass
)

// Requester kinds.
const (
	RequesterPerson = store.RequesterPerson
	RequesterAgent  = store.RequesterAgent
)

// conflictOf is err with a *store.TransitionError in it made a coded
// ErrConflict with the same sentence; any other err passes as it is.
func conflictOf(err error) error {
	var te *store.TransitionError
	if errors.As(err, &te) {
		return &Error{Code: ErrConflict, Msg: te.Error()}
	}
	return err
}
