package server

import (
	"bytes"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
)

// attack13bData is a pool template over infra/data (terraform_data
// resources: a plan that destroys is made without any provider) and a rule
// that holds any plan destroying something for bob: a plan-content rule,
// so an apply of rdata is gated (its plan is handed over and measured).
const attack13bData = `
template "rdata" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "no-destroys-rdata" {
  templates   = ["rdata"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`

// attack13bTofu runs OpenTofu by hand in dir of the harness's project and
// returns its standard output.
func attack13bTofu(t *testing.T, h *harness, dir string, args ...string) []byte {
	t.Helper()
	bin, err := osexec.LookPath("tofu")
	for _, p := range filepath.SplitList(h.runPath()) {
		if c := filepath.Join(p, "tofu"); err != nil {
			if _, serr := os.Stat(c); serr == nil {
				bin, err = c, nil
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(bin, args...)
	cmd.Dir = filepath.Join(h.project, dir)
	cmd.Env = append(append([]string{}, testEnviron...), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tofu %v by hand: %v\n%s%s", args, err, out.Bytes(), errb.Bytes())
	}
	return out.Bytes()
}

// attack13bPlan makes a real saved plan of infra/data by hand (vars as
// -var arguments) and returns it with its real `show -json`.
func attack13bPlan(t *testing.T, h *harness, vars ...string) (plan, js []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.tfplan")
	args := []string{"plan", "-input=false", "-out=" + path}
	for _, v := range vars {
		args = append(args, "-var", v)
	}
	attack13bTofu(t, h, "infra/data", args...)
	js = bytes.TrimSpace(attack13bTofu(t, h, "infra/data", "show", "-json", path))
	if i := bytes.IndexByte(js, '{'); i > 0 {
		t.Logf("show -json began with %q", js[:i])
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan, js
}

// attack13bReader reads every message of a raw worker into a channel, so
// a test can wait for one with a timeout and never hang.
func attack13bReader(w *rawWorker) chan relay.Msg {
	ch := make(chan relay.Msg, 64)
	go func() {
		defer close(ch)
		for {
			m, err := w.c.Recv()
			if err != nil {
				return
			}
			ch <- m
		}
	}()
	return ch
}

// attack13bNext waits up to d for a message of type typ (others are
// skipped), or reports none.
func attack13bNext(ch chan relay.Msg, typ string, d time.Duration) (relay.Msg, bool) {
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return relay.Msg{}, false
			}
			if m.Type == typ {
				return m, true
			}
		case <-deadline:
			return relay.Msg{}, false
		}
	}
}

// attack13bHandOver hands plan over with js as its `show -json`.
func attack13bHandOver(raw *rawWorker, run string, token uint64, plan, js []byte) {
	raw.send(relay.Msg{Type: relay.MsgPlanning, Run: run, Token: token})
	raw.send(relay.Msg{Type: relay.MsgPlanStart, Run: run, Token: token, Size: int64(len(plan)), JSONSize: int64(len(js))})
	raw.send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "plan", Blob: plan})
	raw.send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "json", Blob: js})
	raw.send(relay.Msg{Type: relay.MsgPlanEnd, Run: run, Token: token})
}

// attack13bLease has raw (worker w2 of pool eu) take the launched run and
// returns its job.
func attack13bLease(t *testing.T, h *harness, raw *rawWorker, ch chan relay.Msg, args ...string) (string, relay.Msg) {
	t.Helper()
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", append([]string{"launch"}, append(args, "--json")...)...))
	offer, ok := attack13bNext(ch, relay.MsgOffer, 15*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("offer %+v (got one: %v) for run %s", offer, ok, id)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job, ok := attack13bNext(ch, relay.MsgJob, 15*time.Second)
	if !ok {
		t.Fatalf("no job for %s", id)
	}
	return id, job
}

// attack13bSettle waits until the run leaves running in its plan phase.
func attack13bSettle(h *harness, id string, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		r, _ := h.srv.db.GetRun(id)
		if Status(r.Status) != StatusRunning || Phase(r.Phase) == phaseApply {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Promise (README "Gated applies across workers"; issue 13 builds on the
// gate's "the gate measures what the plan destroys from that saved file,
// rendered with tofu show -json"): the rules decide on what the saved plan
// does, as for a local run.
// Break: the control node never renders the plan itself; it decides on the
// `show -json` bytes the worker sends next to the plan (relay_plan.go
// planned: `execution{... planJSON: l.planJSON}` then measureStep and
// decideStep read l.planJSON), with nothing tying those bytes to the plan
// it seals. A worker of the pool hands over a real plan that destroys three
// terraform_data.server instances with a rendering that changes nothing:
// max_destroy = 0 is satisfied, the rules "pass" the destroying plan with
// no approval by bob, and the sealed destroy plan is queued for the pool's
// next worker to apply (an honest one, which applies exactly that file).
func TestAttack13bHarmlessJSONForADestroyPlan(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13bData)
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	attack13bTofu(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	destroy, realJSON := attack13bPlan(t, h, "instances=0")
	if !bytes.Contains(realJSON, []byte(`"delete"`)) {
		t.Fatalf("the hand-made plan destroys nothing:\n%s", realJSON)
	}
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	harmless := []byte(`{"format_version":"1.2","terraform_version":"1.9.0","planned_values":{"root_module":{}},"resource_changes":[],"configuration":{"root_module":{}}}`)
	attack13bHandOver(raw, id, job.Token, destroy, harmless)
	attack13bSettle(h, id, 15*time.Second)
	r, _ := h.srv.db.GetRun(id)
	if statusOf(r) == StatusRefused && strings.Contains(r.Message, "rendering of the saved plan is not the plan's") && Phase(r.Phase) != phaseApply {
		return // fixed: the control node counts the plan file's own changes and refuses a rendering that does not match
	}
	if r.Proposal == nil {
		t.Fatalf("no proposal: %s %s", r.Status, r.Message)
	}
	bobApproved := false
	for _, a := range r.Approvals {
		if a.By == "bob" {
			bobApproved = true
		}
	}
	if Phase(r.Phase) == phaseApply && !bobApproved {
		t.Errorf("a plan destroying 3 resources passed max_destroy = 0 without bob (proposal: %d to destroy, digest %s; approvals %+v): the control node decided on the worker's JSON, not on the plan it sealed; status %s",
			r.Proposal.Destroy, r.Proposal.Digest, r.Approvals, r.Status)
	}
	if r.Proposal.Destroy != 3 {
		t.Errorf("the proposal shows %d destroys; the sealed plan destroys 3", r.Proposal.Destroy)
	}
}

// Promise (README `cancel`): a running run's tool is interrupted and the
// run ends cancelled; a cancelled apply never applies.
// Break: relayHub.cancel (relay_end.go) only sends the worker a cancel
// message; nothing on the control node marks the lease cancelled. A worker
// that ignores the cancel and hands over its plan anyway is taken at its
// word: planned (relay_plan.go) seals it and decideStep, finding no
// destroy, passes it, and passOn queues the apply phase for the pool's
// next worker, although alice cancelled the run. Nothing checks
// CancelRequested between the hand-over and the apply.
func TestAttack13bCancelledGatedPlanStillGoesToApply(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13bData)
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	plan, js := attack13bPlan(t, h)
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	h.mustSSH("alice", "cancel", id)
	if _, ok := attack13bNext(ch, relay.MsgCancel, 10*time.Second); !ok {
		t.Fatalf("the worker was not told to cancel")
	}
	// The worker ignores it and hands its plan over.
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 15*time.Second)
	time.Sleep(500 * time.Millisecond)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("after the hand-over: status %s phase %s cancel %q: %s", r.Status, r.Phase, r.CancelRequested, r.Message)
	if r.CancelRequested == "" {
		t.Fatalf("the cancel was not recorded: %+v", r.Status)
	}
	if Phase(r.Phase) == phaseApply || Status(r.Status) == StatusSucceeded {
		t.Errorf("run %s, cancelled by alice during its plan, went on to its apply phase (status %s, phase %s): %s", id, r.Status, r.Phase, r.Message)
	}
	if Status(r.Status) != StatusCancelled {
		t.Errorf("the cancelled run is %s, not cancelled: %s", r.Status, r.Message)
	}
	if Phase(r.Phase) != phaseApply {
		return
	}
	// An honest worker of the pool joins: it takes the cancelled run's
	// apply phase and applies it.
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w1)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r, _ = h.srv.db.GetRun(id); Status(r.Status) != StatusRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if Status(r.Status) == StatusSucceeded || r.AppliedBy != "" {
		t.Errorf("the run alice cancelled was applied by worker %q: status %s: %s", r.AppliedBy, r.Status, r.Message)
	}
}

// Promise (README `cancel`): a running run's tool gets SIGINT and SIGKILL
// only after cancel_grace: a cancelled run ends.
// Break: on a relay pool the only bound is the heartbeat (relay_end.go
// expire looks at l.last only; cancel sends one message and sets no
// deadline). A worker that keeps heartbeating and never sends a result
// keeps a cancelled run "running" — and its working directory busy for
// the whole pool — for as long as it likes, long past cancel_grace (5s
// here) and the lease timeout (2s).
func TestAttack13bCancelIgnoredWhileHeartbeating(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rnet", "--dry-run", "--var", "region=hb")
	h.mustSSH("alice", "cancel", id)
	if _, ok := attack13bNext(ch, relay.MsgCancel, 10*time.Second); !ok {
		t.Fatalf("the worker was not told to cancel")
	}
	stop := time.Now().Add(12 * time.Second) // cancel_grace 5s + lease timeout 2s + margin
	for time.Now().Before(stop) {
		if err := raw.c.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token}); err != nil {
			break
		}
		r, _ := h.srv.db.GetRun(id)
		if Status(r.Status) != StatusRunning {
			return // held: the cancel ended it
		}
		time.Sleep(300 * time.Millisecond)
	}
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) == StatusRunning {
		t.Errorf("12s after alice's cancel (cancel_grace 5s, lease timeout 2s) run %s is still running on a worker that ignores cancels and heartbeats: nothing bounds it", id)
	}
}

// Held: the control node masks a worker's log lines again with every value
// it sealed into the payload: a worker that leaks the credential and the
// secret answer in clear, in a log line and in its result's message, leaks
// neither into the stored log or the run's message.
func TestAttack13bWorkerLogLeakMaskedAgainHeld(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rsecret", "--dry-run", "--var", "db_password="+relayPassword)
	if job.Clear || bytes.Contains(job.Payload, []byte(relayCloudKey)) || bytes.Contains(job.Payload, []byte(relayPassword)) {
		t.Errorf("the payload carries a secret in clear")
	}
	raw.send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "key=" + relayCloudKey + " pw=" + relayPassword + "\n"})
	raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusFailed, Message: "failed with " + relayCloudKey})
	h.waitStatus(id, StatusFailed, StatusSucceeded)
	log := h.mustSSH("alice", "log", id)
	r, _ := h.srv.db.GetRun(id)
	for _, s := range []string{relayCloudKey, relayPassword} {
		if strings.Contains(log, s) || strings.Contains(r.Message, s) {
			t.Errorf("%q reached the stored log or message", s)
		}
	}
}

// Held: `workers` shows carol and an agent names, pools, versions, states
// and runs only: no key, fingerprint or path of a worker.
func TestAttack13bWorkersCommandLeaksNoKeyHeld(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	_ = raw
	for _, who := range []string{"carol", "deploy-bot"} {
		out, _, _ := h.ssh(who, "workers", "--json")
		var vs []map[string]any
		_ = json.Unmarshal([]byte(out), &vs)
		for _, bad := range []string{"SHA256:", "ssh-ed25519", "AAAA", "/tmp", "age1", keys["w2"].line} {
			if strings.Contains(out, bad) {
				t.Errorf("%s's workers output holds %q: %s", who, bad, out)
			}
		}
	}
}

// Promise (README `cancel`): "a queued run never starts", and a cancel
// ends the run. Break: a gated plan no rule held is passed on (relay_plan.go
// passOn) and waits in the pool's queue for its apply phase with status
// running. cancelRun (cancel.go) sees running, only records
// CancelRequested and calls relay.cancel, whose dequeue (relay_end.go
// cancel -> dequeue) silently removes it from the queue: no lease, no
// worker, no queue entry, and nothing ends the run. It stays "running"
// forever, its working directory no longer served.
func TestAttack13bCancelWhileApplyPhaseQueuedStrandsTheRun(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13bData)
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	plan, js := attack13bPlan(t, h)
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 15*time.Second)
	r, _ := h.srv.db.GetRun(id)
	if Phase(r.Phase) != phaseApply || Status(r.Status) != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	// No worker polls: the apply phase waits in the queue. Alice cancels.
	out, errOut, code := h.ssh("alice", "cancel", id)
	t.Logf("cancel: %d %s %s", code, out, errOut)
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		if r, _ = h.srv.db.GetRun(id); Status(r.Status) != StatusRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if Status(r.Status) == StatusRunning {
		t.Errorf("8s after cancelling run %s while its apply phase was queued, it is still running (cancel requested by %q), on no worker and in no queue: %q",
			id, r.CancelRequested, h.srv.relay.waitReason(id))
	}
}

// Promise (issue 13 item 6): a run's `show` names the worker that planned
// and the one that applied. Break: markWorker (relay_lease.go) treats
// every plan phase of an apply as "an ungated apply plans and applies in
// one step" and sets AppliedBy at the claim of a GATED plan phase, so a
// gated apply held for approval — nothing applied — shows "planned and
// applied on relay worker w2".
func TestAttack13bHeldPlanShowsAnApplier(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13bData)
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	attack13bTofu(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, js := attack13bPlan(t, h, "instances=0")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 15*time.Second)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusAwaitingApproval {
		t.Fatalf("the destroy plan was not held: %s %s", r.Status, r.Message)
	}
	if r.AppliedBy != "" {
		t.Errorf("a run held for approval, nothing applied, records AppliedBy %q; show says:\n%s", r.AppliedBy, h.mustSSH("alice", "show", id))
	}
}
