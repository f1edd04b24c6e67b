package server

// A lease lives on its worker's heartbeats only: another key cannot take it
// over, a slow credential command does not lose it, and a paused worker
// cannot freeze the watcher that ends lost leases.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// Promise: results and log lines for a lease held by another worker are
// rejected ("a lease id of another worker"). Once, another worker's key could
// say hello under w1's name after w1's session dropped and have its result
// for w1's lease accepted, because a name was never bound to the key that
// first used it.
func TestAnotherKeyCannotTakeOverAWorkersLease(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw1, _ := dialRaw(t, h, keys["w1"], relay.Msg{Name: "w1", Pool: "eu", Version: "raw"})
	raw1.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=imp", "--json"))
	if offer := raw1.Recv(); offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw1.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw1.Recv()
	if job.Type != relay.MsgJob {
		t.Fatalf("job %+v", job)
	}
	raw1.Client.Close()
	time.Sleep(300 * time.Millisecond)
	imp, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w1", Pool: "eu", Version: "impostor"})
	if welcome.Type == relay.MsgWelcome {
		t.Errorf("the key of w2 was welcomed as worker w1")
	}
	if welcome.Type != relay.MsgWelcome {
		return
	}
	imp.Send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "forged by w2's key\n"})
	imp.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Message: "forged"})
	time.Sleep(500 * time.Millisecond)
	r, _ := h.srv.db.GetRun(id)
	if r.Status == StatusSucceeded {
		t.Errorf("another key's result ended w1's lease: %s %q", r.Status, r.Message)
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "forged by w2's key") {
		t.Errorf("another key's log line reached w1's run:\n%s", log)
	}
}

// A lease lives on its own heartbeats only. A worker that took a run and then
// sends only run-less heartbeats (which keep `workers` LAST SEEN fresh),
// heartbeats with a wrong fencing token, and another worker's heartbeats with
// the right token, loses the lease within the timeout: the run fails as
// stopped heartbeating, and the wrong-token heartbeats are rejected.
func TestALeaseLivesOnItsOwnHeartbeatsOnly(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	other, _ := dialRaw(t, h, keys["w1"], relay.Msg{Name: "w1", Pool: "eu"})
	id, job := takeRun(t, h, raw, "rnet", "--dry-run", "--var", "region=hb")
	started := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for time.Since(started) < 8*time.Second {
			if r, _ := h.srv.db.GetRun(id); r.Status.Final() {
				return
			}
			_ = raw.Conn.Send(relay.Msg{Type: relay.MsgHeartbeat})
			_ = raw.Conn.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token + 1})
			_ = other.Conn.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token})
			time.Sleep(200 * time.Millisecond)
		}
	}()
	h.waitStatus(id, StatusFailed, StatusSucceeded)
	<-done
	r, _ := h.srv.db.GetRun(id)
	if r.Status != StatusFailed || !strings.Contains(r.Message, "stopped heartbeating") || time.Since(started) > 7*time.Second {
		t.Fatalf("a lease kept by idle or wrong-token heartbeats for %s: %s: %s", time.Since(started), r.Status, r.Message)
	}
	m, err := raw.Conn.Recv()
	if err != nil || m.Type != relay.MsgReject {
		t.Fatalf("a wrong-token heartbeat was answered %+v (%v)", m, err)
	}
	var ws []workerView
	if err := json.Unmarshal([]byte(h.mustSSH("alice", "workers", "--json")), &ws); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Name == "w2" && time.Since(w.LastSeen) > 3*time.Second {
			t.Errorf("w2's idle heartbeats did not keep LAST SEEN fresh: %v", w.LastSeen)
		}
	}
}

// Promise (relay: a lease is lost only when its worker stops heartbeating;
// "lost leases fail the run once" for a worker that went away). Once, a
// credential command slower than the lease timeout failed every run of its
// template on a pool as "stopped heartbeating during preparation", blaming an
// idle, healthy worker.
func TestASlowCredentialCommandKeepsTheLease(t *testing.T) {
	h, keys, identity := relayHarness(t, slowCredentialTemplate)
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	v := h.launchWait("alice", "rslowcred", "--dry-run", "--var", "region=slow")
	if v.Run.Status != StatusSucceeded {
		t.Fatalf("a run whose credential command took 3s (lease timeout 2s) on a healthy worker: %s: %s", v.Status, v.Message)
	}
}

// Promise (relay: a worker that stops heartbeating loses its lease within the
// pool's lease_timeout, "lost leases fail the run once", and one pool's
// workers do not hold up another's). Once, writing a large job to a worker
// that had stopped reading held the lease's lock for good, and the lease
// watcher blocked on it, so no lease of any pool was lost afterwards.
func TestAPausedWorkerCannotFreezeTheLeaseWatcher(t *testing.T) {
	h, keys, _ := relayHarness(t, `
template "rblob13f" {
  project = "infra"
  command = "infra/blob13f"
  queue   = "eu"
}
rule "gate13f" {
  templates   = ["rblob13f"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["bare"] = 2 * time.Second
	h.srv.relay.mu.Unlock()
	writeBlobModule(t, h.project, 2<<20) // a job of about 4 MiB: twice the SSH window
	runTofuByHand(t, h, "infra/blob13f", "init", "-input=false")
	path := filepath.Join(t.TempDir(), "p.tfplan")
	runTofuByHand(t, h, "infra/blob13f", "plan", "-input=false", "-out="+path)
	js := bytes.TrimSpace(runTofuByHand(t, h, "infra/blob13f", "show", "-json", path))
	if i := bytes.IndexByte(js, '{'); i > 0 {
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the saved plan is %d bytes, its rendering %d", len(plan), len(js))

	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	pauseOn := ""
	ch := pausedReader(raw, func() string { return pauseOn })
	id, job := leaseRun(t, h, raw, ch, "rblob13f")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	pauseOn = id // the next offer of this run is the last message w2 reads
	handOverPlan(raw, id, job.Token, plan, js)
	settlePlanPhase(h, id, 30*time.Second)
	if r, _ := h.srv.db.GetRun(id); r.Phase != phaseApply || r.Status != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	if offer, ok := nextMsg(ch, relay.MsgOffer, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id}) // and w2's machine pauses
	time.Sleep(4 * time.Second)                       // w2's lease (2s) is lost by now

	b1, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare", Version: "raw"})
	b1.Send(relay.Msg{Type: relay.MsgPoll})
	bid := runIDOf(t, h.mustSSH("alice", "launch", "bnet", "--dry-run", "--var", "region=paused", "--json"))
	if m := b1.Recv(); m.Type != relay.MsgOffer || m.Run != bid {
		t.Fatalf("offer %+v", m)
	}
	b1.Send(relay.Msg{Type: relay.MsgTake, Run: bid})
	if m := b1.Recv(); m.Type != relay.MsgJob {
		t.Fatalf("b1's take: %+v", m)
	}
	// b1 dies without a heartbeat: its run fails within 2s, if anything
	// still watches leases.
	deadline := time.Now().Add(12 * time.Second)
	var br store.Run
	for time.Now().Before(deadline) {
		if br, _ = h.srv.db.GetRun(bid); br.Status != StatusRunning {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	r, _ := h.srv.db.GetRun(id)
	t.Logf("w2's apply phase: %s (%s); b1's dry run: %s (%s)", r.Status, r.Message, br.Status, br.Message)
	if br.Status == StatusRunning || r.Status == StatusRunning {
		t.Fatalf("12s after worker b1 of pool bare went silent (lease timeout 2s) its run %s is %s, and run %s, whose apply-phase job w2 (pool eu) stopped reading, is %s: the lease watcher is stuck behind w2's lease",
			bid, br.Status, id, r.Status)
	}
}

// pausedReader reads a raw worker's messages into a channel until
// it has passed on an offer of run (or any offer when run is ""), then
// reads nothing more: the worker's machine is paused (a stopped process, a
// frozen VM) with its connection still open.
func pausedReader(w *rawWorker, pauseAfterOffer func() string) chan relay.Msg {
	ch := make(chan relay.Msg, 64)
	go func() {
		for {
			m, err := w.Conn.Recv()
			if err != nil {
				close(ch)
				return
			}
			ch <- m
			if m.Type == relay.MsgOffer && (pauseAfterOffer() == "*" || pauseAfterOffer() == m.Run) {
				return // nothing reads the connection any more
			}
		}
	}()
	return ch
}
