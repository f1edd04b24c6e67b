package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/scan"
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
	want, err := scan.PlanIdentity(plain)
	if err != nil {
		return end(StatusFailed, -1, "Refused to apply: the saved plan's configuration snapshot cannot be read (%v), so the working directory cannot be checked against it; nothing ran and nothing was applied.", err)
	}
	// The files under the plan's working directory: OpenTofu evaluates the
	// root module's encryption and backend with their values in every
	// process, and the plan does not store them.
	var sums map[string]string
	if x.run.Proposal != nil {
		sums = x.run.Proposal.StartFiles
	}
	if want, err = want.WithStartFiles(sums); err != nil {
		return end(StatusFailed, -1, "Refused to apply: %v, so the working directory cannot be checked against the plan; nothing ran and nothing was applied.", err)
	}
	x.planned = &want
	return x.checkPlanned()
}

// checkPlanned checks, before a process of the apply phase starts, that
// the working directory the process starts in holds the configuration the
// plan was made from (planned); an *outcome naming what changed when it
// does not. Runs with nothing planned yet pass.
func (x *execution) checkPlanned() error {
	if x.planned == nil {
		return nil
	}
	got, err := scan.DirIdentity(x.procDir())
	if err != nil {
		return end(StatusFailed, -1, "Refused before %s: the configuration in %s cannot be read to check it against the one the plan was made from (%v); nothing more ran and nothing was applied. Fix the checkout, then submit the run again.", x.current, x.run.Command, err)
	}
	return changedSince(x.planned, got, x.current, x.run.Command)
}

// changedSince is the *outcome refusing the process step when the
// configuration got in working directory command differs from want, the
// one the plan was made from; nil when they are the same.
func changedSince(want *scan.Identity, got scan.Identity, step, command string) error {
	diff := want.Diff(got)
	if len(diff) == 0 {
		return nil
	}
	return end(StatusFailed, -1, "Refused before %s: the configuration in %s is not the one the plan was made from: %s. Nothing more ran and nothing was applied; submit the run again to plan what the checkout holds now.", step, command, strings.Join(diff, "; "))
}

// A scanned run's processes (init, the plan, show -json, a state pull) run
// in the private copy the scan read, never in the checkout: once the scan
// passes or a person releases its hold, enterCopy checks that the checkout
// still holds what the copy holds (sameConfiguration: a change is named
// and ends the run before any process starts), copies the run's current
// local state into the copy, and the run moves there.

// copyEntry is what enterCopy needs: the tree the scan copied (root: the
// checkout, or a pull request's exported commit) and the copy of it, the
// working directory relative to both, the checkout's own working directory
// and checkout (whose local state the run plans from), the data directory
// (left out of root's walk) and the run's environment (TF_WORKSPACE).
type copyEntry struct {
	root, copyRoot, rel string
	liveDir, checkout   string
	dataDir             string
	env                 []string
}

// enterCopy makes the scan's private copy ready for the run's processes
// and returns the working directory in it: the configuration must be
// unchanged since the scan read it, and the checkout's local state of the
// selected workspace is copied in, read only.
func enterCopy(in copyEntry) (string, error) {
	if err := sameConfiguration(in.root, in.copyRoot, in.dataDir); err != nil {
		return "", err
	}
	wd := filepath.Join(in.copyRoot, in.rel)
	if err := copyLocalState(in.liveDir, in.checkout, in.copyRoot, wd); err != nil {
		return "", err
	}
	if err := copyWorkspace(in.liveDir, wd, envValue(in.env, "TF_WORKSPACE")); err != nil {
		return "", err
	}
	return wd, nil
}

// copyWorkspace carries the workspace selected in the checkout's working
// directory liveDir (its .terraform/environment, or TF_WORKSPACE when
// set) into the copy's working directory wd, with that workspace's local
// state (terraform.tfstate.d/NAME/terraform.tfstate) read only. A name
// that is not one path element is refused.
func copyWorkspace(liveDir, wd, fromEnv string) error {
	ws := fromEnv
	if b, err := os.ReadFile(filepath.Join(liveDir, ".terraform", "environment")); err == nil {
		if err := os.MkdirAll(filepath.Join(wd, ".terraform"), 0o700); err != nil {
			return fmt.Errorf("carrying the selected workspace: %w", err)
		}
		if err := os.WriteFile(filepath.Join(wd, ".terraform", "environment"), b, 0o600); err != nil {
			return fmt.Errorf("carrying the selected workspace: %w", err)
		}
		ws = cmp.Or(fromEnv, strings.TrimSpace(string(b)))
	}
	if ws == "" || ws == "default" {
		return nil
	}
	if ws == "." || ws == ".." || strings.ContainsAny(ws, `/\`+"\x00") {
		return end(StatusRefused, -1, "The selected workspace %q is not a workspace name; nothing planned.", ws)
	}
	src := filepath.Join(liveDir, "terraform.tfstate.d", ws, "terraform.tfstate")
	if _, err := os.Stat(src); err != nil {
		return nil // none yet, or another backend's workspace
	}
	dir := filepath.Join(wd, "terraform.tfstate.d", ws)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("copying the workspace's state: %w", err)
	}
	dest := filepath.Join(dir, "terraform.tfstate")
	if err := os.Remove(dest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("copying the workspace's state: %w", err)
	}
	if err := copyFile(src, dest); err != nil {
		return fmt.Errorf("copying the workspace's state: %w", err)
	}
	return os.Chmod(dest, 0o400)
}

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
	wd, err := enterCopy(copyEntry{root: root, copyRoot: x.copyDir(), rel: rel, liveDir: x.liveDir(), checkout: p.Path,
		dataDir: x.s.config().Server.DataDir, env: x.env})
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
	if Kind(r.Kind) != KindReconcile || r.ReconcileOf == "" {
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
