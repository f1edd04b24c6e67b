package server

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/worker"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// attack13Hold holds every apply of rnet for bob, so a gated plan is saved.
const attack13Hold = `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`

// attack13JSON is a minimal `show -json` rendering the gate reads.
var attack13JSON = []byte(`{"format_version":"1.2","resource_changes":[]}`)

// attack13HeldPlans plans gated applies of rnet for each region on a real
// worker w1 (then drained away), and returns the runs, their digests and
// the saved plans in clear (read from their seals, in memory).
func attack13HeldPlans(t *testing.T, h *harness, keys map[string]relayKey, identity string, regions ...string) (ids, digests []string, plans [][]byte) {
	t.Helper()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	errs, drain := startWorker(t, w1)
	for _, region := range regions {
		id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region="+region, "--json"))
		h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
		r, _ := h.srv.db.GetRun(id)
		if Status(r.Status) != StatusAwaitingApproval || r.Proposal == nil {
			t.Fatalf("gated plan %s: %s %s", id, r.Status, r.Message)
		}
		plain, err := h.srv.openSealedPlan(id, r.Proposal.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ids, digests, plans = append(ids, id), append(digests, r.Proposal.Digest), append(plans, plain)
	}
	drain()
	select {
	case <-errs:
	case <-time.After(20 * time.Second):
		t.Fatal("w1 did not drain")
	}
	return ids, digests, plans
}

// recvWithin reads one message, or reports none within d (the reader is
// then left behind: read no more from w).
func recvWithin(w *rawWorker, d time.Duration) (relay.Msg, bool) {
	ch := make(chan relay.Msg, 1)
	go func() {
		m, err := w.c.Recv()
		if err == nil {
			ch <- m
		}
	}()
	select {
	case m := <-ch:
		return m, true
	case <-time.After(d):
		return relay.Msg{}, false
	}
}

// attack13HandOver sends plan as a gated plan's hand-over on a lease.
func attack13HandOver(raw *rawWorker, run string, token uint64, plan []byte) {
	raw.send(relay.Msg{Type: relay.MsgPlanning, Run: run, Token: token})
	raw.send(relay.Msg{Type: relay.MsgPlanStart, Run: run, Token: token, Size: int64(len(plan)), JSONSize: int64(len(attack13JSON))})
	raw.send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "plan", Blob: plan})
	raw.send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "json", Blob: attack13JSON})
	raw.send(relay.Msg{Type: relay.MsgPlanEnd, Run: run, Token: token})
}

// Promise: the apply's worker applies exactly the approved digest; a worker
// that sends back a different plan file for the apply must be refused.
// Break: planMessage (relay_plan.go, called from leaseMessage in
// relay_end.go) accepts plan_start/plan_chunk/plan_end on ANY lease, with
// no check that the lease is a gated plan phase. The worker leased the
// APPLY phase of approved run A hands over run B's plan: the control node
// overwrites A's sealed plan blob (sealInMemory -> PutBlob) and re-decides,
// replacing the approved proposal with one for a plan nobody approved.
func TestAttack13ApplyWorkerSwapsThePlan(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13Hold)
	ids, digests, plans := attack13HeldPlans(t, h, keys, identity, "a1", "b1")
	a, digestA, planB := ids[0], digests[0], plans[1]
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	raw.send(relay.Msg{Type: relay.MsgPoll})
	h.mustSSH("bob", "approve", a, "--digest", digestA)
	if offer := raw.recv(); offer.Type != relay.MsgOffer || offer.Run != a {
		t.Fatalf("offer %+v", offer)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: a})
	job := raw.recv()
	if job.Type != relay.MsgJob || job.Phase != string(phaseApply) {
		t.Fatalf("job %+v is not the apply phase", job)
	}
	attack13HandOver(raw, a, job.Token, planB)
	if m, ok := recvWithin(raw, 3*time.Second); !ok || m.Type != relay.MsgReject {
		t.Errorf("the apply's worker handing over another plan was answered with %+v (answered: %v), not a reject", m, ok)
	}
	time.Sleep(time.Second)
	r, _ := h.srv.db.GetRun(a)
	if r.Proposal == nil || r.Proposal.Digest != digestA {
		got := "(none)"
		if r.Proposal != nil {
			got = r.Proposal.Digest
		}
		t.Errorf("the approved run's proposal is now %s (approved %s): the apply worker's plan replaced it; status %s: %s", got, digestA, r.Status, r.Message)
	}
	if Status(r.Status) == StatusAwaitingApproval {
		t.Errorf("the approved run went back to awaiting approval with the worker's plan: %s", r.Message)
	}
	// The refusal ends the run, and its end drops the sealed plan (spec:
	// "wiped when the apply ends"); while a plan is stored it is A's.
	if _, err := h.srv.db.GetBlob(blobPlan, a); err == nil || !statusOf(r).Final() {
		if _, err := h.srv.openSealedPlan(a, digestA); err != nil {
			t.Errorf("the approved run's sealed plan was overwritten by the worker's: %v", err)
		}
	}
}

// Promise: a worker takes only what it is leased; a dry run never applies;
// plans cross the relay only for a gated apply's plan phase.
// Break: same unchecked planMessage (relay_plan.go planMessage, reached
// from relay_end.go leaseMessage without checking the job was Gated). A
// worker leased a DRY RUN hands over a saved plan; the control node seals
// it, decideStep finds no rule covering a dry run (kinds = apply), sets
// Phase apply with a "rules" pass and passOn queues it: the next worker of
// the pool applies it. A dry run changed infrastructure.
func TestAttack13DryRunWorkerTurnsItIntoAnApply(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13Hold)
	_, _, plans := attack13HeldPlans(t, h, keys, identity, "d1")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=d1", "--json"))
	if offer := raw.recv(); offer.Type != relay.MsgOffer || offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.recv()
	if job.Type != relay.MsgJob || job.Gated || job.Kind != string(KindPlan) {
		t.Fatalf("job %+v is not a dry run", job)
	}
	attack13HandOver(raw, id, job.Token, plans[0])
	if m, ok := recvWithin(raw, 3*time.Second); !ok || m.Type != relay.MsgReject {
		t.Errorf("a dry run's worker handing over a plan was answered with %+v (answered: %v), not a reject", m, ok)
	}
	// A real worker of the pool joins: what does it do with the dry run?
	w3 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w3)
	time.Sleep(500 * time.Millisecond)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		r, _ := h.srv.db.GetRun(id)
		if Status(r.Status) != StatusRunning && Status(r.Status) != StatusQueued {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	r, _ := h.srv.db.GetRun(id)
	if Phase(r.Phase) == phaseApply || r.AppliedBy != "" {
		t.Errorf("dry run %s got an apply phase: status %s, applied by %q: %s", id, r.Status, r.AppliedBy, r.Message)
	}
	if _, err := os.Stat(filepath.Join(w3.Projects["infra"].Path, "infra/network/terraform.tfstate")); err == nil {
		t.Errorf("a dry run applied: worker w1 wrote state in its checkout")
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "Apply complete") || strings.Contains(log, "tofu apply") {
		t.Errorf("the dry run's log shows an apply:\n%s", log)
	}
}

// Promise: results and log lines for a lease held by another worker are
// rejected ("a lease id of another worker").
// Break: hello (relay_session.go) keys a worker by pool/name only and
// never binds the name to the SSH key that first used it. When w1's
// session drops (its lease runs on until the timeout), the key of w2
// says hello as "w1", is welcomed as that worker, and its result for
// w1's lease is accepted: leaseMessage's l.worker == w check passes
// because the impostor got w1's relayWorker.
func TestAttack13OtherKeyTakesOverAWorkersLease(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw1, _ := dialRaw(t, h, keys["w1"], relay.Msg{Name: "w1", Pool: "eu", Version: "raw"})
	raw1.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=imp", "--json"))
	if offer := raw1.recv(); offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw1.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw1.recv()
	if job.Type != relay.MsgJob {
		t.Fatalf("job %+v", job)
	}
	raw1.client.Close()
	time.Sleep(300 * time.Millisecond)
	imp, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w1", Pool: "eu", Version: "impostor"})
	if welcome.Type == relay.MsgWelcome {
		t.Errorf("the key of w2 was welcomed as worker w1")
	}
	if welcome.Type != relay.MsgWelcome {
		return
	}
	imp.send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "forged by w2's key\n"})
	imp.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Message: "forged"})
	time.Sleep(500 * time.Millisecond)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) == StatusSucceeded {
		t.Errorf("another key's result ended w1's lease: %s %q", r.Status, r.Message)
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "forged by w2's key") {
		t.Errorf("another key's log line reached w1's run:\n%s", log)
	}
}

// Held: hostile input on the relay. Two workers racing for one run: one
// offer; the other's take is rejected. A log line, a result, a heartbeat
// for a run another worker holds (with its token), or for a run never
// leased, or from another pool's worker, are rejected and change nothing;
// an unknown type is rejected; garbage ends only the sender's session.
func TestAttack13HostileRelayInputHeld(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	a, _ := dialRaw(t, h, keys["w1"], relay.Msg{Name: "w1", Pool: "eu"})
	b, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	bare, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare"})
	a.send(relay.Msg{Type: relay.MsgPoll})
	time.Sleep(100 * time.Millisecond)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=race", "--json"))
	offer := a.recv()
	if offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	b.send(relay.Msg{Type: relay.MsgPoll})
	b.send(relay.Msg{Type: relay.MsgTake, Run: id})
	if m := b.recv(); m.Type != relay.MsgReject {
		t.Errorf("a take of a run offered to another worker: %+v", m)
	}
	a.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := a.recv()
	if job.Type != relay.MsgJob {
		t.Fatalf("job %+v", job)
	}
	for _, w := range []*rawWorker{b, bare} {
		w.send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token, Data: "INJECTED\n"})
		w.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: "succeeded"})
		w.send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token})
		w.send(relay.Msg{Type: relay.MsgResult, Run: "nosuchrun", Token: 1, Status: "succeeded"})
		w.send(relay.Msg{Type: "bogus", Run: id})
		for range 5 {
			if m := w.recv(); m.Type != relay.MsgReject {
				t.Errorf("hostile message answered with %+v", m)
			}
		}
	}
	a.send(relay.Msg{Type: relay.MsgLog, Run: id, Token: job.Token + 1, Data: "WRONGTOKEN\n"})
	if m := a.recv(); m.Type != relay.MsgReject {
		t.Errorf("a wrong token: %+v", m)
	}
	// garbage ends only b's session
	if _, err := b.in.Write([]byte("{not json\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.Recv(); err == nil {
		t.Errorf("the session survived garbage")
	}
	a.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: "succeeded", Message: "ok"})
	h.waitStatus(id, StatusSucceeded, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusSucceeded {
		t.Errorf("the holder's result: %s %s", r.Status, r.Message)
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "INJECTED") || strings.Contains(log, "WRONGTOKEN") {
		t.Errorf("a hostile log line reached the log:\n%s", log)
	}
}

// Promise: a gated apply applies only a plan the rules or an approver
// released. Break: result (relay_end.go) ends a gated plan's lease as the
// worker reports, without checking the job was a gated plan phase that
// must end by handing its plan over: a worker leased the plan phase of a
// held-by-rule apply sends result "succeeded", and the apply is recorded
// succeeded with no proposal and no approval.
func TestAttack13GatedPlanEndsSucceededWithoutApproval(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13Hold)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=skip", "--json"))
	if offer, ok := recvWithin(raw, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job, ok := recvWithin(raw, 10*time.Second)
	if !ok || !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Message: "Applied."})
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusAwaitingApproval)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) == StatusSucceeded {
		t.Errorf("a held apply is recorded succeeded with no approval (proposal %v, approvals %d): %q", r.Proposal != nil, len(r.Approvals), r.Message)
	}
}

// Held: a user's key asking for the relay gets no relay; a worker whose
// known_hosts holds another host key for the control node is refused.
func TestAttack13UserKeyAndKnownHostsHeld(t *testing.T) {
	h, keys, identity := relayHarness(t, "")
	client, err := gossh.Dial("tcp", h.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(h.keys["alice"])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, _ := client.NewSession()
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.Start(relay.Command); err != nil {
		t.Fatal(err)
	}
	c := relay.NewConn(out, in)
	_ = c.Send(relay.Msg{Type: relay.MsgHello, Name: "alice", Pool: "eu"})
	if m, err := c.Recv(); err == nil && m.Type == relay.MsgWelcome {
		t.Errorf("a user's key was welcomed as a worker")
	}
	cfg := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	other := newRelayKey(t)
	line := knownhosts.Line([]string{knownhosts.Normalize(h.addr)}, other.signer.PublicKey()) + "\n"
	if err := os.WriteFile(cfg.KnownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	err = worker.RunWorker(t.Context(), cfg, worker.WorkerOptions{Environ: testEnviron})
	if err == nil || !strings.Contains(err.Error(), "host key") {
		t.Errorf("a control node with another host key: %v", err)
	}
}

// Promise: the relay's input is hostile; huge messages are bounded.
// Break: planMessage (relay_plan.go, relay.MsgPlanStart) allocates buffers of
// the sizes the worker merely declares — make([]byte, 0, m.JSONSize) with
// JSONSize up to relay.JSONLimit (256 MiB) — before a byte arrives; each
// plan_start line of ~100 bytes makes the control node reserve ~275 MiB,
// and a worker may repeat it on every gated lease.
func TestAttack13DeclaredPlanSizeAllocatesUpFront(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13Hold)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=mem", "--json"))
	if offer, ok := recvWithin(raw, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job, ok := recvWithin(raw, 10*time.Second)
	if !ok || !job.Gated {
		t.Fatalf("job %+v", job)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 4 {
		raw.send(relay.Msg{Type: relay.MsgPlanStart, Run: id, Token: job.Token, Size: relay.PlanLimit, JSONSize: relay.JSONLimit})
	}
	raw.send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token})
	time.Sleep(500 * time.Millisecond)
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Errorf("four plan_start lines (no plan bytes) made the control node allocate %d MiB", d>>20)
	}
}
