package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/worker"
)

// startWorkerWithPath is startWorker with path as the PATH of the worker's
// runs (tofuHook's stand-in first).
func startWorkerWithPath(t *testing.T, cfg *config.Worker, path string) {
	t.Helper()
	env := append(append([]string{}, testEnviron...), "PATH="+path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.RunWorker(ctx, cfg, worker.WorkerOptions{Environ: env, Version: "test"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the worker did not stop")
		}
	})
}

// On a relay worker, a change placed in the worker's checkout after a
// gated apply's plan was held never runs once the apply is released: the
// worker fails the run before init, the first process of its apply phase,
// naming the file, and nothing is applied. Its neighbour, the same apply
// with nothing changed, applies on the worker.
func TestARelayedReleasedApplyRunsNoConfigurationChangedAfterItsPlan(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w1)
	script, marker := markerProgram(t)
	dir := filepath.Join(w1.Projects["infra"].Path, "infra", "network")
	for _, changed := range []bool{true, false} {
		id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=g1", "--json"))
		h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
		held, _ := h.srv.db.GetRun(id)
		if held.Proposal == nil {
			t.Fatalf("not held: %s: %s", held.Status, held.Message)
		}
		if changed {
			writeFile(t, filepath.Join(dir, "enc_override.tf"), markerEncryption(script))
			assertWouldRun(t, dir, marker, "state", "pull", "-no-color")
		}
		h.mustSSH("bob", "approve", id, "--digest", held.Proposal.Digest)
		h.waitStatus(id, StatusSucceeded, StatusFailed, StatusStale)
		done, _ := h.srv.db.GetRun(id)
		log := h.mustSSH("alice", "log", id)
		if !changed {
			if done.Status != StatusSucceeded || !strings.Contains(log, "Apply complete!") {
				t.Fatalf("an apply with its configuration unchanged: %s: %s\n%s", done.Status, done.Message, log)
			}
			continue
		}
		if done.Status != StatusFailed || !strings.Contains(done.Message, "enc_override.tf is new") || !strings.Contains(done.Message, "on worker w1") {
			t.Fatalf("released after the change: %s: %s\n%s", done.Status, done.Message, log)
		}
		applyPhase := log[strings.LastIndex(log, "leased to worker"):]
		if strings.Contains(applyPhase, "$ tofu") {
			t.Fatalf("a process of the apply phase started:\n%s", log)
		}
		assertNeverRan(t, marker, "of the worker after the plan was held")
		if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err == nil {
			t.Fatal("a state was written; nothing should have been applied")
		}
		os.Remove(filepath.Join(dir, "enc_override.tf"))
	}
}

// On a relay worker, a scanned run takes the control node's path: a change
// placed in the worker's checkout after a clean scan read it (while the
// scan's `tofu get` runs) is refused naming the file before init starts,
// and a change placed while the run is held at the scan stage is refused
// once released, as the worker's new scan reads other evidence than the
// person released. The marker program never runs either way.
func TestARelayedScanRunsNoConfigurationChangedAfterTheScan(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, relayScanConfig)
	script, marker := markerProgram(t)
	enc := filepath.Join(t.TempDir(), "enc.tf")
	writeFile(t, enc, markerEncryption(script))

	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	clean := filepath.Join(w1.Projects["infra"].Path, "infra", "scan", "clean")
	startWorkerWithPath(t, w1, tofuHook(t, "get", fmt.Sprintf("cp %q %q", enc, filepath.Join(clean, "enc.tf"))))
	v := h.launchWait("alice", "rs-clean", "--dry-run")
	if v.Run.Status != StatusRefused || !strings.Contains(v.Message, "infra/scan/clean/enc.tf is new") || v.PlannedBy != "w1" {
		t.Fatalf("changed after a clean scan on w1: %s by %q: %s\n%s", v.Status, v.PlannedBy, v.Message, h.mustSSH("bob", "log", v.ID))
	}
	if slices.Contains(stepNames(v), "init") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a process started after the change: steps %v", stepNames(v))
	}
	assertNeverRan(t, marker, "of the worker after a clean scan")
	assertWouldRun(t, clean, marker, "init", "-input=false", "-no-color")

	v = h.launchWait("alice", "rs-deep", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal.Stage != StageScan {
		t.Fatalf("deep on w1: %s: %s", v.Status, v.Message)
	}
	deep := filepath.Join(w1.Projects["infra"].Path, "infra", "scan", "deep")
	writeFile(t, filepath.Join(deep, "enc.tf"), markerEncryption(script))
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusRefused, StatusSucceeded, StatusFailed)
	v = h.show("bob", v.ID)
	if v.Run.Status != StatusRefused || slices.Contains(stepNames(v), "init") {
		t.Fatalf("changed while held at the scan stage: %s: %s, steps %v", v.Status, v.Message, stepNames(v))
	}
	assertNeverRan(t, marker, "of the worker while the run was held at the scan stage")
	assertWouldRun(t, deep, marker, "init", "-input=false", "-no-color")
}
