package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A template on a relay pool's queue is named at start with what its
// workers run and what is refused in this version; a pool that lists no
// workers is named too.
func TestPoolTemplateProblemsAtStart(t *testing.T) {
	h := newHarness(t, `
queue "eu" { pool = "eu" }
pool "eu" {
  delivery_key = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
}
template "remote" {
  project = "infra"
  command = "infra/network"
  queue   = "eu"
}
`)
	got := strings.Join(h.srv.Problems(), "\n")
	for _, want := range []string{"template remote", "dry runs, applies and drift checks (a gated apply or a check only with the pool's delivery_key)", "pull-request plans and scanned dry runs are refused", "pool eu", "lists no workers",
		"its working directory infra/network declares no backend", "Use a remote backend, or a local backend whose path is on storage the pool shares"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems at start lack %q:\n%s", want, got)
		}
	}
}

// What needs plans handed between workers is refused before anything
// plans, with a sentence: a gated apply on a pool with no delivery key
// says that is why; with one, that the hand-off is not in this version; a
// drift check and a pull request's plan likewise. An ungated apply on the
// pool without a delivery key is queued.
func TestRelayRefusesWhatNeedsThePlanHandOff(t *testing.T) {
	h, keys, _ := relayHarness(t, `
rule "gate-rnet" {
  templates   = ["rnet", "bnet"]
  kinds       = ["apply"]
  max_destroy = 0
}
template "bfree" {
  project = "infra"
  command = "infra/network"
  queue   = "bare"
  vars    = { region = "bare-1" }
}
`)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bnet", "--var", "region=a"}, "pool bare has no delivery_key, so it cannot run a gated apply"},
		{[]string{"bnet", "--check", "--var", "region=a"}, "pool bare has no delivery_key, so it cannot run a drift check"},
		{[]string{"rnet", "--dry-run", "--ref", "main", "--var", "region=a"}, "pull request's plan (--ref)"},
	}
	for _, c := range cases {
		_, errOut, code := h.ssh("alice", append([]string{"launch"}, c.args...)...)
		if code != exitRefused || !strings.Contains(errOut, c.want) {
			t.Errorf("launch %v: exit %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if runs := h.mustSSH("alice", "runs"); strings.Contains(runs, "rnet") || strings.Contains(runs, "bnet") {
		t.Errorf("a refused launch left a run:\n%s", runs)
	}
	out := h.mustSSH("alice", "launch", "bfree", "--json")
	id := runIDOf(t, out)
	if show := h.mustSSH("alice", "show", id); !strings.Contains(show, "waiting for a free worker of pool bare") {
		t.Errorf("an ungated apply on the pool without a delivery key:\n%s", show)
	}
	startWorker(t, relayWorkerCfg(t, h, "b1", "bare", keys["b1"], ""))
	h.waitStatus(id, StatusSucceeded, StatusFailed)
	if r, _ := h.srv.db.GetRun(id); r.Status != string(StatusSucceeded) || r.AppliedBy != "b1" {
		t.Errorf("the ungated apply on pool bare: %s by %q: %s", r.Status, r.AppliedBy, r.Message)
	}
}

// A pool template whose configuration names a remote backend, or a local
// one with a path, draws no state warning.
func TestPoolTemplateSharedStateNoWarning(t *testing.T) {
	h := newHarness(t, `
queue "eu" { pool = "eu" }
pool "eu" {
  workers = []
}
template "remote" {
  project = "infra"
  command = "infra/shared"
  queue   = "eu"
}
`)
	dir := filepath.Join(h.project, "infra", "shared")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("terraform {\n  backend \"local\" { path = \"/mnt/pool/state/shared.tfstate\" }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Check(h.srv.cfg, testEnviron), "\n"); strings.Contains(got, "different states") {
		t.Errorf("a local backend with a path drew the warning:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("terraform {\n  backend \"local\" {}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Check(h.srv.cfg, testEnviron), "\n"); !strings.Contains(got, "uses the local backend without a path") {
		t.Errorf("a local backend without a path drew no warning:\n%s", got)
	}
}
