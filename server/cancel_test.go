package server

// A cancel ends the run at every point of its life: queued, running, held, on
// a relay worker between its phases, while the rules decide or a job is
// prepared; and only those who may cancel a run can.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// Promise (docs/ssh-commands.md, cancel): a running run's tool is interrupted and the run
// ends cancelled; a cancelled apply never applies. Once, a worker that
// ignored the cancel and handed its plan over anyway had the apply phase
// queued for the pool's next worker, because nothing on the control node
// marked the lease cancelled.
func TestACancelledGatedPlanNeverGoesToItsApply(t *testing.T) {
	h, keys, identity := relayHarness(t, poolDataTemplate)
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	plan, js := planDataByHand(t, h)
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	h.mustSSH("alice", "cancel", id)
	if _, ok := nextMsg(ch, relay.MsgCancel, 10*time.Second); !ok {
		t.Fatalf("the worker was not told to cancel")
	}
	// The worker ignores it and hands its plan over.
	handOverPlan(raw, id, job.Token, plan, js)
	settlePlanPhase(h, id, 15*time.Second)
	time.Sleep(500 * time.Millisecond)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("after the hand-over: status %s phase %s cancel %q: %s", r.Status, r.Phase, r.CancelRequested, r.Message)
	if r.CancelRequested == "" {
		t.Fatalf("the cancel was not recorded: %+v", r.Status)
	}
	if r.Phase == phaseApply || r.Status == StatusSucceeded {
		t.Errorf("run %s, cancelled by alice during its plan, went on to its apply phase (status %s, phase %s): %s", id, r.Status, r.Phase, r.Message)
	}
	if r.Status != StatusCancelled {
		t.Errorf("the cancelled run is %s, not cancelled: %s", r.Status, r.Message)
	}
	if r.Phase != phaseApply {
		return
	}
	// An honest worker of the pool joins: it takes the cancelled run's
	// apply phase and applies it.
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w1)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r, _ = h.srv.db.GetRun(id); r.Status != StatusRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.Status == StatusSucceeded || r.AppliedBy != "" {
		t.Errorf("the run alice cancelled was applied by worker %q: status %s: %s", r.AppliedBy, r.Status, r.Message)
	}
}

// Promise (docs/ssh-commands.md, cancel): a running run's tool gets SIGINT and SIGKILL
// only after cancel_grace: a cancelled run ends. Once, a worker that kept
// heartbeating and never sent a result kept a cancelled run running, and its
// working directory busy, for as long as it liked, since the heartbeat was a
// relay run's only bound.
func TestCancelEndsARunWhoseWorkerIgnoresIt(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rnet", "--dry-run", "--var", "region=hb")
	h.mustSSH("alice", "cancel", id)
	if _, ok := nextMsg(ch, relay.MsgCancel, 10*time.Second); !ok {
		t.Fatalf("the worker was not told to cancel")
	}
	stop := time.Now().Add(12 * time.Second) // cancel_grace 5s + lease timeout 2s + margin
	for time.Now().Before(stop) {
		if err := raw.Conn.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token}); err != nil {
			break
		}
		r, _ := h.srv.db.GetRun(id)
		if r.Status != StatusRunning {
			return // held: the cancel ended it
		}
		time.Sleep(300 * time.Millisecond)
	}
	r, _ := h.srv.db.GetRun(id)
	if r.Status == StatusRunning {
		t.Errorf("12s after alice's cancel (cancel_grace 5s, lease timeout 2s) run %s is still running on a worker that ignores cancels and heartbeats: nothing bounds it", id)
	}
}

// Promise (docs/ssh-commands.md, cancel): "a queued run never starts", and a cancel ends
// the run. Once, a cancel of a run whose apply phase waited in the pool's
// queue silently dequeued it and left the run running for ever, with no
// lease, no worker and no queue entry.
func TestCancelEndsARunWhoseApplyPhaseIsQueued(t *testing.T) {
	h, keys, _ := relayHarness(t, poolDataTemplate)
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	plan, js := planDataByHand(t, h)
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	handOverPlan(raw, id, job.Token, plan, js)
	settlePlanPhase(h, id, 15*time.Second)
	r, _ := h.srv.db.GetRun(id)
	if r.Phase != phaseApply || r.Status != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	// No worker polls: the apply phase waits in the queue. Alice cancels.
	out, errOut, code := h.ssh("alice", "cancel", id)
	t.Logf("cancel: %d %s %s", code, out, errOut)
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		if r, _ = h.srv.db.GetRun(id); r.Status != StatusRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.Status == StatusRunning {
		t.Errorf("8s after cancelling run %s while its apply phase was queued, it is still running (cancel requested by %q), on no worker and in no queue: %q",
			id, r.CancelRequested, h.srv.relay.waitReason(id))
	}
}

// Promise (a cancel while the worker waits for the scan's verdict ends the
// run once, with no stray "result rejected"). Once, a cancel that reached the
// worker while it read the modules still let it send its scan, so its
// cancelled result arrived for a lease the control node had already ended and
// was audited as "result rejected" against a worker that did nothing wrong.
func TestCancelDuringAWorkersScanEndsTheRunOnce(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig+bigModuleConfig)
	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	writeBigModule(t, w1.Projects["infra"].Path, 4000)
	startWorker(t, w1)
	var id string
	for attempt := range 3 {
		id = runIDOf(t, h.mustSSH("alice", "launch", "rs-big", "--dry-run", "--json"))
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r, _ := h.srv.db.GetRun(id)
			if len(r.Steps) > 0 || r.Status != StatusRunning && r.Status != StatusQueued || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if _, err := h.srv.Cancel(context.Background(), h.identity("alice"), id); err != nil {
			t.Logf("attempt %d: cancel: %v", attempt, err)
		}
		h.waitStatus(id, StatusCancelled, StatusFailed, StatusSucceeded, StatusAwaitingApproval)
		time.Sleep(time.Second) // the worker's result, if any
		r, _ := h.srv.db.GetRun(id)
		audit := h.mustSSH("bob", "audit", "--run", id)
		t.Logf("attempt %d: %s: %s; steps %v", attempt, r.Status, r.Message, stepNames(runView{Run: r}))
		if strings.Contains(audit, "result rejected") {
			t.Fatalf("a cancel during the worker's scan left a rejected result in the audit trail (%s: %s):\n%s", r.Status, r.Message, audit)
		}
		if r.Status != StatusCancelled {
			t.Fatalf("the cancelled run ended %s: %s", r.Status, r.Message)
		}
	}
}

// Promise (docs/ssh-commands.md, cancel: a cancel ends the run; an earlier fix covered a
// pool run cancelled while its apply phase waited in the queue). Once, a
// cancel between an apply phase's offer and its take found the run in no
// queue and under no lease, so nothing stopped it and the run stayed running
// for ever.
func TestCancelEndsARunWhoseApplyPhaseIsOffered(t *testing.T) {
	h, keys, _ := relayHarness(t, poolDataTemplate)
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	plan, js := planDataByHand(t, h)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	handOverPlan(raw, id, job.Token, plan, js)
	settlePlanPhase(h, id, 15*time.Second)
	if r, _ := h.srv.db.GetRun(id); r.Phase != phaseApply || r.Status != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	offer, ok := nextMsg(ch, relay.MsgOffer, 10*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	h.mustSSH("alice", "cancel", id) // the offer is not answered yet
	time.Sleep(4 * time.Second)      // the offer times out (2s) and goes back to the queue
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	if again, ok := nextMsg(ch, relay.MsgOffer, 10*time.Second); ok {
		raw.Send(relay.Msg{Type: relay.MsgTake, Run: again.Run})
		if m, ok := nextMsg(ch, relay.MsgReject, 10*time.Second); ok {
			t.Logf("take answered: %s", m.Message)
		}
	}
	h.ssh("alice", "cancel", id)
	deadline := time.Now().Add(8 * time.Second)
	var r store.Run
	for time.Now().Before(deadline) {
		if r, _ = h.srv.db.GetRun(id); r.Status != StatusRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r.Status == StatusRunning {
		t.Fatalf("run %s, cancelled by alice while its apply phase was offered to a worker, is still running (cancel requested by %q), in no queue (%q) and under no lease; nothing will end it",
			id, r.CancelRequested, h.srv.relay.waitReason(id))
	}
	if r.AppliedBy != "" || r.Status == StatusSucceeded {
		t.Fatalf("the cancelled run was applied: %s by %q", r.Status, r.AppliedBy)
	}
}

// Promise (docs/ssh-commands.md, cancel: a running run's tool is interrupted and the run
// ends cancelled; a cancelled apply never applies; "cancel works at every
// point" on a pool). Once, a cancel sent while the control node still
// prepared the job reached the worker before the job, was dropped as being
// for no run, and the ungated apply alice had cancelled applied and ended
// succeeded.
func TestCancelBeforeTheJobReachesTheWorkerEndsTheRun(t *testing.T) {
	h, keys, identity := relayHarness(t, slowCredentialTemplate)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute // no lease is lost here
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslowcred", "--var", "region=cancelled", "--json"))
	waitFor(t, "the run to be claimed", 20*time.Second, func() bool {
		r, _ := h.srv.db.GetRun(id)
		return r.Status != StatusQueued
	})
	out, errOut, code := h.ssh("alice", "cancel", id) // the credential command is still running
	t.Logf("cancel: %d %s %s", code, strings.TrimSpace(out), strings.TrimSpace(errOut))
	h.waitStatus(id, StatusCancelled, StatusSucceeded, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	state := filepath.Join(w1.Projects["infra"].Path, "infra/network/terraform.tfstate")
	_, applied := os.Stat(state)
	if r.Status != StatusCancelled || applied == nil {
		b, _ := os.ReadFile(state)
		t.Fatalf("an apply cancelled by alice (%q) before its job reached the worker ended %s (%s); steps %v; the worker's state: %.200s",
			r.CancelRequested, r.Status, r.Message, stepNames(runView{Run: r}), b)
	}
}

// Promise (docs/ssh-commands.md, cancel: "a cancel ends the run"; earlier fixes covered a
// cancel that reached a pool run between its phases). Once, a cancel that
// landed while the rules decided on a handed-over plan was lost: the apply
// phase was queued anyway, refused at its claim, and the run stayed running
// for ever in no queue and under no lease.
func TestCancelEndsARunWhileTheRulesDecide(t *testing.T) {
	policy := policyFile(t, slowPolicy)
	h, keys, _ := relayHarness(t, `
template "rdata13f" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "slow13f" {
  templates = ["rdata13f"]
  kinds     = ["apply"]
  plan_gate = "`+policy+`"
}
`)
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	plan, js := planDataByHand(t, h)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rdata13f")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	start := time.Now()
	handOverPlan(raw, id, job.Token, plan, js)
	time.Sleep(400 * time.Millisecond) // the plan is sealed; the policy evaluates
	out, errOut, code := h.ssh("alice", "cancel", id)
	t.Logf("cancel after %s: %d %s %s", time.Since(start).Round(time.Millisecond), code, strings.TrimSpace(out), strings.TrimSpace(errOut))
	settlePlanPhase(h, id, 20*time.Second)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("after the rules (%s): %s phase %s cancel %q: %s", time.Since(start).Round(time.Millisecond), r.Status, r.Phase, r.CancelRequested, r.Message)
	if r.Status != StatusRunning {
		return // held: the cancel ended it
	}
	// The worker's job ended with the hand-over; it polls again as a real
	// worker does and takes what it is offered.
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	if offer, ok := nextMsg(ch, relay.MsgOffer, 10*time.Second); ok {
		raw.Send(relay.Msg{Type: relay.MsgTake, Run: offer.Run})
		if m, ok := nextMsg(ch, relay.MsgReject, 10*time.Second); ok {
			t.Logf("take answered: %s", m.Message)
		}
	}
	time.Sleep(3 * time.Second)
	h.ssh("alice", "cancel", id)
	time.Sleep(3 * time.Second)
	if r, _ = h.srv.db.GetRun(id); r.Status == StatusRunning {
		t.Fatalf("run %s, cancelled by alice while the rules decided on its plan, is still running (phase %s, cancel requested by %q), in no queue (%q) and under no lease; a second cancel changed nothing",
			id, r.Phase, r.CancelRequested, h.srv.relay.waitReason(id))
	}
	if r.AppliedBy != "" || r.Status == StatusSucceeded {
		t.Fatalf("the cancelled run was applied: %s by %q", r.Status, r.AppliedBy)
	}
}

// Promise (the fix, relay_lease.go cancelledBeforeSent): a cancel while the
// control node prepares an approved apply phase (its credential command
// running) ends the run cancelled; the worker gets a reject, not the job; the
// released plan, opened for the job, counts as used, so a second approval
// cannot apply it later.
func TestCancelWhileAnApplyPhaseIsPreparedEndsTheRun(t *testing.T) {
	h, keys, _ := relayHarness(t, slowCredentialTemplate+`
template "rslowdata13f" {
  project     = "infra"
  command     = "infra/data"
  queue       = "eu"
  credentials = ["slow13e"]
}
rule "hold13f" {
  templates   = ["rslowdata13f"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute
	h.srv.relay.mu.Unlock()
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	runTofuByHand(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, js := planDataByHand(t, h, "instances=2")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rslowdata13f")
	handOverPlan(raw, id, job.Token, plan, js)
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed, StatusRefused)
	r, _ := h.srv.db.GetRun(id)
	if r.Status != StatusAwaitingApproval || r.Proposal == nil {
		t.Fatalf("the destroying plan was not held: %s: %s", r.Status, r.Message)
	}
	digest := r.Proposal.Digest
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	h.mustSSH("bob", "approve", id, "--digest", digest)
	offer, ok := nextMsg(ch, relay.MsgOffer, 10*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	waitFor(t, "the apply phase to be claimed", 10*time.Second, func() bool {
		r, _ := h.srv.db.GetRun(id)
		return r.Status == StatusRunning
	})
	h.mustSSH("alice", "cancel", id) // the 3-second credential command runs
	deadline := time.After(15 * time.Second)
	for done := false; !done; {
		select {
		case m := <-ch:
			if m.Type == relay.MsgJob {
				t.Fatalf("the cancelled apply phase's job reached the worker")
			}
			done = m.Type == relay.MsgReject && m.Run == id
		case <-deadline:
			t.Fatal("no answer to the take")
		}
	}
	h.waitStatus(id, StatusCancelled, StatusFailed, StatusSucceeded)
	r, _ = h.srv.db.GetRun(id)
	if r.Status != StatusCancelled || r.Proposal == nil || !r.Proposal.Used {
		t.Fatalf("the apply phase cancelled during its preparation: %s (%s), proposal %+v", r.Status, r.Message, r.Proposal)
	}
	if _, _, code := h.ssh("bob", "approve", id, "--digest", digest); code == 0 {
		t.Fatalf("a cancelled run's used plan was approved again")
	}
}

// Promise (docs/ssh-commands.md, cancel; relay_lease.go cancelledBeforeSent, the fix: "a
// cancel while a job is prepared ends the run instead of being lost before
// it"; relay_end.go cancel: a leased run's worker "is told to interrupt its
// tool"). Once, a cancel that came while an apply phase's job was still being
// encoded was queued ahead of the job, so the worker dropped it and applied
// the released plan although the person had been told "interrupt sent".
func TestCancelNeverOvertakesTheApplyJob(t *testing.T) {
	h, keys, identity := relayHarness(t, blobGateTemplate)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	writeBlobModule(t, w1.Projects["infra"].Path, 16<<20)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rblob13g", "--json"))
	var planLease *relayLease
	waitFor(t, "the plan phase's lease", 60*time.Second, func() bool {
		h.srv.relay.mu.Lock()
		defer h.srv.relay.mu.Unlock()
		planLease = h.srv.relay.leases[id]
		return planLease != nil
	})
	// Alice's cancel: its first half (cancelRun's transaction) lands
	// while the control node prepares the apply phase's job, after its
	// claim; its second half (relayHub.cancel) just after take marked the
	// lease sent, while the job is encoded. Cancel runs the two halves
	// back to back; under load (the encoding itself allocates tens of
	// MiB) a goroutine stalls between them for as long, as any cancel
	// arriving in that window does.
	var l *relayLease
	waitFor(t, "the apply phase to be claimed", 3*time.Minute, func() bool {
		h.srv.relay.mu.Lock()
		l = h.srv.relay.leases[id]
		h.srv.relay.mu.Unlock()
		r, _ := h.srv.db.GetRun(id)
		return l != nil && l != planLease && r.AppliedBy == "w1"
	})
	if _, err := h.srv.db.UpdateRun(id, func(r *store.Run) error { r.CancelRequested = "alice"; return nil }); err != nil {
		t.Fatal(err)
	}
	for sent := false; !sent; {
		h.srv.relay.mu.Lock()
		sent = l.sent
		h.srv.relay.mu.Unlock()
	}
	c := relayConnOf(h, "eu", "w1")
	busy := outboxLen(c) > 0 || c.StuckFor(time.Now()) > 0
	_, signalled := h.srv.relay.cancel(id)
	h.srv.audit(id, "alice", "cancel", "interrupt sent")
	t.Logf("cancel signalled: %v; anything queued or being written to w1 before it: %v", signalled, busy)
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	audit := h.mustSSH("alice", "audit", "--run", id)
	_, statErr := os.Stat(filepath.Join(w1.Projects["infra"].Path, "infra/blob13f/terraform.tfstate"))
	t.Logf("%s (applied by %q): %s; state written: %v\n%s", r.Status, r.AppliedBy, r.Message, statErr == nil, audit)
	if r.Status == StatusSucceeded || statErr == nil {
		t.Fatalf("alice cancelled run %s as its apply phase was leased to w1 (audit: \"interrupt sent\"), yet w1 applied the plan: the run is %s and its state was written", id, r.Status)
	}
}

// Promise (docs/mcp.md): "Every result carries both text (what
// the SSH command prints) and structured content (the object show --json
// prints)"; docs/json.md: cancel prints the whole run, plan text included,
// and says what it did ("run N was held for approval and has been cancelled").
// Once, cancel_run's structured run lacked the plan text show --json prints,
// and its text lacked the sentence saying what the cancel did.
func TestMCPCancelResultIsTheShowJSONObject(t *testing.T) {
	h := newHarness(t, dataTemplates)
	alice := h.mcpAs("alice")
	var run runView
	alice.OK("launch", map[string]any{"template": "data-free", "kind": "apply"}, &run)
	h.waitStatus(run.ID, StatusAwaitingApproval, StatusFailed)
	var held runView
	alice.OK("show_run", map[string]any{"run": run.ID}, &held)
	if held.Proposal == nil || held.Proposal.PlanText == "" {
		t.Fatalf("the held apply has no plan text: %+v", held.Proposal)
	}
	var cancelled runView
	text := alice.OK("cancel_run", map[string]any{"run": run.ID}, &cancelled)
	shown := h.show("alice", run.ID)
	if shown.Proposal == nil || shown.Proposal.PlanText == "" {
		t.Fatalf("show --json after the cancel has no plan text")
	}
	if cancelled.Proposal == nil || cancelled.Proposal.PlanText != shown.Proposal.PlanText {
		t.Errorf("cancel_run's structured run lacks the plan text show --json prints (%d bytes)", len(shown.Proposal.PlanText))
	}
	if !strings.Contains(text, "was held for approval and has been cancelled") {
		t.Errorf("cancel_run's text does not say what the cancel did, as cancel does:\n%s", text)
	}
}

// Promise (README; cancel_run: "your own runs (a person with the approve
// role: any run)"): a person with only the launch role cancels only runs they
// asked for. Once, a user named schedule with just the launch role passed the
// own-run test and cancelled every scheduled check, and its actions read in
// the audit trail as the schedule's.
func TestAUserNamedScheduleCannotCancelScheduledChecks(t *testing.T) {
	for _, name := range config.ReservedIdentityNames {
		for _, kind := range []string{"user", "agent"} {
			src := fmt.Sprintf("server {\n  data_dir = %q\n}\n%s %q {\n  public_key = \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEMqYtaU1fgGeV5t8wMv6bMMjC1C8b4XhSiXqaUXDs1H\"\n}\n", t.TempDir(), kind, name)
			p := filepath.Join(t.TempDir(), "c.hcl")
			os.WriteFile(p, []byte(src), 0o600)
			if _, err := config.Load(p); err == nil || !strings.Contains(err.Error(), "Reserved name") {
				t.Errorf("%s %q: %v; want the name refused as the server's own", kind, name, err)
			}
		}
	}
}

// bigModuleConfig is a rule exempting dry runs of rs-big behind the
// scan, and rs-big on pool eu.
const bigModuleConfig = `
rule "review13c" {
  templates        = ["rs-big"]
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
template "rs-big" {
  project = "infra"
  command = "infra/big"
  queue   = "eu"
}
`

// writeBigModule writes infra/big into checkout: a root calling the local
// module ./m of n files, so the scan after tofu get takes a while.
func writeBigModule(t *testing.T, checkout string, n int) {
	t.Helper()
	dir := filepath.Join(checkout, "infra/big")
	if err := os.MkdirAll(filepath.Join(dir, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "main.tf"), "module \"m\" {\n  source = \"./m\"\n}\n")
	for i := range n {
		writeFile(t, filepath.Join(dir, "m", "r"+strconv.Itoa(i)+".tf"),
			"resource \"terraform_data\" \"r"+strconv.Itoa(i)+"\" {\n  input = \"value number "+strconv.Itoa(i)+"\"\n}\n")
	}
}

func policyFile(t *testing.T, text string) string {
	t.Helper()
	return testkit.PolicyFile(t, text)
}

// slowPolicy lets every plan through after about two seconds of
// evaluation (a policy over a large plan, or one that compares many
// resources, takes as long).
const slowPolicy = `package switchtender.plan

hold contains msg if {
	n := count([1 | some x in numbers.range(1, 400); some y in numbers.range(1, 4000); x * y == -1])
	n > 0
	msg := "never"
}
`

// Cancelling a running apply interrupts tofu, which stops its provisioner
// and ends well before the command it runs would.
func TestCancelRunningApply(t *testing.T) {
	h := newHarness(t, `
template "slow" {
  project = "infra"
  command = "infra/slow"
}
`)
	h.mustSSH("alice", "launch", "slow")
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(h.mustSSH("alice", "log", "1"), "started-slow") {
		if time.Now().After(deadline) {
			t.Fatalf("the slow apply never started:\n%s", h.mustSSH("alice", "log", "1"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, errOut, code := h.ssh("carol", "cancel", "1"); code == 0 || !strings.Contains(errOut, "may cancel only runs they asked for") {
		t.Fatalf("carol cancelled alice's run: exit %d %q", code, errOut)
	}
	start := time.Now()
	h.mustSSH("alice", "cancel", "1")
	h.waitStatus("1", StatusCancelled)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancel took %v", d)
	}
	r, _ := h.srv.db.GetRun("1")
	if !strings.Contains(r.Message, "interrupt") {
		t.Errorf("message = %q", r.Message)
	}
}

// Cancel racing the last approval, many times: whenever cancel was
// accepted and said cancelled, the run never applies; whenever approve
// was accepted first, cancel either stops it or is refused — the run ends
// in exactly one final status and applies at most once.
func TestCancelRacingTheLastApprovalEndsTheRunOnce(t *testing.T) {
	h := newHarness(t, dataTemplates+twoReviewRules)
	for i := 1; i <= 6; i++ {
		id := strconv.Itoa(i)
		h.mustSSH("carol", "launch", "data", "--var", "instances="+id, "--wait")
		r, _ := h.srv.db.GetRun(id)
		if r.Status != StatusAwaitingApproval {
			t.Fatalf("run %s is %s", id, r.Status)
		}
		if _, err := h.srv.Approve(context.Background(), h.identity("alice"), id, r.Proposal.Digest); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var cancelled store.Run
		var aerr, cerr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, aerr = h.srv.Approve(context.Background(), h.identity("bob"), id, r.Proposal.Digest)
		}()
		go func() { defer wg.Done(); cancelled, cerr = h.srv.Cancel(context.Background(), h.identity("carol"), id) }()
		wg.Wait()
		h.waitStatus(id, StatusSucceeded, StatusCancelled, StatusFailed, StatusStale)
		final, _ := h.srv.db.GetRun(id)
		applied := false
		for _, st := range final.Steps {
			applied = applied || st.Name == "apply"
		}
		t.Logf("run %s: approve err=%v cancel err=%v (cancel saw %s) -> %s applied=%v", id, aerr, cerr, cancelled.Status, final.Status, applied)
		if cerr == nil && cancelled.Status == StatusCancelled && (applied || final.Status != StatusCancelled) {
			t.Errorf("run %s: cancel said cancelled, yet the run is %s (applied %v)", id, final.Status, applied)
		}
		if aerr != nil && cerr != nil {
			t.Errorf("run %s: both approve and cancel refused: %v / %v", id, aerr, cerr)
		}
		if final.Status == StatusSucceeded && !applied {
			t.Errorf("run %s succeeded without applying", id)
		}
	}
}

// Cancel at each status a run can be in: queued (behind another run in its
// directory), running, held, held after a partial release, queued to apply
// after release; then cancel twice. Reject after a partial release ends the
// run rejected, and a rejected run's releases do not apply.
func TestCancelAtEveryStatusEndsTheRun(t *testing.T) {
	h := newHarness(t, dataTemplates+twoReviewRules+`
template "slow" {
  project = "infra"
  command = "infra/slow"
}
`)
	// running, then queued behind it in the same directory
	h.mustSSH("alice", "launch", "slow")
	h.waitStatus("1", StatusRunning)
	h.mustSSH("alice", "launch", "slow")
	r2, _ := h.srv.db.GetRun("2")
	if r2.Status != StatusQueued {
		t.Fatalf("run 2 is %s", r2.Status)
	}
	h.mustSSH("alice", "cancel", "2")
	h.waitStatus("2", StatusCancelled)
	h.mustSSH("alice", "cancel", "1")
	h.waitStatus("1", StatusCancelled)
	for _, id := range []string{"1", "2"} {
		if _, errOut, code := h.ssh("alice", "cancel", id); code != 1 || !strings.Contains(errOut, "already ended") {
			t.Errorf("cancel %s twice: exit %d %q", id, code, errOut)
		}
	}
	// held after a partial release, cancelled by the requester
	h.mustSSH("carol", "launch", "data", "--wait")
	r3, _ := h.srv.db.GetRun("3")
	h.mustSSH("alice", "approve", "3", "--digest", r3.Proposal.Digest)
	h.mustSSH("carol", "cancel", "3")
	h.waitStatus("3", StatusCancelled)
	if _, errOut, code := h.ssh("bob", "approve", "3", "--digest", r3.Proposal.Digest); code != 1 {
		t.Errorf("approve after cancel: exit %d %q", code, errOut)
	}
	// reject after a partial release
	h.mustSSH("carol", "launch", "data", "--wait")
	r4, _ := h.srv.db.GetRun("4")
	h.mustSSH("alice", "approve", "4", "--digest", r4.Proposal.Digest)
	h.mustSSH("bob", "reject", "4", "--reason", "no")
	if r, _ := h.srv.db.GetRun("4"); r.Status != StatusRejected {
		t.Errorf("reject after a partial release: %s", r.Status)
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/data/terraform.tfstate")); err == nil {
		t.Errorf("a cancelled or rejected run applied")
	}
}

// Not a break (README: a person with the approve role may cancel any run),
// recorded as an observation: dave, whose reject is refused because no
// holding rule names him, ends the same held run with cancel.
func TestAnyApproverMayCancelAHeldRunTheyMayNotReject(t *testing.T) {
	h := newHarness(t, dataTemplates+twoReviewRules)
	h.mustSSH("carol", "launch", "data", "--wait")
	_, rejErr, rejCode := h.ssh("dave", "reject", "1")
	_, canErr, canCode := h.ssh("dave", "cancel", "1")
	r, _ := h.srv.db.GetRun("1")
	t.Logf("dave reject: exit %d %q; dave cancel: exit %d %q; run 1 %s", rejCode, strings.TrimSpace(rejErr), canCode, canErr, r.Status)
	if rejCode != 1 {
		t.Errorf("dave's reject was accepted")
	}
}

// A context's cause tells a cancel from the server stopping: a cancelled
// apply ends cancelled naming who, an interrupted one interrupted.
func TestCancelAndInterruptAreTheCause(t *testing.T) {
	blocking := func(started chan<- struct{}) *fakeTool {
		return &fakeTool{fn: func(ctx context.Context, step string, inv exec.Invocation) ([]byte, exec.Result, error) {
			if step == "apply" {
				close(started)
				<-ctx.Done()
				return nil, exec.Result{ExitCode: -1}, ctx.Err()
			}
			return nil, exec.Result{}, nil
		}}
	}
	started := make(chan struct{})
	h := newHarness(t, dataTemplates)
	h.srv.runner = blocking(started)
	h.mustSSH("carol", "launch", "data")
	<-started
	h.mustSSH("carol", "cancel", "1")
	h.waitStatus("1", StatusCancelled)
	if r, _ := h.srv.db.GetRun("1"); !strings.Contains(r.Message, "Cancelled by carol during apply") || r.CancelRequested != "carol" {
		t.Errorf("cancelled run: %q (requested by %q)", r.Message, r.CancelRequested)
	}

	started = make(chan struct{})
	h.srv.runner = blocking(started)
	h.mustSSH("carol", "launch", "data")
	<-started
	srv := h.srv
	h.srv = nil
	srv.Close()
	h.start()
	r, _ := h.srv.db.GetRun("2")
	if r.Status != StatusInterrupted || !strings.Contains(r.Message, "server stopped during apply") {
		t.Errorf("interrupted run: %s %q", r.Status, r.Message)
	}
}

// Cancelling a pool's run: a queued one never reaches a worker; a running
// one's worker interrupts its tool and the run ends cancelled.
func TestRelayCancel(t *testing.T) {
	h, keys, identity := relayHarness(t, `
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`)
	queued := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=c0", "--json"))
	h.mustSSH("alice", "cancel", queued)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w1)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the slow apply to start", 60*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "log", id), "started-slow")
	})
	h.mustSSH("alice", "cancel", id)
	h.waitStatus(id, StatusCancelled, StatusFailed, StatusSucceeded)
	if r, _ := h.srv.db.GetRun(id); r.Status != StatusCancelled || !strings.Contains(r.Message, "Cancelled by alice") || !strings.Contains(r.Message, "worker w1") {
		t.Errorf("the running run: %s %s", r.Status, r.Message)
	}
	if r, _ := h.srv.db.GetRun(queued); r.Status != StatusCancelled || r.PlannedBy != "" {
		t.Errorf("the queued run reached a worker: %s by %q", r.Status, r.PlannedBy)
	}
}
