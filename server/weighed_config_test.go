package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// Programs nobody weighed, placed in a checkout (testkit's markers).

func markerProgram(t *testing.T) (script, marker string) { return testkit.MarkerProgram(t) }

func markerEncryption(script string) string { return testkit.MarkerEncryption(script) }

func testTofu(t *testing.T) string { return testkit.Tofu(t) }

func assertWouldRun(t *testing.T, dir, marker string, args ...string) {
	t.Helper()
	testkit.AssertWouldRun(t, dir, marker, args...)
}

func assertNeverRan(t *testing.T, marker, when string) {
	t.Helper()
	testkit.AssertNeverRan(t, marker, when)
}

// A change to the configuration placed in the checkout after a gated
// apply's plan was held never runs once the apply is released: the run
// fails before any process of its apply phase starts (no state pull, no
// apply), naming what changed, whether it is a new file with an external
// key provider, an override file, a .tofu file shadowing the .tf the plan
// read, or a changed lock file. Before this check, an external key
// provider added after the approval ran during the server's own `tofu
// state pull`, with the run's credentials. Its neighbour, an apply with
// nothing changed, applies, and the state the apply itself writes does not
// trip it.
func TestAReleasedApplyRunsNoConfigurationChangedAfterItsPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	script, marker := markerProgram(t)
	dir := filepath.Join(h.project, "infra", "data")
	mainTF, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	lock := `provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.1"
  hashes = [
    "h1:sha256-of-something-else=",
  ]
}
`
	cases := []struct {
		name  string
		place func() // the change, made while the plan is held
		names string // what the failure names
		runs  bool   // whether the change runs the marker when OpenTofu starts there
	}{
		{"a new file with an external key provider", func() { writeFile(t, filepath.Join(dir, "enc.tf"), markerEncryption(script)) }, "enc.tf is new", true},
		{"an override file", func() { writeFile(t, filepath.Join(dir, "enc_override.tf"), markerEncryption(script)) }, "enc_override.tf is new", true},
		{"a .tofu file shadowing the .tf", func() {
			writeFile(t, filepath.Join(dir, "main.tofu"), string(mainTF)+markerEncryption(script))
		}, "main.tf is no longer read", true},
		{"a changed lock file", func() { writeFile(t, filepath.Join(dir, ".terraform.lock.hcl"), lock) }, ".terraform.lock.hcl changed", false},
	}
	for _, c := range cases {
		id := runIDOf(t, h.mustSSH("carol", "launch", "data", "--json"))
		h.waitStatus(id, StatusAwaitingApproval)
		digest := h.show("bob", id).Proposal.Digest
		c.place()
		if c.runs {
			assertWouldRun(t, dir, marker, "state", "pull", "-no-color")
		}
		h.mustSSH("bob", "approve", id, "--digest", digest)
		h.waitStatus(id, StatusFailed, StatusSucceeded, StatusStale)
		v := h.show("bob", id)
		log := h.mustSSH("bob", "log", id)
		if v.Run.Status != StatusFailed || !strings.Contains(v.Message, c.names) || !strings.Contains(v.Message, "not the one the plan was made from") {
			t.Fatalf("%s: run %s is %s: %s", c.name, id, v.Status, v.Message)
		}
		if strings.Contains(log, "$ tofu apply") || slices.Contains(stepNames(v), "apply") {
			t.Fatalf("%s: a process of the apply phase started:\n%s", c.name, log)
		}
		assertNeverRan(t, marker, "after the plan was held ("+c.name+")")
		if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err == nil {
			t.Fatalf("%s: a state was written; nothing should have been applied", c.name)
		}
		for _, f := range []string{"enc.tf", "enc_override.tf", "main.tofu", ".terraform.lock.hcl"} {
			os.Remove(filepath.Join(dir, f))
		}
	}

	// The neighbour: nothing changed, so the released plan applies, twice
	// over (the second plan made from the state the first apply wrote).
	var id string
	for i := range 2 {
		id = runIDOf(t, h.mustSSH("carol", "launch", "data", "--var", fmt.Sprintf("instances=%d", i+1), "--json"))
		h.waitStatus(id, StatusAwaitingApproval)
		h.mustSSH("bob", "approve", id, "--digest", h.show("bob", id).Proposal.Digest)
		h.waitStatus(id, StatusSucceeded, StatusFailed, StatusStale)
		if v := h.show("bob", id); v.Run.Status != StatusSucceeded {
			t.Fatalf("an apply with its configuration unchanged: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", id))
		}
		if n := h.stateCount(); n != i+1 {
			t.Fatalf("the state holds %d servers, want %d", n, i+1)
		}
	}
	if log := h.mustSSH("bob", "log", id); !strings.Contains(log, "Apply complete!") {
		t.Fatalf("the legitimate apply's log:\n%s", log)
	}
}

// A change placed in the checkout while a run is held at the scan stage
// never runs once a person releases the hold: the run is refused naming
// what changed, before init or any other process starts. Before, releasing the
// hold ran `tofu init` in the checkout as it was then, before the modules
// were verified against the scan, so an external key provider's command
// edited after the hold (not the one the approver read) ran at init. The
// same for a file added beside the one the scan read, and for a changed
// key provider command in the file it read.
func TestAReleasedScanHoldRunsNoConfigurationChangedAfterTheScan(t *testing.T) {
	t.Parallel()
	h := scanHarness(t, "")
	script, marker := markerProgram(t)
	cases := []struct {
		template, dir string
		place         func(dir string)
		names         string
	}{
		{"scan-deep", "infra/scan/deep", func(dir string) { writeFile(t, filepath.Join(dir, "enc.tf"), markerEncryption(script)) }, "infra/scan/deep/enc.tf is new"},
		{"scan-encryption", "infra/scan/encryption", func(dir string) { // the key provider the approver read, edited to run the marker
			writeFile(t, filepath.Join(dir, "main.tf"), markerEncryption(script)+`resource "terraform_data" "x" { input = "x" }`+"\n")
		}, "infra/scan/encryption/main.tf changed"},
	}
	for _, c := range cases {
		v := h.launchWait("alice", c.template, "--dry-run")
		if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageScan {
			t.Fatalf("%s: %s (%s); want held at the scan stage", c.template, v.Status, v.Message)
		}
		dir := filepath.Join(h.project, c.dir)
		c.place(dir)
		h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
		h.waitStatus(v.ID, StatusFailed, StatusRefused, StatusSucceeded)
		v = h.show("bob", v.ID)
		if v.Run.Status != StatusRefused || !strings.Contains(v.Message, c.names) {
			t.Fatalf("%s: released after the change: %s: %s", c.template, v.Status, v.Message)
		}
		if slices.Contains(stepNames(v), "init") || slices.Contains(stepNames(v), "plan") {
			t.Fatalf("%s: a process started after the release: steps %v", c.template, stepNames(v))
		}
		assertNeverRan(t, marker, "while the run was held at the scan stage")
		if _, err := os.Stat(filepath.Join(dir, ".terraform")); err == nil {
			t.Fatalf("%s: the checkout's working directory was initialized", c.template)
		}
		assertWouldRun(t, dir, marker, "init", "-input=false", "-no-color")
	}
}

// tofuHook puts a stand-in for tofu first on a PATH: a shell script that,
// when started with first argument arg, runs hook and then the real tofu,
// so a test can change the checkout at that moment of a run. It returns
// the PATH.
func tofuHook(t *testing.T, arg, hook string) string {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = %q ]; then\n%s\nfi\nexec %q \"$@\"\n", arg, hook, testTofu(t))
	if err := os.WriteFile(filepath.Join(dir, "tofu"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(filepath.ListSeparator) + envValue(testEnviron, "PATH")
}

// A change placed in the checkout after a clean scan read it, and before
// the run planned, never runs: the run is refused naming it before init starts
// (the change lands while the scan's `tofu get` runs, after the copy was
// made). Its neighbour, the same clean run with nothing changed, plans in
// the scan's private copy, and the checkout's working directory is never
// initialized.
func TestACleanScanRunsNoConfigurationChangedAfterTheScan(t *testing.T) {
	t.Parallel()
	h := scanHarness(t, "")
	script, marker := markerProgram(t)
	dir := filepath.Join(h.project, "infra", "scan", "clean")
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	if v.Run.Status != StatusSucceeded || !slices.Equal(stepNames(v), []string{"get", "init", "plan"}) {
		t.Fatalf("a clean scanned dry run: %s (%s), steps %v", v.Status, v.Message, stepNames(v))
	}
	if log := h.mustSSH("bob", "log", v.ID); !strings.Contains(log, "runs in the scan's private copy") || !strings.Contains(log, "module.m.terraform_data.in_module will be created") {
		t.Fatalf("the clean run's log:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform")); err == nil {
		t.Fatal("a scanned run initialized the checkout's working directory")
	}

	enc := filepath.Join(t.TempDir(), "enc.tf")
	writeFile(t, enc, markerEncryption(script))
	h.setRunPath(tofuHook(t, "get", fmt.Sprintf("cp %q %q", enc, filepath.Join(dir, "enc.tf"))))
	v = h.launchWait("alice", "scan-clean", "--dry-run")
	if v.Run.Status != StatusRefused || !strings.Contains(v.Message, "infra/scan/clean/enc.tf is new") {
		t.Fatalf("changed after the scan: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	}
	if slices.Contains(stepNames(v), "init") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a process started after the change: steps %v", stepNames(v))
	}
	assertNeverRan(t, marker, "after a clean scan")
	assertWouldRun(t, dir, marker, "init", "-input=false", "-no-color")
}

// A drift check the scan exempted plans in the scan's private copy, and
// the reconcile proposed from it applies that plan in the checkout, whose
// working directory no scanned run initialized: it applies when the
// checkout still holds the configuration the check planned (the state it
// writes lands in the checkout), and fails naming the file when a change
// was placed there after the check, with no process of its apply phase
// started and the marker program never run.
func TestAReconcileOfAScannedCheckAppliesOnlyTheConfigurationTheCheckPlanned(t *testing.T) {
	t.Parallel()
	h := scanHarness(t, "")
	script, marker := markerProgram(t)
	dir := filepath.Join(h.project, "infra", "scan", "clean")
	for _, changed := range []bool{true, false} {
		c := h.launchWait("alice", "scan-clean", "--check")
		if c.Run.Status != StatusSucceeded || c.Check == nil || !c.Check.Kept {
			t.Fatalf("a clean scanned check: %s (%s), check %+v", c.Status, c.Message, c.Check)
		}
		id := runIDOf(t, h.mustSSH("alice", "reconcile", c.ID, "--json"))
		h.waitStatus(id, StatusAwaitingApproval, StatusFailed, StatusRefused)
		p := h.show("bob", id).Proposal
		if p == nil {
			t.Fatalf("the reconcile of check %s was not held", c.ID)
		}
		if changed {
			writeFile(t, filepath.Join(dir, "enc.tf"), markerEncryption(script))
		}
		h.mustSSH("bob", "approve", id, "--digest", p.Digest)
		h.waitStatus(id, StatusSucceeded, StatusFailed, StatusStale)
		v := h.show("bob", id)
		log := h.mustSSH("bob", "log", id)
		if changed {
			if v.Run.Status != StatusFailed || !strings.Contains(v.Message, "enc.tf is new") || strings.Contains(log, "$ tofu") {
				t.Fatalf("a reconcile released after the change: %s: %s\n%s", v.Status, v.Message, log)
			}
			assertNeverRan(t, marker, "after the check planned")
			os.Remove(filepath.Join(dir, "enc.tf"))
			continue
		}
		if v.Run.Status != StatusSucceeded || !strings.Contains(log, "Apply complete!") {
			t.Fatalf("a reconcile with its configuration unchanged: %s: %s\n%s", v.Status, v.Message, log)
		}
		if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err != nil {
			t.Fatalf("the reconcile's state is not in the checkout: %v", err)
		}
	}
}
