package scenario

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/server/worker"
	"github.com/switchtender/switchtender/store"
)

// Draining a worker (SIGTERM): it takes no new run and finishes the one it
// has, which succeeds; then it returns, and the run queued meanwhile waits
// for another worker. The drain is audited and `workers` showed it.
func TestRelayDrainFinishesTheCurrentRun(t *testing.T) {
	t.Parallel()
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
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed)
	if r, _ := h.db().GetRun(id); r.Status != store.StatusSucceeded {
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
	if r, _ := h.db().GetRun(next); r.Status != store.StatusQueued {
		t.Errorf("a run launched during the drain is %s, want queued", r.Status)
	}
	// Audited as draining when it began, as drained once the worker left
	// (the control node sees its session end a moment after it returns).
	waitFor(t, "the drain to be audited", 10*time.Second, func() bool {
		audit := h.mustSSH("alice", "audit")
		return strings.Contains(audit, "worker draining") && strings.Contains(audit, "worker drained")
	})
}

// The control node restarting loses no run queued for a pool: it is queued
// again and a worker that connects afterwards runs it. A run a worker was
// executing is marked interrupted with the reason, and the worker's late
// result is rejected.
func TestRelayRestartKeepsQueuedRuns(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	leased := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=r0", "--json"))
	raw.Recv()
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: leased})
	job := raw.Recv()
	h.waitStatus(leased, store.StatusRunning)
	queued := runIDOf(t, h.mustSSH("alice", "launch", "rsecret", "--dry-run", "--var", "db_password=x1234567", "--json"))
	h.restart()
	if r, _ := h.db().GetRun(leased); r.Status != store.StatusInterrupted || !strings.Contains(r.Message, "worker w2 of pool eu") || !strings.Contains(r.Message, "a state lock may be left") {
		t.Errorf("the leased run after the restart: %s %s", r.Status, r.Message)
	}
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	h.waitStatus(queued, store.StatusSucceeded, store.StatusFailed)
	if r, _ := h.db().GetRun(queued); r.Status != store.StatusSucceeded || r.PlannedBy != "w1" {
		t.Errorf("the queued run after the restart: %s by %q: %s", r.Status, r.PlannedBy, r.Message)
	}
	late, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	late.Send(relay.Msg{Type: relay.MsgResult, Run: leased, Token: job.Token, Status: "succeeded"})
	if m := late.Recv(); m.Type != relay.MsgReject {
		t.Errorf("a result from before the restart: %+v", m)
	}
	if r, _ := h.db().GetRun(leased); r.Status != store.StatusInterrupted {
		t.Errorf("the late result changed the run: %s", r.Status)
	}
}

// Workers reconnect by themselves when the control node restarts on the
// same address, and take the next run.
func TestRelayWorkerReconnectsAfterRestart(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	if v := h.launchWait("alice", "rnet", "--dry-run", "--var", "region=before"); v.Status != store.StatusSucceeded {
		t.Fatalf("before the restart: %s %s", v.Status, v.Message)
	}
	cfg, err := os.ReadFile(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(cfg), `ssh_listen = "127.0.0.1:0"`, fmt.Sprintf("ssh_listen = %q", h.addr), 1)
	if err := os.WriteFile(h.cfgPath, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	h.restart()
	waitFor(t, "w1 to reconnect", 30*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	v := h.launchWait("alice", "rnet", "--dry-run", "--var", "region=after")
	if v.Status != store.StatusSucceeded || v.PlannedBy != "w1" {
		t.Errorf("after the restart: %s by %q: %s", v.Status, v.PlannedBy, v.Message)
	}
}

// A worker stopped outright (a second signal) while it applies interrupts
// its tool and reports the run interrupted at once, saying so, rather than
// leaving it to fail when its lease times out; RunWorker names the run.
func TestRelayStoppedWorkerReportsItsRunInterrupted(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarnessWith(t, `
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`, map[string]time.Duration{"eu": time.Minute}) // a lost lease would take this long
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	errs := make(chan error, 1)
	go func() {
		errs <- worker.RunWorker(ctx, w1, worker.WorkerOptions{Environ: testkit.Environ(), Version: "test"})
	}()
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the slow apply to start", 60*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "log", id), "started-slow")
	})
	stopped := time.Now()
	stop()
	h.waitStatus(id, store.StatusInterrupted, store.StatusFailed, store.StatusSucceeded)
	r, _ := h.db().GetRun(id)
	if r.Status != store.StatusInterrupted || !strings.Contains(r.Message, "Worker w1 was stopped during apply") || time.Since(stopped) > 30*time.Second {
		t.Fatalf("the stopped worker's run after %s: %s: %s", time.Since(stopped), r.Status, r.Message)
	}
	select {
	case err := <-errs:
		if err == nil || !strings.Contains(err.Error(), "its run "+id+" was interrupted") {
			t.Errorf("RunWorker returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stopped worker did not return")
	}
	if audit := h.mustSSH("alice", "audit", "--run", id); strings.Contains(audit, "result rejected") {
		t.Errorf("the interrupted run's result was rejected:\n%s", audit)
	}
}

// A worker that died left a run's process (what a provisioner started
// outlives the parent-death signal) and its private directory, a plan in
// clear in it: at its next start the worker stops the process marked with
// its run and wipes the directory, before it dials. A process marked for
// another worker's data directory is left alone.
func TestWorkerStopsWhatAnEarlierLifeLeft(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, "")
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	left := filepath.Join(w1.DataDir, "runs", "42")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, runstep.PlanFileName), []byte("a saved plan in clear"), 0o600); err != nil {
		t.Fatal(err)
	}
	sleeper := func(marker string) chan error {
		cmd := osexec.Command("sleep", "120")
		cmd.Env = append(os.Environ(), runstep.RunMarkerVar+"="+marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return done
	}
	ours, theirs := sleeper(worker.Marker(w1.DataDir, "42")), sleeper(worker.Marker(t.TempDir(), "42"))
	startWorker(t, w1)
	select {
	case <-ours:
	case <-time.After(30 * time.Second):
		t.Fatal("the process an earlier life of the worker left running was not stopped")
	}
	waitFor(t, "the leftover run directory to be wiped", 20*time.Second, func() bool {
		_, err := os.Stat(left)
		return os.IsNotExist(err)
	})
	select {
	case err := <-theirs:
		t.Errorf("another data directory's process was stopped: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
}

// Promise (relay_session.go: "worker drained" is audited when a drained
// worker leaves: "it took no new run, finished the one it had, and left").
// Once, a worker stopped outright after its drain, mid-apply, was audited as
// "worker drained ... finished the one it had" though its run had been
// interrupted.
func TestAWorkerStoppedAfterItsDrainIsNotAuditedAsDrained(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarnessWith(t, slowPoolTemplate, map[string]time.Duration{"eu": time.Minute})
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	writeSlowModule(t, w1.Projects["infra"].Path)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	drain := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		errs <- worker.RunWorker(ctx, w1, worker.WorkerOptions{Environ: testkit.Environ(), Version: "test", Drain: drain})
	}()
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the slow apply to start", 60*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "log", id), "started-slow")
	})
	close(drain) // the first SIGTERM
	waitFor(t, "the drain to be audited", 10*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "audit"), "worker draining") })
	stop() // the second
	h.waitStatus(id, store.StatusInterrupted, store.StatusFailed, store.StatusSucceeded)
	select {
	case <-errs:
	case <-time.After(30 * time.Second):
		t.Fatal("the stopped worker did not return")
	}
	var audit string
	waitFor(t, "the worker's leaving to be audited", 10*time.Second, func() bool {
		audit = h.mustSSH("alice", "audit")
		return strings.Contains(audit, "worker drained") || strings.Contains(audit, "worker disconnected") || strings.Contains(audit, "worker stopped")
	})
	r, _ := h.db().GetRun(id)
	if !strings.Contains(audit, "worker stopped") {
		t.Errorf("a worker stopped outright is not audited as stopped:\n%s", audit)
	}
	if r.Status == store.StatusInterrupted && strings.Contains(audit, "finished the one it had") {
		t.Fatalf("a worker stopped during its run after a drain is audited as drained, having \"finished the one it had\", while its run %s is %s:\n%s", id, r.Status, audit)
	}
}

// Promise (relay_session.go drain: a draining worker "takes no new run",
// audited as such; "worker drained": "it took no new run"). Once, a worker
// that drained while a run was offered to it could still take and run the
// offer, and its audit then said it took no new run.
func TestADrainingWorkerTakesNoOffer(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=dr", "--json"))
	if m := raw.Recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v", m)
	}
	raw.Send(relay.Msg{Type: relay.MsgDrain})
	waitFor(t, "the drain to be audited", 10*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "audit"), "worker draining") })
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	if m := raw.Recv(); m.Type == relay.MsgJob {
		raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: m.Token, Status: store.StatusFailed, Exit: 1, Message: "ran"})
		h.waitStatus(id, store.StatusFailed)
		raw.Client.Close()
		waitFor(t, "the worker's leaving to be audited", 10*time.Second, func() bool {
			return strings.Contains(h.mustSSH("alice", "audit"), "worker drained") || strings.Contains(h.mustSSH("alice", "audit"), "worker disconnected")
		})
		t.Fatalf("a draining worker was given run %s after its drain was audited as taking no new run:\n%s", id, h.mustSSH("alice", "audit"))
	}
}

// Promise (docs/relay.md, draining: SIGTERM makes a worker take no new run
// and finish the one it has; lost leases are for workers that went away).
// Once, a worker drained between its take and the job's arrival hung up at
// once as if it had no run, and the run it had taken failed at the lease
// timeout, never run.
func TestADrainBetweenTakeAndJobFinishesTheRun(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarnessWith(t, slowCredentialTemplate, map[string]time.Duration{"eu": 8 * time.Second}) // longer than the credential command
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	errs, drain := startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslowcred", "--dry-run", "--var", "region=drain", "--json"))
	waitFor(t, "w1 to take the run", 20*time.Second, func() bool {
		r, _ := h.db().GetRun(id)
		return r.Status != store.StatusQueued
	})
	drain() // SIGTERM while the control node prepares the job w1 took
	select {
	case err := <-errs:
		t.Logf("the worker returned %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the drained worker did not return")
	}
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusInterrupted, store.StatusCancelled)
	r, _ := h.db().GetRun(id)
	if r.Status != store.StatusSucceeded {
		t.Fatalf("run %s, taken by w1 just before its drain, ended %s: %s\naudit:\n%s", id, r.Status, r.Message, h.mustSSH("alice", "audit", "--run", id))
	}
}
