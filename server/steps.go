package server

import (
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
)

// Package server's short names for what both executors share (package
// runstep).

// outcome ends a run's steps with a status and a sentence for people.
type outcome = runstep.Outcome

// stepFailed is a tool process that exited non-zero.
type stepFailed = runstep.StepFailed

// sentenceError is an error that is a whole sentence for people.
type sentenceError = runstep.SentenceError

// end is an *outcome ending the run with status, exit code and sentence.
var end = runstep.End

// ctx0 reports whether err is a context's end.
var ctx0 = runstep.IsContextEnd

// Names of files in a run's private directory (DataDir/runs/ID, mode 0700).
const (
	planFileName = runstep.PlanFileName // the saved plan, plaintext only while a tool reads it
	planJSONName = runstep.PlanJSONName // never written; listed so a stray copy is wiped at start
	scanCopyName = runstep.ScanCopyName // the gate's private copy of the configuration
	treeName     = runstep.TreeName     // a pull request's exported commit
)

// Why a run is scanned.
const (
	scanForExemption   = runstep.ScanForExemption
	scanForPullRequest = runstep.ScanForPullRequest
)

// Bounds on a scan's evidence as a run records it.
const (
	maxFindings      = runstep.MaxFindings
	maxFindingReason = runstep.MaxFindingReason
)

// runMarkerVar is set in the environment of every process a run starts.
const runMarkerVar = runstep.RunMarkerVar

var (
	enterCopy           = runstep.EnterCopy
	scanRecord          = runstep.ScanRecord
	boundFindings       = runstep.BoundFindings
	capFindings         = runstep.CapFindings
	sameFindings        = runstep.SameFindings
	checkScanEnv        = runstep.CheckScanEnv
	scanCopyOf          = runstep.ScanCopy
	relInside           = runstep.RelInside
	verifyModules       = runstep.VerifyModules
	planConfigIsScanned = runstep.PlanConfigIsScanned
	exportCommit        = runstep.ExportCommit
	stopMarked          = runstep.StopMarked
	dirIdentity         = runstep.DirIdentity
	envValue            = runstep.EnvValue
	maskKeyFiles        = runstep.MaskKeyFiles
	localStatePath      = runstep.LocalStatePath
	planTooLarge        = relay.PlanTooLarge
)

// copyEntry is what enterCopy needs ([runstep.CopyEntry]).
type copyEntry = runstep.CopyEntry

// scanInput is what a scan of a run's configuration reads ([runstep.ScanInput]).
type scanInput = runstep.ScanInput
