package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// scanCases are the fixtures of testdata/scan, each a working directory a
// template of the same name ("scan-CASE") runs in.
var scanCases = []string{"deep", "post", "methodvar", "get", "shadow", "json", "check", "localcmd",
	"encryption", "modvar", "registry", "broken", "clean"}

// scanHarness is a server whose rule "review" holds every run for bob but
// exempts dry runs by exclude_dry_run, with a template per scan fixture.
func scanHarness(t *testing.T, extra string) *harness {
	t.Helper()
	var cfg strings.Builder
	for _, c := range scanCases {
		fmt.Fprintf(&cfg, "template %q {\n  project = \"infra\"\n  command = \"infra/scan/%s\"\n}\n", "scan-"+c, c)
	}
	cfg.WriteString(`
rule "review" {
  require_approval = true
  exclude_dry_run  = true
  approvers        = ["bob"]
}
`)
	h := newHarness(t, cfg.String()+extra)
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

func stepNames(v runView) []string {
	var names []string
	for _, s := range v.Steps {
		names = append(names, s.Name)
	}
	return names
}

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
			if statusOf(v.Run) != StatusAwaitingApproval || v.Proposal == nil || Stage(v.Proposal.Stage) != StageScan {
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
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("clean configuration: %s: %s", v.Status, v.Message)
	}
	if v.Scan == nil || len(v.Scan.Findings) != 0 || v.Scan.Modules != 2 || len(v.Findings) != 0 {
		t.Fatalf("scan evidence = %+v, findings %+v", v.Scan, v.Findings)
	}
	last := v.Approvals[len(v.Approvals)-1]
	if last.Stage != string(StageScan) || last.Decision != string(DecisionPass) || last.Modules != v.Scan.Digest {
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
	if statusOf(v.Run) == StatusAwaitingApproval || v.Scan == nil || len(v.Scan.Findings) != 0 ||
		!slices.Contains(stepNames(v), "init") {
		t.Fatalf("GET and HEAD http data sources: %s (%s), scan %+v, steps %v", v.Status, v.Message, v.Scan, stepNames(v))
	}
}

// An agent's plan waits for a person whatever the scan would find, unless
// an exemption covers it.
func TestScanAgentPlanStillWaitsForAPerson(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("deploy-bot", "scan-clean", "--dry-run")
	if statusOf(v.Run) != StatusAwaitingApproval || v.Proposal == nil || Stage(v.Proposal.Stage) != StageRequest ||
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
	if Stage(v.Proposal.Stage) != StageRequest || v.Scan != nil {
		t.Fatalf("approval rule without exclude_dry_run: %+v, scan %+v", v.Proposal, v.Scan)
	}
	v = h.launchWait("alice", "scan-clean", "--dry-run")
	if statusOf(v.Run) != StatusSucceeded || v.Scan != nil || slices.Contains(stepNames(v), "get") {
		t.Fatalf("a dry run no rule covers was scanned: %s, %+v, %v", v.Status, v.Scan, stepNames(v))
	}
}

// The same module tree scanned and then planned: the release carries the
// modules' digest and the plan runs exactly them; a module changed between
// the scan and the plan is refused, before any plan.
func TestScanReleasedPlansExactlyTheScannedModules(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-modvar", "--dry-run")
	if Stage(v.Proposal.Stage) != StageScan {
		t.Fatalf("modvar: %s %+v", v.Status, v.Proposal)
	}
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	v = h.show("bob", v.ID)
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("the released run: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	}
	a := v.Approvals[len(v.Approvals)-1]
	if a.By != "bob" || a.Stage != string(StageScan) || a.Modules != v.Scan.Digest || a.Modules == "" {
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
	if statusOf(v.Run) != StatusRefused || !strings.Contains(v.Message, "changed after the scan") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a configuration changed after the scan: %s: %s, steps %v", v.Status, v.Message, stepNames(v))
	}
}

// A drift check is a plan too: behind exclude_dry_run a finding holds it at
// the scan stage before anything plans, and a clean one plans and keeps its
// plan, made from exactly the scanned modules.
func TestScanCoversDriftChecks(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-deep", "--check")
	if statusOf(v.Run) != StatusAwaitingApproval || Stage(v.Proposal.Stage) != StageScan || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a check with an external data source: %s %+v, steps %v", v.Status, v.Proposal, stepNames(v))
	}
	v = h.launchWait("alice", "scan-clean", "--check")
	if statusOf(v.Run) != StatusSucceeded || v.Check == nil || !v.Check.Kept || v.Scan == nil || len(v.Scan.Findings) != 0 {
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
	if statusOf(v.Run) != StatusSucceeded || !strings.Contains(h.mustSSH("bob", "log", v.ID), "runs in the scan's private copy") {
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
	if statusOf(v.Run) != StatusAwaitingApproval || len(v.Findings) != 1 || v.Findings[0].File != "TF_ENCRYPTION" {
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
