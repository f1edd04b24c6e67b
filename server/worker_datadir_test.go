package server

// A worker's data_dir is its own: a run ID from the wire cannot escape it,
// and a second worker on it leaves the first one's runs alone.

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/config"
)

// Promise (README, relay: "a worker that died (SIGKILL, a lost machine)
// stops, at its next start and before it dials, what its runs left running
// ... and wipes their private directories"; worker_leftovers.go: "what runs
// of an earlier life of this worker left running"). Once, a second worker
// started on the same data_dir took the first one's runs for leftovers of an
// earlier life, killed its apply mid-provisioner and wiped its private
// directory.
func TestASecondWorkerOnADataDirLeavesTheFirstsApplyAlone(t *testing.T) {
	h, keys, identity := relayHarness(t, slowPoolTemplate)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute
	h.srv.relay.mu.Unlock()
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
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusCancelled, StatusInterrupted)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("w1's apply: %s: %s; its private directory after w2 started: %v", r.Status, r.Message, statErr)
	if Status(r.Status) != StatusSucceeded || os.IsNotExist(statErr) {
		t.Fatalf("worker w2, started with w1's data_dir, stopped w1's running apply %s as a leftover of its own earlier life (%s: %s) and removed its private directory (%v)",
			id, r.Status, r.Message, statErr)
	}
}

// A job's run ID is data from the wire, joined to data_dir/runs to make the
// run's private directory, which the worker creates and removes with
// os.RemoveAll when the run ends. Once, a run ID of "../../victim" (or "..")
// made the worker create, and then remove recursively, a directory outside
// its data_dir (or the data_dir itself).
func TestAJobsRunIDCannotEscapeTheDataDir(t *testing.T) {
	for _, tc := range []struct{ run, victim string }{
		{"../../victim", "victim"}, // a sibling of the data_dir
		{"..", "data"},             // the data_dir itself
	} {
		t.Run(tc.run, func(t *testing.T) {
			w, dir := bareWorker(t)
			victim := filepath.Join(dir, tc.victim)
			if err := os.MkdirAll(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			keep := filepath.Join(victim, "precious")
			if err := os.WriteFile(keep, []byte("not the worker's to remove"), 0o644); err != nil {
				t.Fatal(err)
			}
			var wire bytes.Buffer
			c := newRelayConn(strings.NewReader(""), &wire)
			job := relayMsg{Type: msgJob, Run: tc.run, Token: 1, Project: "infra", Command: "infra/data",
				Kind: string(KindPlan), Tool: "no-such-tool", Status: "clear", Payload: []byte(`{}`)}
			res := w.runJob(context.Background(), c, job, nil)
			t.Logf("result: %s %s", res.Status, res.Message)
			if _, err := os.Stat(keep); err != nil {
				t.Fatalf("a job with run ID %q removed %s, outside data_dir/runs: %v", tc.run, victim, err)
			}
		})
	}
}

// bareWorker is a worker that was never dialled: its runJob is driven
// directly, as a (compromised or buggy) control node's job message would
// drive it.
func bareWorker(t *testing.T) (*worker, string) {
	t.Helper()
	dir := t.TempDir()
	checkout := filepath.Join(dir, "checkout")
	if err := os.CopyFS(checkout, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Worker{Name: "w1", Pool: "eu", DataDir: filepath.Join(dir, "data"),
		Projects: map[string]*config.Project{"infra": {Name: "infra", Path: checkout}}}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &worker{cfg: cfg, opts: WorkerOptions{Environ: testEnviron}, log: slog.New(slog.DiscardHandler)}, dir
}
