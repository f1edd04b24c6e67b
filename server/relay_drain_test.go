package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Draining a worker (SIGTERM): it takes no new run and finishes the one it
// has, which succeeds; then it returns, and the run queued meanwhile waits
// for another worker. The drain is audited and `workers` showed it.
func TestRelayDrainFinishesTheCurrentRun(t *testing.T) {
	h, keys, identity := relayHarness(t, `
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	slow := filepath.Join(w1.Projects["infra"].Path, "infra/slow/main.tf")
	tf := `resource "terraform_data" "slow" {
  provisioner "local-exec" { command = "echo started-slow; sleep 3" }
}
`
	if err := os.WriteFile(slow, []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	errs, drain := startWorker(t, w1)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the slow apply to start", 60*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "log", id), "started-slow")
	})
	drain()
	waitFor(t, "workers to show the drain", 10*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "draining") })
	next := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=d", "--json"))
	h.waitStatus(id, StatusSucceeded, StatusFailed)
	if r, _ := h.srv.db.GetRun(id); r.Status != string(StatusSucceeded) {
		t.Fatalf("the drained worker's run: %s %s", r.Status, r.Message)
	}
	select {
	case err := <-errs:
		if err != nil {
			t.Errorf("a drained worker returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the drained worker did not stop")
	}
	if r, _ := h.srv.db.GetRun(next); r.Status != string(StatusQueued) {
		t.Errorf("a run launched during the drain is %s, want queued", r.Status)
	}
	if audit := h.mustSSH("alice", "audit"); !strings.Contains(audit, "worker drained") {
		t.Errorf("the drain is not audited:\n%s", audit)
	}
}
