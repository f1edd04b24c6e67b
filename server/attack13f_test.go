package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// attack13fPolicy writes a plan_gate policy into a temporary file and
// returns its path.
func attack13fPolicy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.rego")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// attack13fTypePolicy is the README's example policy ("This one limits
// destroys by resource type"), aimed at the only resource type a test can
// plan without a provider download.
const attack13fTypePolicy = `package switchtender.plan

deletes contains rc if {
	some rc in input.plan.resource_changes
	"delete" in rc.change.actions
}

deny contains msg if {
	n := count([rc | some rc in deletes; rc.type == "terraform_data"])
	n > 0
	msg := sprintf("plan destroys %d terraform_data resources", [n])
}
`

// attack13fForge rewrites every resource change of a show -json rendering
// with set (a field name -> its new value), leaving address and actions
// as the plan file has them.
func attack13fForge(t *testing.T, js []byte, set map[string]any) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	rcs, _ := doc["resource_changes"].([]any)
	if len(rcs) == 0 {
		t.Fatalf("the rendering has no resource changes: %.300s", js)
	}
	for _, rc := range rcs {
		for k, v := range set {
			rc.(map[string]any)[k] = v
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Promise (README, relay: "the control node ... checks that the worker's
// show -json rendering names, per action, the very resource instances the
// plan file itself changes ... Attribute values a plan_gate reads come
// from the worker's rendering: that much of the gate trusts the worker";
// relay_plan.go renderingIsThePlans: "the gate decides on what the plan
// does, not on what a worker says it does"). Break: gate.SameChanges
// compares only each change's address and action class; every other
// field a policy reads to know WHAT a change is (type, name, index,
// module_address, provider_name, mode, deposed) still comes from the
// worker unchecked. The README's own example policy, which limits
// destroys by rc.type, is passed by a worker that hands over the real
// plan destroying terraform_data.server[2] with its real rendering in
// which only "type" says something else: the addresses and actions
// match the plan file, the policy sees no terraform_data deleted, and the
// destroying plan is sealed and queued for the pool to apply.
func TestAttack13fRenderingForgesTheResourceType(t *testing.T) {
	r := attack13fForgedTypeHandOver(t, "rdata13f", func(honest []byte) []byte {
		return attack13fForge(t, honest, map[string]any{"type": "null_resource"})
	})
	if Phase(r.Phase) == phaseApply && Status(r.Status) == StatusRunning {
		t.Fatalf("a plan destroying terraform_data.server[2], which the README's by-type plan_gate denies, passed on a rendering whose addresses and actions are the plan file's and whose \"type\" is forged; it is queued to apply (digest %s, %d to destroy)",
			r.Proposal.Digest, r.Proposal.Destroy)
	}
}

// attack13fForgedTypeHandOver runs the README's by-type plan_gate over a
// gated apply of template (infra/data, pool eu) whose real plan destroys
// terraform_data.server[2]: a raw worker hands the plan over with its
// honest rendering, which the policy must deny, then again with the
// rendering forge makes of it; it returns the second run as it settled.
func attack13fForgedTypeHandOver(t *testing.T, template string, forge func(honest []byte) []byte) store.Run {
	t.Helper()
	policy := attack13fPolicy(t, attack13fTypePolicy)
	h, keys, _ := relayHarness(t, fmt.Sprintf(`
template %[1]q {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "types-%[1]s" {
  templates = [%[1]q]
  kinds     = ["apply"]
  plan_gate = %[2]q
}
`, template, policy))
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	attack13bTofu(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, honest := attack13bPlan(t, h, "instances=2") // destroys terraform_data.server[2]
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := attack13bReader(raw)

	id, job := attack13bLease(t, h, raw, ch, template)
	attack13bHandOver(raw, id, job.Token, plan, honest)
	attack13bSettle(h, id, 15*time.Second)
	if r, _ := h.srv.db.GetRun(id); Phase(r.Phase) == phaseApply || !strings.Contains(r.Message, "destroys 1 terraform_data") {
		t.Fatalf("the policy did not stop the honest rendering: %s %s: %s", r.Status, r.Phase, r.Message)
	}

	forged := forge(honest)
	if bytes.Equal(forged, honest) {
		t.Fatalf("the forged rendering is the honest one: %.300s", honest)
	}
	id, job = attack13bLease(t, h, raw, ch, template)
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	attack13bHandOver(raw, id, job.Token, plan, forged)
	attack13bSettle(h, id, 15*time.Second)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("%s %s: %s", r.Status, r.Phase, r.Message)
	return r
}

// attack13fSlowPolicy lets every plan through after about two seconds of
// evaluation (a policy over a large plan, or one that compares many
// resources, takes as long).
const attack13fSlowPolicy = `package switchtender.plan

hold contains msg if {
	n := count([1 | some x in numbers.range(1, 400); some y in numbers.range(1, 4000); x * y == -1])
	n > 0
	msg := "never"
}
`

// Promise (README cancel: "a cancel ends the run"; 13b/13e fixed a cancel
// that reached a pool run between its phases). Break: relay_plan.go
// planned reads CancelRequested once, when the plan arrives, then seals,
// measures and lets the rules decide, and passOn queues the apply phase
// without looking again. A cancel that lands while the rules decide finds
// the plan phase's lease: relayHub.cancel only tells the worker (whose
// job already ended by handing its plan over) and sets cancelBy; then
// passOn drops that lease and queues the apply phase, still running with
// CancelRequested set. The next worker of the pool that polls takes it;
// claim refuses it ("was cancelled by alice") and prepare only releases
// the lease. The run is "running" for ever, in no queue and under no
// lease; a second cancel finds nothing to stop.
func TestAttack13fCancelWhileRulesDecideStrandsTheRun(t *testing.T) {
	policy := attack13fPolicy(t, attack13fSlowPolicy)
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
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	plan, js := attack13bPlan(t, h)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rdata13f")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	start := time.Now()
	attack13bHandOver(raw, id, job.Token, plan, js)
	time.Sleep(400 * time.Millisecond) // the plan is sealed; the policy evaluates
	out, errOut, code := h.ssh("alice", "cancel", id)
	t.Logf("cancel after %s: %d %s %s", time.Since(start).Round(time.Millisecond), code, strings.TrimSpace(out), strings.TrimSpace(errOut))
	attack13bSettle(h, id, 20*time.Second)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("after the rules (%s): %s phase %s cancel %q: %s", time.Since(start).Round(time.Millisecond), r.Status, r.Phase, r.CancelRequested, r.Message)
	if Status(r.Status) != StatusRunning {
		return // held: the cancel ended it
	}
	// The worker's job ended with the hand-over; it polls again as a real
	// worker does and takes what it is offered.
	raw.send(relay.Msg{Type: relay.MsgPoll})
	if offer, ok := attack13bNext(ch, relay.MsgOffer, 10*time.Second); ok {
		raw.send(relay.Msg{Type: relay.MsgTake, Run: offer.Run})
		if m, ok := attack13bNext(ch, relay.MsgReject, 10*time.Second); ok {
			t.Logf("take answered: %s", m.Message)
		}
	}
	time.Sleep(3 * time.Second)
	h.ssh("alice", "cancel", id)
	time.Sleep(3 * time.Second)
	if r, _ = h.srv.db.GetRun(id); Status(r.Status) == StatusRunning {
		t.Fatalf("run %s, cancelled by alice while the rules decided on its plan, is still running (phase %s, cancel requested by %q), in no queue (%q) and under no lease; a second cancel changed nothing",
			id, r.Phase, r.CancelRequested, h.srv.relay.waitReason(id))
	}
	if r.AppliedBy != "" || Status(r.Status) == StatusSucceeded {
		t.Fatalf("the cancelled run was applied: %s by %q", r.Status, r.AppliedBy)
	}
}

// attack13fPRConfig is a pull-request template on the control node's own
// queue, next to a production template whose static credential lives, as
// the README's example has it, in the configuration file.
const attack13fPRConfig = `
credential "prod13f" {
  env = { AWS_SECRET_ACCESS_KEY = "prod-aws-secret-13f-Zq8v" }
}
template "prod13f" {
  project     = "infra"
  command     = "infra/network"
  credentials = ["prod13f"]
  survey "region" { type = "string" }
}
template "pr13f" {
  project = "infra"
  command = "infra/pr13f"
}
`

// attack13fPR plans, as a pull request of template pr13f, a branch that
// adds branch's files to a clean working directory.
func attack13fPR(t *testing.T, branch func(h *harness) map[string]string) (*harness, runView) {
	t.Helper()
	h := writeHarness(t, "", attack13fPRConfig)
	wd := filepath.Join(h.project, "infra/pr13f")
	attack13dWrite(t, wd, map[string]string{"main.tf": attack13dResource})
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	attack13dWrite(t, wd, branch(h))
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	return h, h.launchWait("alice", "pr13f", "--dry-run", "--ref", "pr")
}

// Promise (README "Pull-request plans": "Switchtender's own keys are
// masked in every run's log"; ownkeys.go: "so a configuration that reads
// one with file() cannot print it"). Break: the sealing key is an age
// identity, bech32, which is case-insensitive: lower() of it is the same
// key, in a form the masker never registered (it knows the file's lines
// as written and their encodings). A branch whose resource input is
// lower(file("<data_dir>/seal.key")) prints the server's sealing key,
// which opens every sealed plan, kept drift plan and secret answer in the
// store, into its pull request's plan log.
func TestAttack13fPullRequestPrintsTheSealKeyLowercased(t *testing.T) {
	var sealKey string
	h, v := attack13fPR(t, func(h *harness) map[string]string {
		sealKey = filepath.Join(h.dir, "data", "seal.key")
		return map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = lower(file(\"" + sealKey + "\"))\n}\n"}
	})
	key, err := os.ReadFile(sealKey)
	if err != nil {
		t.Fatal(err)
	}
	identity := ""
	for _, line := range strings.Split(string(key), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-1") {
			identity = line
		}
	}
	if identity == "" {
		t.Fatalf("no identity in the seal key")
	}
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if strings.Contains(log, strings.ToLower(identity)) {
		t.Fatalf("a branch's lower(file()) put the server's sealing key into its pull request's plan log (%s):\n%.900s", v.Status, log)
	}
}

// Promise (README "Pull-request plans": the branch's plan runs with the
// checkout's credentials, its own keys are masked; oplog.go newScrubber
// knows every static secret of the configuration, for the operator log).
// Break: the configuration file itself holds the static credentials of
// every template (credential "…" { env = { AWS_SECRET_ACCESS_KEY = … } },
// token, notification secrets), and the server's user reads it. A run's
// masker holds only that run's own credentials and the key files; a
// branch whose resource input is file("<the configuration file>") prints
// another template's production secret, in clear, into its pull request's
// plan log. The README's advice, "keep the server's user away from what a
// branch should not see", cannot apply to the server's own configuration.
// (Its path is no secret: a branch can read it from
// /proc/<tofu's parent>/cmdline, whose pid /proc/self/stat names.)
func TestAttack13fPullRequestPrintsTheConfigFile(t *testing.T) {
	h, v := attack13fPR(t, func(h *harness) map[string]string {
		return map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = file(\"" + h.cfgPath + "\")\n}\n"}
	})
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if strings.Contains(log, "prod-aws-secret-13f-Zq8v") {
		i := strings.Index(log, "prod-aws-secret-13f-Zq8v")
		t.Fatalf("a branch's file() of the configuration file put template prod13f's AWS_SECRET_ACCESS_KEY into its pull request's plan log (%s): …%s…",
			v.Status, log[max(0, i-120):min(len(log), i+60)])
	}
}

// attack13fBlob writes infra/blob13f into checkout: a working directory
// whose saved plan holds about size bytes of incompressible input (the
// plan file is deflated: base64 text of random bytes shrinks back to about
// the bytes' size).
func attack13fBlob(t *testing.T, checkout string, size int) {
	t.Helper()
	b := make([]byte, size)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	attack13dWrite(t, filepath.Join(checkout, "infra/blob13f"), map[string]string{
		"main.tf":  "resource \"terraform_data\" \"blob\" {\n  input = file(\"${path.module}/blob.txt\")\n}\n",
		"blob.txt": base64.StdEncoding.EncodeToString(b),
	})
}

// attack13fPausedReader reads a raw worker's messages into a channel until
// it has passed on an offer of run (or any offer when run is ""), then
// reads nothing more: the worker's machine is paused (a stopped process, a
// frozen VM) with its connection still open.
func attack13fPausedReader(w *rawWorker, pauseAfterOffer func() string) chan relay.Msg {
	ch := make(chan relay.Msg, 64)
	go func() {
		for {
			m, err := w.c.Recv()
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

// Promise (relay: a worker that stops heartbeating loses its lease within
// the pool's lease_timeout, "lost leases fail the run once", and one pool's
// workers do not hold up another's). Break: take (relay_lease.go) holds
// the lease's lock (defer l.mu.Unlock) while it writes the job to the
// worker's connection. A job carrying a released plan is megabytes; when
// the worker stops reading (a paused VM, a stopped process: the SSH
// window fills), the write blocks and the lock stays held. The lease
// watcher (relay_end.go expire), which runs for every pool, finds the
// lease lost and blocks on that lock for good: from then on no lease of
// any pool is ever lost, no cancelled lease taken back, no unanswered
// offer put back in its queue. Here pool bare's worker b1 takes a dry run
// and dies after w2 (pool eu) paused; b1's run stays "running" long past
// its 2-second lease timeout, and so does w2's.
func TestAttack13fPausedWorkerFreezesTheLeaseWatcher(t *testing.T) {
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
	attack13fBlob(t, h.project, 2<<20) // a job of about 4 MiB: twice the SSH window
	attack13bTofu(t, h, "infra/blob13f", "init", "-input=false")
	path := filepath.Join(t.TempDir(), "p.tfplan")
	attack13bTofu(t, h, "infra/blob13f", "plan", "-input=false", "-out="+path)
	js := bytes.TrimSpace(attack13bTofu(t, h, "infra/blob13f", "show", "-json", path))
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
	ch := attack13fPausedReader(raw, func() string { return pauseOn })
	id, job := attack13bLease(t, h, raw, ch, "rblob13f")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	pauseOn = id // the next offer of this run is the last message w2 reads
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 30*time.Second)
	if r, _ := h.srv.db.GetRun(id); Phase(r.Phase) != phaseApply || Status(r.Status) != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	raw.send(relay.Msg{Type: relay.MsgPoll})
	if offer, ok := attack13bNext(ch, relay.MsgOffer, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id}) // and w2's machine pauses
	time.Sleep(4 * time.Second)                       // w2's lease (2s) is lost by now

	b1, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare", Version: "raw"})
	b1.send(relay.Msg{Type: relay.MsgPoll})
	bid := runIDOf(t, h.mustSSH("alice", "launch", "bnet", "--dry-run", "--var", "region=paused", "--json"))
	if m := b1.recv(); m.Type != relay.MsgOffer || m.Run != bid {
		t.Fatalf("offer %+v", m)
	}
	b1.send(relay.Msg{Type: relay.MsgTake, Run: bid})
	if m := b1.recv(); m.Type != relay.MsgJob {
		t.Fatalf("b1's take: %+v", m)
	}
	// b1 dies without a heartbeat: its run fails within 2s, if anything
	// still watches leases.
	deadline := time.Now().Add(12 * time.Second)
	var br store.Run
	for time.Now().Before(deadline) {
		if br, _ = h.srv.db.GetRun(bid); Status(br.Status) != StatusRunning {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	r, _ := h.srv.db.GetRun(id)
	t.Logf("w2's apply phase: %s (%s); b1's dry run: %s (%s)", r.Status, r.Message, br.Status, br.Message)
	if Status(br.Status) == StatusRunning || Status(r.Status) == StatusRunning {
		t.Fatalf("12s after worker b1 of pool bare went silent (lease timeout 2s) its run %s is %s, and run %s, whose apply-phase job w2 (pool eu) stopped reading, is %s: the lease watcher is stuck behind w2's lease",
			bid, br.Status, id, r.Status)
	}
}

// Held: a pull request's branch that calls a module from a git
// repository (fetched by the scan's `tofu get`), whose only file reads a
// remote state, is refused with the finding; nothing plans.
func TestAttack13fPullRequestRemoteStateInGitModuleHeld(t *testing.T) {
	var repo string
	_, v := attack13fPR(t, func(h *harness) map[string]string {
		repo = filepath.Join(h.dir, "modrepo")
		attack13dWrite(t, repo, map[string]string{"main.tf": attack13eRemoteState("http://127.0.0.1:1/state")})
		git := gitIn(t, repo)
		git("init", "-q", "-b", "main")
		git("add", "-A")
		git("commit", "-q", "-m", "module")
		return map[string]string{"mod.tf": "module \"m\" {\n  source = \"git::file://" + repo + "\"\n}\n"}
	})
	t.Logf("%s: %s; steps %v; findings %+v", v.Status, v.Message, stepNames(v), v.Findings)
	if statusOf(v.Run) != StatusRefused || !strings.Contains(v.Message, "terraform_remote_state") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a branch's git module reading a remote state: %s: %s", v.Status, v.Message)
	}
}

// Held (13e's fix, relay_lease.go cancelledBeforeSent): a cancel while
// the control node prepares an approved apply phase (its credential
// command running) ends the run cancelled; the worker gets a reject, not
// the job; the released plan, opened for the job, counts as used, so a
// second approval cannot apply it later.
func TestAttack13fCancelDuringApplyPhasePrepareHeld(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13eSlowCredential+`
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
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	attack13bTofu(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, js := attack13bPlan(t, h, "instances=2")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rslowdata13f")
	attack13bHandOver(raw, id, job.Token, plan, js)
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed, StatusRefused)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusAwaitingApproval || r.Proposal == nil {
		t.Fatalf("the destroying plan was not held: %s: %s", r.Status, r.Message)
	}
	digest := r.Proposal.Digest
	raw.send(relay.Msg{Type: relay.MsgPoll})
	h.mustSSH("bob", "approve", id, "--digest", digest)
	offer, ok := attack13bNext(ch, relay.MsgOffer, 10*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	waitFor(t, "the apply phase to be claimed", 10*time.Second, func() bool {
		r, _ := h.srv.db.GetRun(id)
		return Status(r.Status) == StatusRunning
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
	if Status(r.Status) != StatusCancelled || r.Proposal == nil || !r.Proposal.Used {
		t.Fatalf("the apply phase cancelled during its preparation: %s (%s), proposal %+v", r.Status, r.Message, r.Proposal)
	}
	if _, _, code := h.ssh("bob", "approve", id, "--digest", digest); code == 0 {
		t.Fatalf("a cancelled run's used plan was approved again")
	}
}

// Promise (README, relay: a saved plan of up to 19 MiB crosses the relay,
// relay.PlanLimit; server/relay relay.MaxLine "bounds one protocol line:
// a job carrying a sealed plan of relay.PlanLimit in base64, with room for
// the rest"). Break: the apply phase's job carries the plan base64-encoded
// twice, once inside the payload's JSON (relay.Payload.Plan []byte) and
// again as the job's sealed Payload []byte, so its line is about 16/9 of
// the plan, while relay.MaxLine allows 4/3 of it plus 4 MiB: any plan over
// about 16.5 MiB passes the plan phase and the rules, and then no worker
// can read its apply's job. Here an honest worker plans a 17.5 MiB plan
// (accepted: under 19 MiB), the rules pass it, and the same worker,
// offered the apply phase, fails to read the job ("a relay message is
// longer than the limit"), drops its connection and dials again; the lease
// is lost, the run fails as if the worker had stopped heartbeating, and
// the released plan is used up: it can never be applied on a pool.
func TestAttack13fPlanUnder19MiBCannotReachItsApplyWorker(t *testing.T) {
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
	attack13fBlob(t, w1.Projects["infra"].Path, 35<<20/2) // 17.5 MiB
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
	if Status(r.Status) != StatusSucceeded {
		t.Fatalf("a plan of 17.5 MiB, under the 19 MiB the relay takes, planned on worker w1 and passed by the rules, was not applied: %s: %s", r.Status, r.Message)
	}
}
