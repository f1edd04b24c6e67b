package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// A pull request's plan (launch TEMPLATE --dry-run --ref REF) plans the
// commit REF named at launch in a private tree under the run's directory,
// never touching the checkout, against the state the checkout's runs use
// (a read-only copy of a local state file). Its configuration is always
// scanned first, and a finding refuses it: no tofu plan starts (spec "What a
// plan runs, and what the gate reads": "a pull request's plan of it is
// refused rather than run").

// resolveRef resolves a launch's --ref in the template's checkout: the
// commit it names, for a dry run only.
func (s *Server) resolveRef(ctx context.Context, project, ref string, kind Kind) (*store.Commit, error) {
	if kind != KindPlan {
		return nil, errorf(ErrInvalid, "--ref plans a pull request's commit, so it goes with --dry-run only; a real run applies what the checkout holds")
	}
	p, ok := s.config().Projects[project]
	if !ok {
		return nil, errorf(ErrNotFound, "project %q is no longer configured", project)
	}
	if !vcs.IsRepository(ctx, p.Path) {
		return nil, errorf(ErrInvalid, "project %q's checkout %s is not a git repository, so --ref has no commit to plan; drop --ref to plan what the checkout holds", project, p.Path)
	}
	sha, err := vcs.Resolve(ctx, p.Path, ref)
	if err != nil {
		return nil, errorf(ErrInvalid, "--ref: %v", err)
	}
	return &store.Commit{Ref: ref, SHA: sha}, nil
}

// recordCommit records the commit a run in a git checkout runs: HEAD and
// whether the working tree is dirty, when its plan phase starts. A checkout
// that is not a git repository records nothing.
func (x *execution) recordCommit(ctx context.Context) {
	if x.run.Commit != nil && x.run.Commit.Ref != "" || x.run.Phase != phasePlan {
		return
	}
	c, err := vcs.Head(ctx, x.dir)
	if err != nil {
		if !errors.Is(err, vcs.ErrNotRepository) {
			x.say("the checkout's commit could not be read: %v", err)
		}
		return
	}
	run, err := x.s.db.UpdateRun(x.run.ID, func(r *store.Run) error {
		r.Commit = &store.Commit{SHA: c.SHA, Dirty: c.Dirty}
		return nil
	})
	if err != nil {
		x.s.log.Error("recording a run's commit", "run", x.run.ID, "err", err)
		return
	}
	x.run = run
}

// exportStep writes the pull request's commit into the run's private
// directory and moves the run's working directory there, with a read-only
// copy of the checkout's local state file when it has one.
func exportStep(ctx context.Context, x *execution) error {
	p, ok := x.s.config().Projects[x.run.Project]
	if !ok {
		return fmt.Errorf("project %q is no longer configured; nothing ran", x.run.Project)
	}
	c := x.run.Commit
	project, wd, err := exportCommit(ctx, p.Path, x.dir, x.run.Command, *c, filepath.Join(x.private, treeName))
	if err != nil {
		return err
	}
	x.say("planning commit %s (%s) in a private tree; the checkout is not touched", c.SHA, c.Ref)
	return x.moveTo(project, wd)
}

// moveTo makes the run execute in wd inside the private tree: its processes
// start there and the checkout is no longer checked before each step.
func (x *execution) moveTo(tree, wd string) error {
	f, err := os.Open(wd)
	if err != nil {
		return fmt.Errorf("opening the private tree's working directory: %w", err)
	}
	x.closeDir()
	x.dirFile, x.dir, x.tree = f, wd, tree
	return nil
}
