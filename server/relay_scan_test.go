package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

const relayScanConfig = testkit.RelayScanConfig

// scanWorkerCfg is a worker whose checkout also holds the scan fixtures.
func scanWorkerCfg(t *testing.T, h *harness, name string, key relayKey, identity string) *config.Worker {
	t.Helper()
	cfg := relayWorkerCfg(t, h, name, "eu", key, identity)
	if err := os.CopyFS(filepath.Join(cfg.Projects["infra"].Path, "infra", "scan"), os.DirFS("testdata/scan")); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A scanned dry run on a pool is scanned on the worker that plans it, in
// the worker's checkout: a clean configuration with a local module is
// exempted by the rules' pass, recorded with the modules' digest, and
// plans exactly the scanned modules (init -get=false); a drift check with
// a finding is held at the scan stage before anything plans, and a clean
// check keeps its plan.
func TestRelayScanOnTheWorker(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	startWorker(t, w1)
	defer func() { // every run's private directory (the scan's copy in it) goes when the run ends
		waitFor(t, "the worker's run directories to go", 10*time.Second, func() bool {
			left, _ := os.ReadDir(filepath.Join(w1.DataDir, "runs"))
			return len(left) == 0
		})
	}()
	v := h.launchWait("alice", "rs-clean", "--dry-run")
	if v.Run.Status != StatusSucceeded || v.PlannedBy != "w1" {
		t.Fatalf("a clean scanned dry run on w1: %s by %q: %s\n%s", v.Status, v.PlannedBy, v.Message, h.mustSSH("bob", "log", v.ID))
	}
	if v.Scan == nil || v.Scan.Modules != 2 || len(v.Scan.Findings) != 0 || v.Scan.Why != scanForExemption {
		t.Fatalf("scan evidence = %+v", v.Scan)
	}
	last := v.Approvals[len(v.Approvals)-1]
	if last.Stage != StageScan || last.Decision != DecisionPass || last.Modules != v.Scan.Digest {
		t.Fatalf("the scan's pass is not recorded with the modules' digest: %+v", v.Approvals)
	}
	if want := []string{"get", "init", "plan"}; !slices.Equal(stepNames(v), want) {
		t.Fatalf("steps = %v, want %v", stepNames(v), want)
	}
	log := h.mustSSH("bob", "log", v.ID)
	for _, want := range []string{"module.m.terraform_data.in_module will be created", "init -input=false -no-color -get=false", "the modules in place are the ones scanned"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log lacks %q:\n%s", want, log)
		}
	}

	v = h.launchWait("alice", "rs-deep", "--check")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageScan || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a check with an external data source: %s (%s) %+v, steps %v", v.Status, v.Message, v.Proposal, stepNames(v))
	}
	if len(v.Findings) != 1 || v.Findings[0].Address != "module.a.module.b.data.external.x" || v.Findings[0].File != "infra/scan/deep/a/b/main.tf" {
		t.Fatalf("findings = %+v", v.Findings)
	}
	v = h.launchWait("alice", "rs-clean", "--check")
	if v.Run.Status != StatusSucceeded || v.Check == nil || !v.Check.Kept || v.Scan == nil || len(v.Scan.Findings) != 0 {
		t.Fatalf("a clean check: %s (%s), check %+v, scan %+v", v.Status, v.Message, v.Check, v.Scan)
	}
	if tr := h.mustSSH("bob", "audit"); strings.Contains(tr, "result rejected") {
		t.Fatalf("a scan's decision left a worker reporting into an ended lease:\n%s", tr)
	}
}

// A run held at the scan stage on one worker and released is scanned
// again by whichever worker takes it, which must read exactly the
// released evidence: on another worker with the same checkout it plans;
// where the worker's checkout changed after the hold, it is refused before
// any plan.
func TestRelayScanReleasedRunScannedAgainOnTheNextWorker(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	_, drain1 := startWorker(t, scanWorkerCfg(t, h, "w1", keys["w1"], identity))
	v := h.launchWait("alice", "rs-modvar", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal.Stage != StageScan || v.PlannedBy != "w1" {
		t.Fatalf("modvar on w1: %s by %q %+v: %s", v.Status, v.PlannedBy, v.Proposal, v.Message)
	}
	drain1()
	w2 := scanWorkerCfg(t, h, "w2", keys["w2"], identity)
	startWorker(t, w2)
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	v = h.show("bob", v.ID)
	log := h.mustSSH("bob", "log", v.ID)
	if v.Run.Status != StatusSucceeded || v.PlannedBy != "w2" {
		t.Fatalf("the released run: %s by %q: %s\n%s", v.Status, v.PlannedBy, v.Message, log)
	}
	if !strings.Contains(log, "worker w2 read the same") || !strings.Contains(log, "module.m.terraform_data.in_module will be created") {
		t.Fatalf("the released run's log:\n%s", log)
	}

	v = h.launchWait("alice", "rs-modvar", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval {
		t.Fatalf("held again: %s: %s", v.Status, v.Message)
	}
	main := filepath.Join(w2.Projects["infra"].Path, "infra/scan/modvar/main.tf")
	src, _ := os.ReadFile(main)
	if err := os.WriteFile(main, append(src, []byte("\nresource \"terraform_data\" \"late\" {}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusRefused, StatusSucceeded, StatusFailed)
	v = h.show("bob", v.ID)
	if v.Run.Status != StatusRefused || !strings.Contains(v.Message, "that a person released") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a checkout changed after the hold: %s: %s, steps %v", v.Status, v.Message, stepNames(v))
	}
}

// A pull request's plan on a pool is exported and scanned on the worker,
// from the worker's own git checkout: a branch with an external data
// source is refused naming it, with no tofu process started; a clean
// branch plans its commit in a private tree. The control node has no git
// checkout here, so the worker resolves the ref and reports the commit.
// The worker's checkout is left as it was.
func TestRelayPullRequestPlanOnTheWorker(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	git := gitIn(t, checkout)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "evil")
	stolen := filepath.Join(t.TempDir(), "stolen")
	evil := "data \"external\" \"steal\" {\n  program = [\"sh\", \"-c\", \"env > " + stolen + "; echo {}\"]\n}\n"
	writeFile(t, filepath.Join(checkout, "infra/data/evil.tf"), evil)
	git("add", "-A")
	git("commit", "-q", "-m", "evil")
	git("checkout", "-q", "main")
	git("checkout", "-q", "-b", "clean")
	writeFile(t, filepath.Join(checkout, "infra/data/extra.tf"), "resource \"terraform_data\" \"extra\" {\n  input = \"from the branch\"\n}\n")
	git("add", "-A")
	git("commit", "-q", "-m", "one more")
	git("checkout", "-q", "main")
	before, head := git("status", "--porcelain", "--ignored"), git("rev-parse", "HEAD")
	startWorker(t, w1)

	v := h.launchWait("alice", "rpr", "--dry-run", "--ref", "evil")
	if v.Run.Status != StatusRefused || !strings.Contains(v.Message, "data.external.steal") || len(v.Steps) != 0 {
		t.Fatalf("an evil branch on the pool: %s: %s, steps %v", v.Status, v.Message, stepNames(v))
	}
	if v.Commit == nil || v.Commit.Ref != "evil" || v.Commit.SHA != git("rev-parse", "evil") || v.PlannedBy != "w1" {
		t.Fatalf("commit = %+v, planned by %q", v.Commit, v.PlannedBy)
	}
	if _, err := os.Stat(stolen); err == nil {
		t.Fatal("the branch's external program ran")
	}
	v = h.launchWait("alice", "rpr", "--dry-run", "--ref", "clean")
	log := h.mustSSH("alice", "log", v.ID)
	if v.Run.Status != StatusSucceeded || !strings.Contains(log, "terraform_data.extra will be created") || !strings.Contains(log, "private tree on worker w1") {
		t.Fatalf("a clean branch on the pool: %s: %s\n%s", v.Status, v.Message, log)
	}
	if v.Commit == nil || v.Commit.Ref != "clean" || v.Commit.SHA != git("rev-parse", "clean") {
		t.Fatalf("commit = %+v", v.Commit)
	}
	if after := git("status", "--porcelain", "--ignored"); after != before || git("rev-parse", "HEAD") != head {
		t.Fatalf("the worker's checkout changed:\nbefore %q\nafter  %q", before, after)
	}
}

// When the control node's checkout resolves the ref to a commit the
// worker's checkout does not hold, the worker says so and plans nothing.
func TestRelayPullRequestCommitMissingOnTheWorker(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "the control node's own history")
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	git := gitIn(t, w1.Projects["infra"].Path)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "the worker's history")
	startWorker(t, w1)
	v := h.launchWait("alice", "rpr", "--dry-run", "--ref", "main")
	if v.Run.Status != StatusFailed || !strings.Contains(v.Message, "does not hold commit "+h.git("rev-parse", "main")) || len(v.Steps) != 0 {
		t.Fatalf("a commit the worker lacks: %s: %s, steps %v", v.Status, v.Message, stepNames(v))
	}
}

// A worker that sends a scan for a job that is not scanned, or a second
// scan, fails the run rather than have it decided on.
func TestRelayScanMessagesOutOfTurn(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	take := func(args ...string) (string, relay.Msg) {
		raw.Send(relay.Msg{Type: relay.MsgPoll})
		id := runIDOf(t, h.mustSSH("alice", append(append([]string{"launch"}, args...), "--json")...))
		raw.Recv() // the offer
		raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
		return id, raw.Recv()
	}
	evidence := &store.Scan{Digest: "sha256:" + strings.Repeat("0", 64), Modules: 1}
	id, job := take("rnet", "--dry-run", "--var", "region=a")
	if job.ScanWhy != "" {
		t.Fatalf("an unscanned dry run's job says scan %q", job.ScanWhy)
	}
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: evidence})
	h.waitStatus(id, StatusFailed)
	if r, _ := h.srv.db.GetRun(id); !strings.Contains(r.Message, "not scanned") || r.Scan != nil {
		t.Fatalf("a scan for an unscanned job: %s: %s, scan %+v", r.Status, r.Message, r.Scan)
	}
	raw.Recv() // the scan_stop
	id, job = take("rs-clean", "--dry-run")
	if job.ScanWhy != scanForExemption {
		t.Fatalf("a scanned dry run's job says scan %q", job.ScanWhy)
	}
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: evidence})
	if m := raw.Recv(); m.Type != relay.MsgScanPass {
		t.Fatalf("a clean scan was answered %+v", m)
	}
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: evidence})
	h.waitStatus(id, StatusFailed)
	if r, _ := h.srv.db.GetRun(id); !strings.Contains(r.Message, "second scan") {
		t.Fatalf("a second scan: %s: %s", r.Status, r.Message)
	}
}

func gitIn(t *testing.T, dir string) func(args ...string) string { return testkit.GitIn(t, dir) }

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	testkit.WriteFile(t, path, text)
}

// A worker's findings are capped at maxFindings and one line saying how
// many more there were; reasons are cut only after masking, so a secret
// that straddles the cut is still masked; bounding twice changes nothing.
func TestScanEvidenceBoundedAfterMasking(t *testing.T) {
	m := mask.New()
	secret := "s3cr3t-" + strings.Repeat("x", 40)
	m.Add(secret)
	l := &relayLease{masker: m, scanWhy: scanForExemption}
	reason := strings.Repeat("r", maxFindingReason-10) + secret
	var fs []store.Finding
	for i := range 150 {
		fs = append(fs, store.Finding{Address: fmt.Sprintf("data.external.x%d", i), File: "main.tf", Line: i + 1, Reason: reason})
	}
	sc := (&relayHub{}).evidence(l, &store.Scan{Digest: "sha256:x", Modules: 1, Findings: fs})
	if len(sc.Findings) != maxFindings+1 || !strings.Contains(sc.Findings[maxFindings].Reason, "50 more findings") {
		t.Fatalf("%d findings kept, the last %q", len(sc.Findings), sc.Findings[len(sc.Findings)-1].Reason)
	}
	for _, f := range sc.Findings {
		if strings.Contains(f.Reason, "s3cr3t") || len(f.Reason) > maxFindingReason+len("…") {
			t.Fatalf("a reason kept part of the secret or its length (%d bytes): %q", len(f.Reason), f.Reason)
		}
	}
	if again := boundFindings(sc.Findings); !slices.Equal(again, sc.Findings) {
		t.Fatal("bounding a bounded list changed it")
	}
	if n := len(boundFindings(fs[:maxFindings+1])); n != maxFindings+1 {
		t.Fatalf("%d findings were cut to %d", maxFindings+1, n)
	}
}

// Promise (relay: the control node keeps the decisions, and a relayed run's
// private files live in the run's private directory on the worker; the
// control node holds a plan in clear only in memory). Once, ending a relayed
// run on a worker's scan evidence wiped plan.tfplan relative to the control
// node's current directory, overwriting and removing whatever file of that
// name the operator had there.
func TestAScanHoldLeavesTheControlNodesDirectoryAlone(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	cwd := t.TempDir()
	t.Chdir(cwd)
	mine := filepath.Join(cwd, planFileName)
	writeFile(t, mine, "the operator's own saved plan\n")

	id, job := takeRun(t, h, raw, "rs-modvar", "--dry-run")
	if job.ScanWhy != scanForExemption {
		t.Fatalf("job scan %q", job.ScanWhy)
	}
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: rawEvidence(store.Finding{
		Address: "data.external.x", File: "infra/scan/modvar/main.tf", Line: 1, Reason: "runs a program"})})
	if m := raw.Recv(); m.Type != relay.MsgScanStop {
		t.Fatalf("a finding was answered %+v", m)
	}
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	if b, err := os.ReadFile(mine); err != nil || string(b) != "the operator's own saved plan\n" {
		t.Fatalf("holding a relayed run on its scan wiped %s in the control node's current directory (%v, now %q)", planFileName, err, b)
	}
}

// Promise (spec: a dry run behind exclude_dry_run, and every pull request's
// plan, is scanned before it plans; the control node decides on the evidence;
// "the control node still checks what it can"). Once, a worker that reported
// a result for a scanned job without ever sending its scan had the run
// recorded succeeded, unscanned.
func TestAScannedJobsResultWithoutItsScanIsRefused(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	for _, args := range [][]string{{"rs-modvar", "--dry-run"}, {"rpr", "--dry-run", "--ref", "main"}} {
		id, job := takeRun(t, h, raw, args...)
		if job.ScanWhy == "" {
			t.Fatalf("%v: the job is not scanned", args)
		}
		raw.Send(relay.Msg{Type: relay.MsgStep, Run: id, Token: job.Token, Step: "plan", Exit: 0})
		raw.Send(relay.Msg{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded, Exit: 0,
			Commit: &store.Commit{Ref: "main", SHA: strings.Repeat("a", 40)}})
		h.waitStatus(id, StatusSucceeded, StatusFailed, StatusRefused)
		r, _ := h.srv.db.GetRun(id)
		if r.Status == StatusSucceeded {
			t.Errorf("%v: a scanned job's result without any scan was accepted: %s (%s), scan %+v, approvals %+v", args, r.Status, r.Message, r.Scan, r.Approvals)
		}
	}
}

// A worker that sends its scan and then goes silent while the control node's
// verdict is on its way loses its lease once: the run fails within the lease
// timeout, is not re-run, and a scan, result or scan_pass-like message from
// it afterwards is rejected and changes nothing.
func TestAWorkerSilentAfterItsScanLosesItsLeaseOnce(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	id, job := takeRun(t, h, raw, "rs-clean", "--dry-run")
	raw.Send(relay.Msg{Type: relay.MsgScanPass, Run: id, Token: job.Token, Released: "bob"})
	if m := raw.Recv(); m.Type != relay.MsgReject {
		t.Fatalf("a worker's own scan_pass was answered %+v", m)
	}
	if r, _ := h.srv.db.GetRun(id); r.Scan != nil || len(r.Approvals) != 0 || r.Status != StatusRunning {
		t.Fatalf("a worker's own scan_pass changed the run: %s, scan %+v, approvals %+v", r.Status, r.Scan, r.Approvals)
	}
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: rawEvidence()})
	if m := raw.Recv(); m.Type != relay.MsgScanPass {
		t.Fatalf("clean evidence was answered %+v", m)
	}
	started := time.Now()
	h.waitStatus(id, StatusFailed, StatusSucceeded, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	if r.Status != StatusFailed || time.Since(started) > 8*time.Second || !strings.Contains(r.Message, "stopped heartbeating") {
		t.Fatalf("a worker silent after its scan: %s after %s: %s", r.Status, time.Since(started), r.Message)
	}
	if m := raw.Recv(); m.Type != relay.MsgReject {
		t.Fatalf("the lost lease was answered %+v", m)
	}
	for _, m := range []relay.Msg{
		{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: rawEvidence()},
		{Type: relay.MsgScanPass, Run: id, Token: job.Token, Released: "bob"},
		{Type: relay.MsgResult, Run: id, Token: job.Token, Status: StatusSucceeded},
	} {
		raw.Send(m)
		if got := raw.Recv(); got.Type != relay.MsgReject {
			t.Errorf("%s after the lease was lost: answered %+v", m.Type, got)
		}
	}
	if r2, _ := h.srv.db.GetRun(id); r2.Status != r.Status || r2.Message != r.Message || len(r2.Approvals) != len(r.Approvals) {
		t.Errorf("late messages changed the run: %s %q", r2.Status, r2.Message)
	}
}

// On a worker, a TF_ENCRYPTION passphrase the scan cannot parse and a
// sensitive answer that names a module directory reach no log, finding, show
// or audit entry; a credential's TF_DATA_DIR refuses the scanned run before
// anything plans, so a manifest left in the checkout is never trusted; a
// configuration file that is a FIFO is refused before any plan.
func TestAWorkersScanKeepsSecretsOutAndRefusesUntrustedSettings(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig+workerScanSecretConfig)
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
	if log := h.mustSSH("bob", "log", v.ID); strings.Contains(log, "never-scanned") || v.Run.Status == StatusSucceeded {
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

// Promise (relay: the scan runs on the worker, in the run's private directory
// under data_dir; any data_dir works). Once, a worker whose data_dir lay
// inside its checkout refused every scanned run, because the scan's copy
// copied itself into itself until the path was too long.
func TestAWorkerScansWithItsDataDirInsideTheCheckout(t *testing.T) {
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := scanWorkerCfg(t, h, "w1", keys["w1"], identity)
	w1.DataDir = filepath.Join(w1.Projects["infra"].Path, "worker-data")
	startWorker(t, w1)
	v := h.launchWait("alice", "rs-clean", "--dry-run")
	if v.Run.Status != StatusSucceeded {
		t.Fatalf("a clean scanned dry run on a worker whose data_dir is inside its checkout: %s: %.600s", v.Status, v.Message)
	}
}

// The control node reads a worker's messages in order, so a worker that
// pipelines its scan and a saved plan for a drift check (without waiting for
// scan_pass) gets scan_stop for a finding and its plan rejected: the check is
// held at the scan stage and keeps no plan. And a run waiting for its scan's
// verdict when the control node restarts is marked interrupted; the worker's
// scan sent to the new control node with its old lease is rejected and
// records nothing.
func TestAWorkersScanVerdictRacesChangeNothing(t *testing.T) {
	h, keys, _ := relayHarness(t, relayScanConfig)
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rs-deep", "--check")
	if job.ScanWhy == "" || Kind(job.Kind) != KindCheck {
		t.Fatalf("job %+v", job)
	}
	raw.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: rawEvidence(store.Finding{
		Address: "module.a.module.b.data.external.x", File: "infra/scan/deep/a/b/main.tf", Line: 1, Reason: "runs a program"})})
	handOverPlan(raw, id, job.Token, []byte("not a plan"), []byte("{}"))
	if m, ok := nextMsg(ch, relay.MsgScanStop, 10*time.Second); !ok {
		t.Fatalf("no scan_stop: %+v", m)
	}
	for range 5 { // planning, plan_start, two chunks, plan_end
		if m, ok := nextMsg(ch, relay.MsgReject, 10*time.Second); !ok {
			t.Fatalf("a pipelined plan message was not rejected: %+v", m)
		}
	}
	h.waitStatus(id, StatusAwaitingApproval, StatusFailed)
	r, _ := h.srv.db.GetRun(id)
	if r.Status != StatusAwaitingApproval || r.Proposal == nil || r.Proposal.Stage != StageScan || r.Check != nil {
		t.Fatalf("the pipelined check: %s (%s), proposal %+v, check %+v", r.Status, r.Message, r.Proposal, r.Check)
	}

	id, job = leaseRun(t, h, raw, ch, "rs-clean", "--dry-run")
	h.waitStatus(id, StatusRunning)
	h.restart()
	late, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu"})
	late.Send(relay.Msg{Type: relay.MsgScanned, Run: id, Token: job.Token, Scan: rawEvidence()})
	if m := late.Recv(); m.Type != relay.MsgReject {
		t.Fatalf("a scan from before the restart was answered %+v", m)
	}
	if r, _ := h.srv.db.GetRun(id); r.Status != StatusInterrupted || r.Scan != nil {
		t.Fatalf("the run waiting for its verdict across a restart: %s (%s), scan %+v", r.Status, r.Message, r.Scan)
	}
}

// workerScanSecretConfig exempts dry runs of three templates on pool eu
// behind the scan: one with a TF_ENCRYPTION credential whose passphrase
// the scan cannot parse, one whose credential sets TF_DATA_DIR, and one
// whose sensitive survey answer names a module directory.
const workerScanSecretConfig = `
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
