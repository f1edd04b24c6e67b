package server

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// scanHarness is a server whose rule "review" holds every run for bob but
// exempts dry runs by exclude_dry_run, with a template per scan fixture.
func scanHarness(t *testing.T, extra string) *harness {
	t.Helper()
	h := newHarness(t, testkit.ScanConfig()+extra)
	if err := os.CopyFS(filepath.Join(h.project, "infra", "scan"), os.DirFS("testdata/scan")); err != nil {
		t.Fatal(err)
	}
	return h
}

// launchWait launches args as user with --wait --json and returns the run
// as it ended or was held.
func (h *harness) launchWait(user string, args ...string) runView {
	h.t.Helper()
	out, errOut, _ := h.ssh(user, append(append([]string{"launch"}, args...), "--wait", "--json")...)
	var v runView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		h.t.Fatalf("launch %v: %v\n%s%s", args, err, out, errOut)
	}
	return v
}

func stepNames(v runView) []string { return testkit.StepNames(v) }

// Each fixture through a real exempted dry run: a finding holds it at the
// scan stage, named by address with file:line, and no tofu plan process
// starts before a person releases it; a clean configuration is exempted
// and plans.
func TestScanHoldsWhatWouldRunAtPlanTime(t *testing.T) {
	h := scanHarness(t, "")
	held := map[string]struct{ addr, file, reason string }{
		"deep":       {"module.a.module.b.data.external.x", "infra/scan/deep/a/b/main.tf", "external"},
		"post":       {"data.http.p", "infra/scan/post/main.tf", "POST"},
		"methodvar":  {"data.http.v", "infra/scan/methodvar/main.tf", "method"},
		"shadow":     {"data.external.hidden", "infra/scan/shadow/main.tofu", "external"},
		"json":       {"data.external.j", "infra/scan/json/main.tf.json", "external"},
		"check":      {"data.external.in_check", "infra/scan/check/main.tf", "check"},
		"localcmd":   {"data.local_command.l", "infra/scan/localcmd/main.tf", "local_command"},
		"encryption": {"key_provider.external.k", "infra/scan/encryption/main.tf", "external"},
		"modvar":     {"module.m", "infra/scan/modvar/main.tf", "variable"},
		"registry":   {"module.vpc", "infra/scan/registry/main.tf", "download"},
		"broken":     {"", "infra/scan/broken/main.tf", ""},
	}
	for name, want := range held {
		t.Run(name, func(t *testing.T) {
			id := h.launchWait("alice", "scan-"+name, "--dry-run").ID
			v := h.show("bob", id)
			if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageScan {
				t.Fatalf("status %s (%s), proposal %+v; want held at the scan stage", v.Status, v.Message, v.Proposal)
			}
			if slices.Contains(stepNames(v), "plan") || strings.Contains(h.mustSSH("bob", "log", id), "$ tofu plan") {
				t.Fatalf("a tofu plan started before anyone released the run: steps %v", stepNames(v))
			}
			if !slices.ContainsFunc(v.Findings, func(f store.Finding) bool {
				return (want.addr == "" || f.Address == want.addr) && f.File == want.file && f.Line > 0 &&
					strings.Contains(strings.ToLower(f.Reason), strings.ToLower(want.reason))
			}) {
				t.Fatalf("findings %+v; want %s at %s (%q)", v.Findings, want.addr, want.file, want.reason)
			}
			if !v.WaitingForYou || v.Holds[0].Rule != "review" {
				t.Fatalf("bob is not asked to release the review hold: %+v", v.Holds)
			}
			text := h.mustSSH("bob", "show", id)
			if !strings.Contains(text, "finding "+orRoot(want.addr)) || !strings.Contains(text, want.file+":") {
				t.Fatalf("show does not name the finding:\n%s", text)
			}
		})
	}
	if tr := h.mustSSH("bob", "audit", "--json"); !strings.Contains(tr, "module.a.module.b.data.external.x") {
		t.Fatalf("the audit trail does not name the finding:\n%s", tr)
	}
}

func orRoot(addr string) string {
	if addr == "" {
		return "the root module"
	}
	return addr
}

// A clean configuration with a local module is exempted and plans; the
// scan's pass is recorded with the modules' digest. HEAD and default GET
// http data sources pass the scan too (their provider cannot be installed
// on this machine, so the run goes on to init and stops there).
func TestScanExemptsCleanPlans(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	if v.Run.Status != StatusSucceeded {
		t.Fatalf("clean configuration: %s: %s", v.Status, v.Message)
	}
	if v.Scan == nil || len(v.Scan.Findings) != 0 || v.Scan.Modules != 2 || len(v.Findings) != 0 {
		t.Fatalf("scan evidence = %+v, findings %+v", v.Scan, v.Findings)
	}
	last := v.Approvals[len(v.Approvals)-1]
	if last.Stage != StageScan || last.Decision != DecisionPass || last.Modules != v.Scan.Digest {
		t.Fatalf("the scan's pass is not recorded with the modules' digest: %+v", v.Approvals)
	}
	if want := []string{"get", "init", "plan"}; !slices.Equal(stepNames(v), want) {
		t.Fatalf("steps = %v, want %v", stepNames(v), want)
	}
	if log := h.mustSSH("bob", "log", v.ID); !strings.Contains(log, "module.m.terraform_data.in_module will be created") ||
		!strings.Contains(log, "init -input=false -no-color -get=false") {
		t.Fatalf("the plan did not run with the scanned modules:\n%s", log)
	}
	v = h.launchWait("alice", "scan-get", "--dry-run")
	if v.Run.Status == StatusAwaitingApproval || v.Scan == nil || len(v.Scan.Findings) != 0 ||
		!slices.Contains(stepNames(v), "init") {
		t.Fatalf("GET and HEAD http data sources: %s (%s), scan %+v, steps %v", v.Status, v.Message, v.Scan, stepNames(v))
	}
}

// An agent's plan waits for a person whatever the scan would find, unless
// an exemption covers it.
func TestScanAgentPlanStillWaitsForAPerson(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("deploy-bot", "scan-clean", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageRequest ||
		v.Proposal.Holds[0].Rule != "agent" {
		t.Fatalf("an agent's clean plan: %s, %+v", v.Status, v.Proposal)
	}
}

// Without an exclude_dry_run exemption nothing changes: no scan runs, and
// an approval rule holds the dry run before anything plans.
func TestScanOnlyBehindTheExemption(t *testing.T) {
	h := newHarness(t, `
template "scan-deep" {
  project = "infra"
  command = "infra/scan/deep"
}
template "scan-clean" {
  project = "infra"
  command = "infra/scan/clean"
}
rule "held" {
  templates        = ["scan-deep"]
  require_approval = true
}
`)
	if err := os.CopyFS(filepath.Join(h.project, "infra", "scan"), os.DirFS("testdata/scan")); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "scan-deep", "--dry-run")
	if v.Proposal.Stage != StageRequest || v.Scan != nil {
		t.Fatalf("approval rule without exclude_dry_run: %+v, scan %+v", v.Proposal, v.Scan)
	}
	v = h.launchWait("alice", "scan-clean", "--dry-run")
	if v.Run.Status != StatusSucceeded || v.Scan != nil || slices.Contains(stepNames(v), "get") {
		t.Fatalf("a dry run no rule covers was scanned: %s, %+v, %v", v.Status, v.Scan, stepNames(v))
	}
}

// The same module tree scanned and then planned: the release carries the
// modules' digest and the plan runs exactly them; a module changed between
// the scan and the plan is refused, before any plan.
func TestScanReleasedPlansExactlyTheScannedModules(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-modvar", "--dry-run")
	if v.Proposal.Stage != StageScan {
		t.Fatalf("modvar: %s %+v", v.Status, v.Proposal)
	}
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	v = h.show("bob", v.ID)
	if v.Run.Status != StatusSucceeded {
		t.Fatalf("the released run: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	}
	a := v.Approvals[len(v.Approvals)-1]
	if a.By != "bob" || a.Stage != StageScan || a.Modules != v.Scan.Digest || a.Modules == "" {
		t.Fatalf("the approval does not carry the modules' digest: %+v (scan %s)", a, v.Scan.Digest)
	}
	if log := h.mustSSH("bob", "log", v.ID); !strings.Contains(log, "module.m.terraform_data.in_module will be created") {
		t.Fatalf("the released run did not plan its module:\n%s", log)
	}

	// Held again; the root module changes before bob releases it.
	v = h.launchWait("alice", "scan-modvar", "--dry-run")
	main := filepath.Join(h.project, "infra/scan/modvar/main.tf")
	src, _ := os.ReadFile(main)
	if err := os.WriteFile(main, append(src, []byte("\nresource \"terraform_data\" \"late\" {}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusRefused, StatusSucceeded, StatusFailed)
	v = h.show("bob", v.ID)
	if v.Run.Status != StatusRefused || !strings.Contains(v.Message, "changed after the scan") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a configuration changed after the scan: %s: %s, steps %v", v.Status, v.Message, stepNames(v))
	}
}

// A drift check is a plan too: behind exclude_dry_run a finding holds it at
// the scan stage before anything plans, and a clean one plans and keeps its
// plan, made from exactly the scanned modules.
func TestScanCoversDriftChecks(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-deep", "--check")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal.Stage != StageScan || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a check with an external data source: %s %+v, steps %v", v.Status, v.Proposal, stepNames(v))
	}
	v = h.launchWait("alice", "scan-clean", "--check")
	if v.Run.Status != StatusSucceeded || v.Check == nil || !v.Check.Kept || v.Scan == nil || len(v.Scan.Findings) != 0 {
		t.Fatalf("a clean check: %s (%s), check %+v, scan %+v", v.Status, v.Message, v.Check, v.Scan)
	}
}

// A .terraform in the working directory that is not a directory (a link
// out of the checkout) is never read, written or removed: a scanned run's
// processes run in the scan's private copy, whose .terraform the scan's
// get made, and the file behind the link stays.
func TestScanNeverTouchesALinkedDataDirectory(t *testing.T) {
	h := scanHarness(t, "")
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, "modules"), 0o755)
	keep := filepath.Join(outside, "modules", "keep")
	os.WriteFile(keep, []byte("outside the checkout"), 0o644)
	if err := os.Symlink(outside, filepath.Join(h.project, "infra/scan/clean/.terraform")); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	if v.Run.Status != StatusSucceeded || !strings.Contains(h.mustSSH("bob", "log", v.ID), "runs in the scan's private copy") {
		t.Fatalf("a linked .terraform: %s: %s", v.Status, v.Message)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a file outside the checkout was removed: %v", err)
	}
	if left, _ := os.ReadDir(outside); len(left) != 1 {
		t.Fatalf("something was written through the link: %v", left)
	}
}

// An external key provider that arrives in TF_ENCRYPTION, through a
// credential's environment, is a finding too; the credential's other
// values never appear in what the scan says.
func TestScanReadsTFEncryptionFromTheRunsEnvironment(t *testing.T) {
	h := scanHarness(t, `
credential "enc" {
  env = {
    TF_ENCRYPTION = "key_provider \"external\" \"k\" {\n  command = [\"./key\", \"enc-canary-93c1\"]\n}\n"
  }
}
template "scan-clean-enc" {
  project     = "infra"
  command     = "infra/scan/clean"
  credentials = ["enc"]
}
`)
	v := h.launchWait("alice", "scan-clean-enc", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval || len(v.Findings) != 1 || v.Findings[0].File != "TF_ENCRYPTION" {
		t.Fatalf("TF_ENCRYPTION with an external key provider: %s (%s), findings %+v", v.Status, v.Message, v.Findings)
	}
	for _, out := range []string{h.mustSSH("bob", "show", v.ID), h.mustSSH("bob", "show", v.ID, "--json"), h.mustSSH("bob", "audit"), h.mustSSH("bob", "log", v.ID)} {
		if strings.Contains(out, "enc-canary-93c1") {
			t.Fatalf("a credential's value leaked:\n%s", out)
		}
	}
}

// What a held scan keeps (the private copy of the configuration) is removed
// once the run no longer waits: rejected here.
func TestScanCopyRemovedWhenTheRunEnds(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-deep", "--dry-run")
	copyDir := filepath.Join(h.srv.runsDir, v.ID, scanCopyName)
	if _, err := os.Stat(copyDir); err != nil {
		t.Fatalf("a held run's scanned copy is gone: %v", err)
	}
	h.mustSSH("bob", "reject", v.ID, "--reason", "runs a program")
	if _, err := os.Stat(copyDir); err == nil {
		t.Fatal("a rejected run's scanned copy was kept")
	}
}

// Promise (docs/scan.md step 1): the scan's copy is
// private (DATA_DIR/runs/ID/scan) and "no .terraform" is copied; tofu get
// downloads "there". Once, a .terraform that was a symbolic link was copied
// into the scan's private copy as a link, so the gate's tofu get wrote its
// modules through it, outside the checkout and the data dir.
func TestTheScanCopyNeverWritesThroughASymlinkedDotTerraform(t *testing.T) {
	h := scanHarness(t, "")
	outside := filepath.Join(h.dir, "outside")
	os.MkdirAll(outside, 0o755)
	wd := filepath.Join(h.project, "infra/scan/clean")
	if err := os.Symlink(outside, filepath.Join(wd, ".terraform")); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	var written []string
	filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != outside {
			written = append(written, p)
		}
		return nil
	})
	if len(written) > 0 {
		t.Fatalf("the scan's tofu get wrote outside its private copy through a symlinked .terraform: %v (run %s: %s)", written, v.Status, v.Message)
	}
}

// Promise (docs/scan.md): "anything it cannot read" is a
// finding, and "verify modules: the tree the plan will read is read again;
// unless its digest is the scanned one, the run is refused". Once, a
// configuration file that was a FIFO was left out of the scan's copy and of
// the digest, so the run planned whatever a writer fed it, unscanned.
func TestAConfigurationFileThatIsAFifoIsRefusedBeforeThePlan(t *testing.T) {
	h := scanHarness(t, "")
	fifo := filepath.Join(h.project, "infra/scan/clean/extra.tf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // feed every reader that opens the FIFO
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
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	log := h.mustSSH("bob", "log", v.ID)
	if strings.Contains(log, "$ tofu plan") {
		t.Fatalf("a plan started over a configuration file the scan never read: %s (%s), scan %+v\n%s", v.Status, v.Message, v.Scan, log)
	}
}

// TF_ENCRYPTION in a credential's env: a finding holds the exempted dry run
// before anything plans (envValue reads the run's built env).
func TestEncryptionFromACredentialIsScannedBeforeThePlan(t *testing.T) {
	h := scanHarness(t, `
credential "enc" {
  env = { TF_ENCRYPTION = "key_provider \"external\" \"k\" {\n  command = [\"sh\", \"-c\", \"touch /tmp/x\"]\n}\n" }
}
template "enc-clean" {
  project = "infra"
  command = "infra/scan/clean"
  credentials = ["enc"]
}
`)
	v := h.launchWait("alice", "enc-clean", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageScan {
		t.Fatalf("TF_ENCRYPTION with an external key provider in a credential: %s (%s) findings %+v", v.Status, v.Message, v.Findings)
	}
}

// Path escapes in the exempted path: a module directory that is a link out of
// the checkout, a ../ module source that leaves the checkout, and a working
// directory that is a link out of it. Each is held or refused, and no plan
// starts.
func TestPathsLeadingOutOfTheCheckoutAreHeldOrRefused(t *testing.T) {
	h := scanHarness(t, `
template "esc-link" {
  project = "infra"
  command = "infra/esc/link"
}
template "esc-up" {
  project = "infra"
  command = "infra/esc/up"
}
template "esc-wd" {
  project = "infra"
  command = "infra/esc/wd"
}
`)
	outside := filepath.Join(h.dir, "outside-mod")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "main.tf"), []byte("data \"external\" \"o\" {\n  program = [\"sh\"]\n}\n"), 0o644)
	esc := filepath.Join(h.project, "infra/esc")
	os.MkdirAll(filepath.Join(esc, "link"), 0o755)
	os.WriteFile(filepath.Join(esc, "link/main.tf"), []byte("module \"o\" {\n  source = \"./o\"\n}\n"), 0o644)
	os.Symlink(outside, filepath.Join(esc, "link/o"))
	os.MkdirAll(filepath.Join(esc, "up"), 0o755)
	rel, _ := filepath.Rel(filepath.Join(esc, "up"), outside)
	os.WriteFile(filepath.Join(esc, "up/main.tf"), []byte(fmt.Sprintf("module \"o\" {\n  source = %q\n}\n", "./"+rel)), 0o644)
	os.Symlink(outside, filepath.Join(esc, "wd"))
	for _, tpl := range []string{"esc-link", "esc-up", "esc-wd"} {
		out, errOut, _ := h.ssh("alice", "launch", tpl, "--dry-run", "--wait", "--json")
		t.Logf("%s: %.300s %s", tpl, regexpStatus(out), errOut)
		if strings.Contains(out, `"status": "succeeded"`) || strings.Contains(out, `"name": "plan"`) {
			t.Fatalf("%s planned:\n%s%s", tpl, out, errOut)
		}
	}
}

// TF_ENCRYPTION from a credential's command (env_var) is scanned too: held.
func TestEncryptionFromACredentialCommandIsScannedBeforeThePlan(t *testing.T) {
	script := filepath.Join(t.TempDir(), "enc.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' 'key_provider \"external\" \"k\" { command = [\"true\"] }'\n"), 0o755)
	h := scanHarness(t, fmt.Sprintf(`
credential "enc" {
  command = [%q]
  env_var = "TF_ENCRYPTION"
}
template "enc-clean" {
  project = "infra"
  command = "infra/scan/clean"
  credentials = ["enc"]
}
`, script))
	v := h.launchWait("alice", "enc-clean", "--dry-run")
	if v.Run.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageScan {
		t.Fatalf("TF_ENCRYPTION from a credential command: %s (%s) findings %+v", v.Status, v.Message, v.Findings)
	}
}

// Promise (docs/scan.md): local modules are read from the
// copy of the repository as OpenTofu reads them; the plan runs exactly the
// modules scanned. Once, the scanner resolved a local module source relative
// to the caller's directory with symbolic links resolved while OpenTofu
// joined it lexically, so the plan evaluated a module nobody scanned.
func TestTheScanResolvesALocalSourceAsOpenTofuDoes(t *testing.T) {
	h := scanHarness(t, `
template "lex" {
  project = "infra"
  command = "infra/lex"
}
`)
	wd := filepath.Join(h.project, "infra/lex")
	for name, body := range map[string]string{
		"main.tf":          "module \"a\" {\n  source = \"./link_a\"\n}\n",
		"deep/x/a/main.tf": "module \"b\" {\n  source = \"../b\"\n}\n",
		"deep/x/b/main.tf": "resource \"terraform_data\" \"scanned\" {}\n",
		"b/main.tf":        "resource \"terraform_data\" \"never_scanned\" {\n  input = \"a data external here would run\"\n}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(wd, name)), 0o755)
		os.WriteFile(filepath.Join(wd, name), []byte(body), 0o644)
	}
	if err := os.Symlink("deep/x/a", filepath.Join(wd, "link_a")); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "lex", "--dry-run")
	log := h.mustSSH("bob", "log", v.ID)
	t.Logf("%s: %s\n%s", v.Status, v.Message, log)
	if strings.Contains(log, "never_scanned") {
		t.Fatalf("the plan evaluated a module the scan never read (%s: %s), scan %+v\n%s", v.Status, v.Message, v.Scan, log)
	}
}

// Promise (README "Releasing a scan-stage hold ... plans exactly the modules
// scanned, from the copy the gate kept"; step 4 "verify modules"). Once, a
// kept copy whose modules.json was altered while the run waited sent a module
// to another directory of the checkout, and the released plan loaded a module
// nobody scanned.
func TestAReleasedRunPlansOnlyTheModulesScanned(t *testing.T) {
	h := scanHarness(t, "")
	wd := filepath.Join(h.project, "infra/scan/deep")
	os.MkdirAll(filepath.Join(wd, "other"), 0o755)
	os.WriteFile(filepath.Join(wd, "other/main.tf"), []byte("resource \"terraform_data\" \"tampered\" {}\n"), 0o644)
	v := h.launchWait("alice", "scan-deep", "--dry-run")
	if v.Proposal == nil || v.Proposal.Stage != StageScan {
		t.Fatalf("deep: %s %+v", v.Status, v.Proposal)
	}
	manifest := filepath.Join(h.srv.runsDir, v.ID, scanCopyName, "infra/scan/deep/.terraform/modules/modules.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatalf("the kept copy has no manifest: %v", err)
	}
	tampered := strings.Replace(string(b), `"Dir":"a/b"`, `"Dir":"other"`, 1)
	if tampered == string(b) {
		t.Fatalf("manifest layout: %s", b)
	}
	os.WriteFile(manifest, []byte(tampered), 0o600)
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	log := h.mustSSH("bob", "log", v.ID)
	if strings.Contains(log, "tampered will be created") {
		t.Fatalf("a released run planned a module other than the scanned one after its kept copy changed:\n%s", log)
	}
}

// The same through the exempted path: a dry run under exclude_dry_run whose
// configuration reads remote state through a kubeconfig with an exec
// plugin is exempted (the scan finds nothing) and the plan runs the
// program without a person.
func TestAnExemptedDryRunNeverRunsARemoteStatesKubeconfigExec(t *testing.T) {
	h := scanHarness(t, `
template "kube" {
  project = "infra"
  command = "infra/kube"
}
`)
	marker := filepath.Join(h.dir, "kube-exec-ran")
	dir := filepath.Join(h.project, "infra/kube")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "kc.yaml"), []byte(kubeconfigExec(marker)), 0o644)
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(remoteStateKube), 0o644)
	v := h.launchWait("alice", "kube", "--dry-run")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an exempted dry run ran the program a kubeconfig names without a person (%s: %s; findings %+v)", v.Status, v.Message, v.Findings)
	}
	_ = strings.Contains
}

// Promise (docs/scan.md step 1): "A .terraform the gate
// did not install, committed or left in the working directory, is never read,
// and no setting makes it trusted"; "verify modules: the tree the plan will
// read is read again". Once, a credential's TF_DATA_DIR made init and plan
// read a modules.json left in the working directory, which sent a module to
// another directory the scan never read.
func TestACredentialsDataDirNeverMakesALeftoverManifestTrusted(t *testing.T) {
	h := scanHarness(t, `
credential "dd" {
  env = { TF_DATA_DIR = ".tfdata" }
}
template "dd" {
  project = "infra"
  command = "infra/dd"
  credentials = ["dd"]
}
`)
	dir := filepath.Join(h.project, "infra/dd")
	for name, body := range map[string]string{
		"main.tf":     "module \"m\" {\n  source = \"./mod\"\n}\n",
		"mod/main.tf": "resource \"terraform_data\" \"m\" {\n  input = \"scanned\"\n}\n",
		// not a configuration file OpenTofu loads here: only through the manifest
		"other/main.tf":                "resource \"terraform_data\" \"m\" {\n  input = \"never-scanned\"\n}\n",
		".tfdata/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"m","Source":"./mod","Dir":"other"}]}`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	v := h.launchWait("alice", "dd", "--dry-run")
	log := h.mustSSH("bob", "log", v.ID)
	if strings.Contains(log, "$ tofu plan") && strings.Contains(log, "never-scanned") {
		t.Fatalf("the plan read a module the scan never read (%s: %s):\n%s", v.Status, v.Message, log)
	}
	t.Logf("%s: %s\n%s", v.Status, v.Message, log)
}

// Promise (docs/scan.md): an encryption block whose key
// provider runs a program is a finding, because it "runs a program the
// configuration names at plan time just as external does". Once, an aws_kms
// key provider whose shared config named a credential_process ran that
// program at tofu init, with no person asked, since the scan flagged only the
// external key provider.
func TestAnAwsKmsKeyProviderWithACredentialProcessIsAFinding(t *testing.T) {
	h := scanHarness(t, `
template "kms" {
  project = "infra"
  command = "infra/kms"
}
`)
	marker := filepath.Join(h.dir, "kms-credential-process-ran")
	dir := filepath.Join(h.project, "infra/kms")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "awsconf"), []byte(awsConfigProcess(marker)), 0o644)
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`terraform {
  encryption {
    key_provider "aws_kms" "k" {
      kms_key_id                  = "alias/x"
      key_spec                    = "AES_256"
      region                      = "us-east-1"
      profile                     = "p"
      shared_config_files         = ["./awsconf"]
      skip_credentials_validation = true
      skip_requesting_account_id  = true
      skip_metadata_api_check     = true
      endpoints {
        sts = "http://127.0.0.1:1"
      }
    }
    method "aes_gcm" "m" {
      keys = key_provider.aws_kms.k
    }
    plan {
      method = method.aes_gcm.m
    }
  }
}

resource "terraform_data" "x" {}
`), 0o644)
	v := h.launchWait("alice", "kms", "--dry-run")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an exempted dry run ran the credential_process an aws_kms key provider's shared config names (%s: %s; steps %v; findings %+v)",
			v.Status, v.Message, stepNames(v), v.Findings)
	}
}

// A server restart while a run is held at the scan stage: the private copy
// the gate read is kept, and releasing the run afterwards plans the modules
// scanned (if it passes).
func TestAReleaseAfterARestartPlansTheModulesScanned(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-modvar", "--dry-run")
	if v.Proposal == nil || v.Proposal.Stage != StageScan {
		t.Fatalf("modvar: %s %+v", v.Status, v.Proposal)
	}
	h.restart()
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	v = h.show("bob", v.ID)
	if v.Run.Status != StatusSucceeded {
		t.Fatalf("released after a restart: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	}
}

// The same on the control node: with the server's data_dir inside the
// project's checkout (its default, "<config dir>/data", when the
// configuration file is kept in the repository it serves), a clean
// scanned dry run is refused because the scan's copy copies itself.
func TestTheControlNodeScansWithItsDataDirInsideTheCheckout(t *testing.T) {
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
	writeFiles(t, filepath.Join(h.project, "infra/clean13e"), map[string]string{"main.tf": plainResource})
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
	if v.Run.Status != StatusSucceeded {
		t.Fatalf("a clean scanned dry run with data_dir inside the checkout: %s: %.400s", v.Status, v.Message)
	}
}

func regexpStatus(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"message"`) {
			return l
		}
	}
	return out
}

// awsConfigProcess is an AWS shared config whose profile "p" gets its
// credentials by running sh (touching marker).
func awsConfigProcess(marker string) string {
	return fmt.Sprintf("[profile p]\ncredential_process = sh -c \"env > %s; echo '{\\\"Version\\\":1,\\\"AccessKeyId\\\":\\\"a\\\",\\\"SecretAccessKey\\\":\\\"b\\\"}'\"\nregion = us-east-1\n", marker)
}
