package server

import (
	"context"
	"strings"

	"github.com/switchtender/switchtender/scan"
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
