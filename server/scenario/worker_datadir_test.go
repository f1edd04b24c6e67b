package scenario

// A worker's data_dir is its own: a run ID from the wire cannot escape it,
// and a second worker on it leaves the first one's runs alone.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
)

// Promise (docs/relay.md: "a worker that died (SIGKILL, a lost machine)
// stops, at its next start and before it dials, what its runs left running
// ... and wipes their private directories"; worker_leftovers.go: "what runs
// of an earlier life of this worker left running"). Once, a second worker
// started on the same data_dir took the first one's runs for leftovers of an
// earlier life, killed its apply mid-provisioner and wiped its private
// directory.
func TestASecondWorkerOnADataDirLeavesTheFirstsApplyAlone(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarnessWith(t, slowPoolTemplate, map[string]time.Duration{"eu": time.Minute})
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	writeSlowModule(t, w1.Projects["infra"].Path)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the provisioner to start", 60*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "log", id), "started-slow") })
	private := filepath.Join(w1.DataDir, "runs", id)
	if _, err := os.Stat(private); err != nil {
		t.Fatalf("the run's private directory: %v", err)
	}

	w2 := relayWorkerCfg(t, h, "w2", "eu", keys["w2"], identity)
	w2.DataDir = w1.DataDir
	errs2, _ := startWorker(t, w2)
	select {
	case err := <-errs2:
		if err == nil || !strings.Contains(err.Error(), "is in use by another worker") {
			t.Fatalf("w2 on w1's data_dir: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("w2, started on w1's data_dir, neither refused to start nor ended")
	}
	_, statErr := os.Stat(private)
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusCancelled, store.StatusInterrupted)
	r, _ := h.db().GetRun(id)
	t.Logf("w1's apply: %s: %s; its private directory after w2 started: %v", r.Status, r.Message, statErr)
	if r.Status != store.StatusSucceeded || os.IsNotExist(statErr) {
		t.Fatalf("worker w2, started with w1's data_dir, stopped w1's running apply %s as a leftover of its own earlier life (%s: %s) and removed its private directory (%v)",
			id, r.Status, r.Message, statErr)
	}
}
