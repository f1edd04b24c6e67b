package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
)

// planZip matches a plan file's zip entry in clear: a local file header
// naming tfplan.
var planZip = regexp.MustCompile(`PK\x03\x04[\s\S]{26}tfplan`)

// A gated apply on a pool: planned on w1, which hands its saved plan to the
// control node; held for bob; w1 drains away; released, it is applied on
// w2, which receives the plan sealed to the pool's delivery key and applies
// exactly the approved digest. The plan never exists in clear on the
// control node's disk.
func TestRelayGatedApplyAcrossWorkers(t *testing.T) {
	h, keys, identity := relayHarness(t, `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	errs1, drain1 := startWorker(t, w1)
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=g1", "--json"))
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	held, _ := h.srv.db.GetRun(id)
	if held.Status != StatusAwaitingApproval || held.PlannedBy != "w1" || held.Proposal == nil {
		t.Fatalf("the gated plan: %s by %q: %s", held.Status, held.PlannedBy, held.Message)
	}
	if !strings.Contains(held.Proposal.PlanText, "vpc-g1") {
		t.Errorf("the proposal's plan text:\n%s", held.Proposal.PlanText)
	}
	drain1()
	select {
	case <-errs1:
	case <-time.After(20 * time.Second):
		t.Fatal("w1 did not drain")
	}
	w2 := relayWorkerCfg(t, h, "w2", "eu", keys["w2"], identity)
	startWorker(t, w2)
	digest := held.Proposal.Digest
	h.mustSSH("bob", "approve", id, "--digest", digest)
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusStale)
	done, _ := h.srv.db.GetRun(id)
	if done.Status != StatusSucceeded || done.PlannedBy != "w1" || done.AppliedBy != "w2" || !strings.Contains(done.Message, digest) {
		t.Fatalf("the apply: %s planned by %q applied by %q: %s", done.Status, done.PlannedBy, done.AppliedBy, done.Message)
	}
	if _, err := os.Stat(filepath.Join(w2.Projects["infra"].Path, "infra/network/terraform.tfstate")); err != nil {
		t.Errorf("the apply did not run in w2's checkout: %v", err)
	}
	show := h.mustSSH("alice", "show", id)
	if !strings.Contains(show, "planned on relay worker w1") || !strings.Contains(show, "applied on relay worker w2") {
		t.Errorf("show:\n%s", show)
	}
	for _, path := range append(h.dataFiles(), walkFiles(t, w1.DataDir)...) {
		if b, _ := os.ReadFile(path); planZip.Match(b) {
			t.Errorf("%s holds a plan file in clear", path)
		}
	}
	if log := h.mustSSH("alice", "log", id); !strings.Contains(log, "sealed with the server key") || !strings.Contains(log, "Apply complete!") {
		t.Errorf("log:\n%s", log)
	}
}

// walkFiles lists the regular files under dir.
func walkFiles(t *testing.T, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// A worker that declares a plan of 20 MiB is refused with its size and the
// limit: the run fails without a proposal, and what the worker sends next
// is rejected.
func TestRelayRefusesAPlanOver19MiB(t *testing.T) {
	h, keys, _ := relayHarness(t, `
rule "hold-rnet" {
  templates        = ["rnet"]
  kinds            = ["apply"]
  require_approval = true
  approvers        = ["bob"]
}
`)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=big", "--json"))
	raw.Recv() // the offer
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.Recv()
	if !job.Gated || job.Type != relay.MsgJob {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	raw.Send(relay.Msg{Type: relay.MsgPlanStart, Run: id, Token: job.Token, Size: 20 << 20, JSONSize: 10})
	h.waitStatus(id, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	for _, want := range []string{"20.0 MiB (20971520 bytes)", "over the 19 MiB", "without proposing an apply", "queue the control node executes", "split the configuration"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message %q lacks %q", r.Message, want)
		}
	}
	if r.Proposal != nil {
		t.Errorf("a refused plan proposed: %+v", r.Proposal)
	}
	raw.Send(relay.Msg{Type: relay.MsgPlanChunk, Run: id, Token: job.Token, Part: "plan", Blob: []byte("x")})
	if m := raw.Recv(); m.Type != relay.MsgReject {
		t.Errorf("a chunk after the refusal: %+v", m)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "approve") && r.Status != StatusFailed {
		t.Errorf("run %s", b)
	}
}

// A drift check on a pool: the check's worker hands its plan to the control
// node, which keeps it sealed; the reconcile proposed from it is applied by
// a worker that receives the plan sealed to the pool's key. A later check
// that finds no drift keeps nothing.
func TestRelayDriftCheckAndReconcile(t *testing.T) {
	h, keys, identity := relayHarness(t, `
template "rdata" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
  survey "instances" {
    type    = "number"
    default = 3
  }
}
`)
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	if v := h.launchWait("alice", "rdata"); v.Status != StatusSucceeded {
		t.Fatalf("the first apply: %s %s", v.Status, v.Message)
	}
	check := h.launchWait("alice", "rdata", "--check", "--var", "instances=2")
	if check.Status != StatusSucceeded || check.Check == nil || !check.Check.Kept || check.PlannedBy != "w1" ||
		!strings.Contains(check.Message, "`reconcile "+check.ID+"`") {
		t.Fatalf("the check: %s kept=%v by %q: %s", check.Status, check.Check != nil && check.Check.Kept, check.PlannedBy, check.Message)
	}
	var rec runView
	if err := json.Unmarshal([]byte(h.mustSSH("alice", "reconcile", check.ID, "--json")), &rec); err != nil || rec.Proposal == nil {
		t.Fatalf("reconcile: %v %+v", err, rec)
	}
	h.mustSSH("bob", "approve", rec.ID, "--digest", rec.Proposal.Digest)
	h.waitStatus(rec.ID, StatusSucceeded, StatusFailed, StatusStale)
	if r, _ := h.srv.db.GetRun(rec.ID); r.Status != StatusSucceeded || r.AppliedBy != "w1" || !strings.Contains(r.Message, rec.Proposal.Digest) {
		t.Fatalf("the reconcile: %s by %q: %s", r.Status, r.AppliedBy, r.Message)
	}
	again := h.launchWait("alice", "rdata", "--check", "--var", "instances=2")
	if again.Status != StatusSucceeded || !strings.Contains(again.Message, "No drift") || again.Check == nil || again.Check.Kept {
		t.Errorf("the check after the reconcile: %s %s", again.Status, again.Message)
	}
}

// A drift check whose plan is over 19 MiB keeps no plan and says a
// reconcile cannot be proposed from it; `reconcile` refuses it.
func TestRelayCheckOver19MiBKeepsNoPlan(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--check", "--var", "region=big", "--json"))
	raw.Recv()
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.Recv()
	raw.Send(relay.Msg{Type: relay.MsgPlanStart, Run: id, Token: job.Token, Size: 19<<20 + 1, JSONSize: 10})
	h.waitStatus(id, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	for _, want := range []string{"(19922945 bytes), over the 19 MiB", "this drift check keeps no plan, so a reconcile cannot be proposed from it"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message %q lacks %q", r.Message, want)
		}
	}
	if _, errOut, code := h.ssh("alice", "reconcile", id); code != exitRefused {
		t.Errorf("reconcile of a check that kept no plan: exit %d %s", code, errOut)
	}
}

// With real OpenTofu, a gated apply whose saved plan is over 19 MiB (320
// terraform_data resources with large inputs) fails on the worker with its
// size and the limit, without proposing an apply; the plan never left the
// worker.
func TestRelayRealPlanOver19MiB(t *testing.T) {
	h, keys, identity := relayHarness(t, `
template "rbig" {
  project = "infra"
  command = "infra/big"
  queue   = "eu"
}
rule "hold-big" {
  templates        = ["rbig"]
  require_approval = true
}
`)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	big := filepath.Join(w1.Projects["infra"].Path, "infra/big")
	tf := `resource "terraform_data" "big" {
  count = 320
  input = sensitive(join("", [for i in range(1000) : sha512("${count.index}-${i}")]))
}
`
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w1)
	v := h.launchWait("alice", "rbig")
	if v.Status != StatusFailed || v.Proposal != nil {
		t.Fatalf("the big plan: %s proposal=%v: %s", v.Status, v.Proposal != nil, v.Message)
	}
	for _, want := range []string{" MiB (", "bytes), over the 19 MiB a plan file may cross the relay", "without proposing an apply", "Run it on a queue the control node executes, or split the configuration"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("message %q lacks %q", v.Message, want)
		}
	}
	if _, err := h.srv.db.GetBlob(blobPlan, v.ID); err == nil {
		t.Errorf("a sealed plan was kept for the refused plan")
	}
}

// An apply an agent asks for on a pool is held before anything plans; once
// a person releases it, a worker plans it and the apply its plan proposes
// is held again; released, a worker applies exactly that plan.
func TestRelayAgentApplyTakesTwoApprovals(t *testing.T) {
	h, keys, identity := relayHarness(t, "")
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	id := runIDOf(t, h.mustSSH("deploy-bot", "launch", "rnet", "--var", "region=bot", "--json"))
	r, _ := h.srv.db.GetRun(id)
	if r.Status != StatusAwaitingApproval || r.Proposal == nil || r.Proposal.Stage != StageRequest || len(r.Steps) != 0 {
		t.Fatalf("the agent's apply: %s %+v steps %v", r.Status, r.Proposal, r.Steps)
	}
	h.mustSSH("alice", "approve", id, "--digest", r.Proposal.Digest)
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	waitFor(t, "the plan's proposal", 30*time.Second, func() bool {
		r, _ = h.srv.db.GetRun(id)
		return r.Proposal != nil && r.Proposal.Stage == StagePlan || r.Status == StatusFailed
	})
	if r.Proposal.Stage != StagePlan || r.PlannedBy != "w1" {
		t.Fatalf("after the first release: %s %s by %q: %s", r.Status, r.Proposal.Stage, r.PlannedBy, r.Message)
	}
	h.mustSSH("alice", "approve", id, "--digest", r.Proposal.Digest)
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusStale)
	if r, _ = h.srv.db.GetRun(id); r.Status != StatusSucceeded || r.AppliedBy != "w1" {
		t.Errorf("after the second release: %s by %q: %s", r.Status, r.AppliedBy, r.Message)
	}
}

// At most one check of a pool's working directory is pending at a time, as
// on the control node; another directory's check is not held up.
func TestRelayOneCheckPendingPerWorkdir(t *testing.T) {
	h, _, _ := relayHarness(t, `
template "rnet2" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
`)
	first := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--check", "--var", "region=c", "--json"))
	_, errOut, code := h.ssh("alice", "launch", "rnet", "--check", "--var", "region=c")
	if code != exitRefused || !strings.Contains(errOut, "check "+first+" of this working directory is still queued") {
		t.Errorf("a second check of the same pool directory: exit %d %s", code, errOut)
	}
	if _, errOut, code := h.ssh("alice", "launch", "rnet2", "--check"); code != 0 {
		t.Errorf("a check of another pool directory: exit %d %s", code, errOut)
	}
}

// Promise: the apply's worker applies exactly the approved digest; a worker
// that sends back a different plan file for the apply must be refused. Once,
// a worker leased the apply phase of an approved run could hand over another
// run's plan, which replaced the sealed approved plan and its proposal,
// because plan messages were taken on any lease.
func TestAnApplyWorkerCannotSwapTheApprovedPlan(t *testing.T) {
	h, keys, identity := relayHarness(t, holdRnetForBob)
	ids, digests, plans := heldPlans(t, h, keys, identity, "a1", "b1")
	a, digestA, planB := ids[0], digests[0], plans[1]
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	h.mustSSH("bob", "approve", a, "--digest", digestA)
	if offer := raw.Recv(); offer.Type != relay.MsgOffer || offer.Run != a {
		t.Fatalf("offer %+v", offer)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: a})
	job := raw.Recv()
	if job.Type != relay.MsgJob || job.Phase != string(phaseApply) {
		t.Fatalf("job %+v is not the apply phase", job)
	}
	handOverWithEmptyRendering(raw, a, job.Token, planB)
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
	if r.Status == StatusAwaitingApproval {
		t.Errorf("the approved run went back to awaiting approval with the worker's plan: %s", r.Message)
	}
	// The refusal ends the run, and its end drops the sealed plan (spec:
	// "wiped when the apply ends"); while a plan is stored it is A's.
	if _, err := h.srv.db.GetBlob(blobPlan, a); err == nil || !r.Status.Final() {
		if _, err := h.srv.openSealedPlan(a, digestA); err != nil {
			t.Errorf("the approved run's sealed plan was overwritten by the worker's: %v", err)
		}
	}
}

// Promise: a worker takes only what it is leased; a dry run never applies;
// plans cross the relay only for a gated apply's plan phase. Once, a worker
// leased a dry run could hand over a saved plan that the control node sealed,
// passed and queued as an apply, so a dry run changed infrastructure.
func TestADryRunWorkerCannotTurnItIntoAnApply(t *testing.T) {
	h, keys, identity := relayHarness(t, holdRnetForBob)
	_, _, plans := heldPlans(t, h, keys, identity, "d1")
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=d1", "--json"))
	if offer := raw.Recv(); offer.Type != relay.MsgOffer || offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.Recv()
	if job.Type != relay.MsgJob || job.Gated || job.Kind != string(KindPlan) {
		t.Fatalf("job %+v is not a dry run", job)
	}
	handOverWithEmptyRendering(raw, id, job.Token, plans[0])
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
		if r.Status != StatusRunning && r.Status != StatusQueued {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	r, _ := h.srv.db.GetRun(id)
	if r.Phase == phaseApply || r.AppliedBy != "" {
		t.Errorf("dry run %s got an apply phase: status %s, applied by %q: %s", id, r.Status, r.AppliedBy, r.Message)
	}
	if _, err := os.Stat(filepath.Join(w3.Projects["infra"].Path, "infra/network/terraform.tfstate")); err == nil {
		t.Errorf("a dry run applied: worker w1 wrote state in its checkout")
	}
	if log := h.mustSSH("alice", "log", id); strings.Contains(log, "Apply complete") || strings.Contains(log, "tofu apply") {
		t.Errorf("the dry run's log shows an apply:\n%s", log)
	}
}

// Promise: a gated apply applies only a plan the rules or an approver
// released. Once, a worker leased a gated apply's plan phase could report
// "succeeded", and the apply was recorded succeeded with no proposal and no
// approval.
func TestAGatedPlanPhaseCannotEndItsApplySucceeded(t *testing.T) {
	h, keys, _ := relayHarness(t, holdRnetForBob)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region=skip", "--json"))
	if offer, ok := recvWithin(raw, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("offer %+v", offer)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job, ok := recvWithin(raw, 10*time.Second)
	if !ok || !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Message: "Applied."})
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusAwaitingApproval)
	r, _ := h.srv.db.GetRun(id)
	if r.Status == StatusSucceeded {
		t.Errorf("a held apply is recorded succeeded with no approval (proposal %v, approvals %d): %q", r.Proposal != nil, len(r.Approvals), r.Message)
	}
}

// Promise: a run's `show` names the worker that planned and the one that
// applied. Once, a gated apply held for approval showed "planned and applied
// on relay worker w2", because the applier was recorded at the claim of a
// gated plan phase.
func TestAHeldPlanShowsNoApplier(t *testing.T) {
	h, keys, _ := relayHarness(t, poolDataTemplate)
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	runTofuByHand(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, js := planDataByHand(t, h, "instances=0")
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
	if r.Status != StatusAwaitingApproval {
		t.Fatalf("the destroy plan was not held: %s %s", r.Status, r.Message)
	}
	if r.AppliedBy != "" {
		t.Errorf("a run held for approval, nothing applied, records AppliedBy %q; show says:\n%s", r.AppliedBy, h.mustSSH("alice", "show", id))
	}
}

// Promise (docs/relay.md: a saved plan of up to 19 MiB crosses the relay,
// relay.PlanLimit; relay_proto.go relay.MaxLine "bounds one protocol line: a
// job carrying a sealed plan of relay.PlanLimit in base64, with room for the
// rest"). Once, a plan over about 16.5 MiB passed its plan phase and the
// rules but its apply job, carrying the plan base64-encoded twice, was longer
// than any worker could read, so the run failed and the released plan was
// used up.
func TestAPlanUnder19MiBReachesItsApplyWorker(t *testing.T) {
	h, keys, identity := relayHarness(t, `
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
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	writeBlobModule(t, w1.Projects["infra"].Path, 35<<20/2) // 17.5 MiB
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rblob13f", "--json"))
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusRefused, StatusAwaitingApproval, StatusStale)
	r, _ := h.srv.db.GetRun(id)
	if r.Proposal == nil {
		t.Fatalf("the 17.5 MiB plan was not taken: %s: %s", r.Status, r.Message)
	}
	blob, _ := h.srv.db.GetBlob(blobPlan, id)
	t.Logf("%s: %s\nproposal %s (sealed plan %d bytes; planned by %s, applied by %q)", r.Status, r.Message, r.Proposal.Digest, len(blob), r.PlannedBy, r.AppliedBy)
	if r.Status != StatusSucceeded {
		t.Fatalf("a plan of 17.5 MiB, under the 19 MiB the relay takes, planned on worker w1 and passed by the rules, was not applied: %s: %s", r.Status, r.Message)
	}
}

// emptyRendering is a minimal `show -json` rendering the gate reads.
var emptyRendering = []byte(`{"format_version":"1.2","resource_changes":[]}`)

// heldPlans plans gated applies of rnet for each region on a real
// worker w1 (then drained away), and returns the runs, their digests and
// the saved plans in clear (read from their seals, in memory).
func heldPlans(t *testing.T, h *harness, keys map[string]relayKey, identity string, regions ...string) (ids, digests []string, plans [][]byte) {
	t.Helper()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	errs, drain := startWorker(t, w1)
	for _, region := range regions {
		id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--var", "region="+region, "--json"))
		h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
		r, _ := h.srv.db.GetRun(id)
		if r.Status != StatusAwaitingApproval || r.Proposal == nil {
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

// handOverWithEmptyRendering sends plan as a gated plan's hand-over on a lease.
func handOverWithEmptyRendering(raw *rawWorker, run string, token uint64, plan []byte) {
	raw.Send(relay.Msg{Type: relay.MsgPlanning, Run: run, Token: token})
	raw.Send(relay.Msg{Type: relay.MsgPlanStart, Run: run, Token: token, Size: int64(len(plan)), JSONSize: int64(len(emptyRendering))})
	raw.Send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "plan", Blob: plan})
	raw.Send(relay.Msg{Type: relay.MsgPlanChunk, Run: run, Token: token, Part: "json", Blob: emptyRendering})
	raw.Send(relay.Msg{Type: relay.MsgPlanEnd, Run: run, Token: token})
}
