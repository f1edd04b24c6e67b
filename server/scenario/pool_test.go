package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// A template on a relay pool's queue is named at start when its working
// directory keeps state the pool's workers cannot share; a pool that lists
// no workers is named too.
func TestPoolTemplateProblemsAtStart(t *testing.T) {
	t.Parallel()
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
	// What a pool runs is the README's to say, not a problem: check would
	// exit non-zero for every pool template.
	for _, want := range []string{"template remote", "pool eu", "lists no workers",
		"its working directory infra/network declares no backend", "Use a remote backend, or a local backend whose path is on storage the pool shares"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems at start lack %q:\n%s", want, got)
		}
	}
}

// What needs plans handed between workers is refused before anything
// plans, with a sentence: a gated apply or a drift check on a pool with no
// delivery key says that is why; a --ref that could be taken for an
// option is refused at launch, as on the control node. An
// ungated apply on the pool without a delivery key is queued.
func TestRelayRefusesWhatNeedsThePlanHandOff(t *testing.T) {
	t.Parallel()
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
		{[]string{"rnet", "--dry-run", "--ref", "-x", "--var", "region=a"}, "--ref"},
	}
	for _, c := range cases {
		_, errOut, code := h.ssh("alice", append([]string{"launch"}, c.args...)...)
		if code != api.ExitRefused || !strings.Contains(errOut, c.want) {
			t.Errorf("launch %v: exit %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if runs := h.mustSSH("alice", "runs"); strings.Contains(runs, "rnet") || strings.Contains(runs, "bnet") {
		t.Errorf("a refused launch left a run:\n%s", runs)
	}
	out := h.mustSSH("alice", "launch", "bfree", "--json")
	id := runIDOf(t, out)
	if show := h.mustSSH("alice", "show", id); !strings.Contains(show, "no worker of pool bare is connected") {
		t.Errorf("an ungated apply on the pool without a delivery key:\n%s", show)
	}
	startWorker(t, relayWorkerCfg(t, h, "b1", "bare", keys["b1"], ""))
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed)
	if r, _ := h.db().GetRun(id); r.Status != store.StatusSucceeded || r.AppliedBy != "b1" {
		t.Errorf("the ungated apply on pool bare: %s by %q: %s", r.Status, r.AppliedBy, r.Message)
	}
}

// A pool template whose configuration names a remote backend, or a local
// one with a path, draws no state warning.
func TestPoolTemplateSharedStateNoWarning(t *testing.T) {
	t.Parallel()
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
	if got := fmt.Sprint(server.Check(h.srv.Config(), testkit.Environ())); strings.Contains(got, "different states") {
		t.Errorf("a local backend with a path drew the warning:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("terraform {\n  backend \"local\" {}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(server.Check(h.srv.Config(), testkit.Environ())); !strings.Contains(got, "uses the local backend without a path") {
		t.Errorf("a local backend without a path drew no warning:\n%s", got)
	}
}
