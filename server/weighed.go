package server

import (
	"context"
	"fmt"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// A run executes only the configuration that was weighed (DESIGN
// invariant 8; docs/configuration-identity.md). After a release, every
// process of the apply phase (state pull for the state's sensitive values
// and the basis check, show -json, apply PLANFILE) runs in the working
// directory, where the state, .terraform and the lock file legitimately
// live, but only while the files there that decide what OpenTofu runs at
// start are the ones the saved plan was made from: the root module's
// configuration files (backend, cloud and encryption blocks, override
// files, .tofu shadowing .tf) byte for byte, and what the dependency lock
// file locks. They are compared with the saved plan's own snapshot before
// the first process of the phase and again right before each one; any
// difference ends the run, naming it, before the process starts.

// configStep reads the identity of the configuration the released plan
// was made from out of the sealed plan, and checks the working directory
// against it before any process of the apply phase starts.
func configStep(ctx context.Context, x *execution) error {
	plain, err := x.s.openSealedPlan(x.run.ID, releasedDigest(x.run))
	if err != nil {
		return err
	}
	defer clear(plain)
	// The files under the plan's working directory: OpenTofu evaluates the
	// root module's encryption and backend with their values in every
	// process, and the plan does not store them.
	var sums map[string]string
	if x.run.Proposal != nil {
		sums = x.run.Proposal.StartFiles
	}
	if x.planned, err = runstep.Weigh(plain, sums); err != nil {
		return err
	}
	return x.checkPlanned()
}

// checkPlanned checks, before a process of the apply phase starts, that
// the working directory the process starts in holds the configuration the
// plan was made from (planned); an *outcome naming what changed when it
// does not. Runs with nothing planned yet pass.
func (x *execution) checkPlanned() error {
	return runstep.CheckPlanned(x.planned, x.procDir(), x.current, x.run.Command)
}

// A scanned run's processes (init, the plan, show -json, a state pull) run
// in the private copy the scan read, never in the checkout: once the scan
// passes or a person releases its hold, enterCopy checks that the checkout
// still holds what the copy holds (sameConfiguration: a change is named
// and ends the run before any process starts), copies the run's current
// local state into the copy, and the run moves there.

// enterCopyStep moves a scanned run into the scan's private copy
// (enterCopy): every process after it starts there.
func enterCopyStep(ctx context.Context, x *execution) error {
	root, rel, err := x.scanRoot()
	if err != nil {
		return err
	}
	p, ok := x.s.config().Projects[x.run.Project]
	if !ok {
		return fmt.Errorf("project %q is no longer configured", x.run.Project)
	}
	wd, err := enterCopy(copyEntry{Root: root, CopyRoot: x.copyDir(), Rel: rel, LiveDir: x.liveDir(), Checkout: p.Path,
		DataDir: x.s.config().Server.DataDir, Env: x.env})
	if err != nil {
		return err
	}
	x.say("scan: the checkout holds what the scan read; every process of this run runs in the scan's private copy")
	return x.moveTo(x.copyDir(), wd)
}

// liveDir is the run's working directory in the checkout, as resolved at
// launch (the directory its local state lives in), wherever it runs now.
func (x *execution) liveDir() string {
	if x.run.Workdir != "" {
		return x.run.Workdir
	}
	wd, _ := x.s.workdir(x.run)
	return wd
}

// plannedInCopy reports whether r's saved plan was made in a scan's
// private copy rather than in the working directory it applies in: a
// reconcile of a check the scan exempted. Its apply phase runs init in the
// working directory first (applyInitStep), which no scanned run did.
func (s *Server) plannedInCopy(r store.Run) bool {
	if r.Kind != KindReconcile || r.ReconcileOf == "" {
		return false
	}
	check, err := s.db.GetRun(r.ReconcileOf)
	return err == nil && check.Scan != nil
}

// applyInitStep initializes the working directory for the apply phase of a
// plan made in a scan's private copy, after configStep found the root
// module and lock file to be the plan's: the modules the plan's snapshot
// holds are what apply reads, and -lockfile=readonly keeps the lock file
// the plan was made with.
func applyInitStep(ctx context.Context, x *execution) error {
	_, err := x.tool(ctx, "init", append(exec.InitArgs(true), "-lockfile=readonly"))
	return err
}
