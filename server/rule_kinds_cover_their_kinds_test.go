package server

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/config"
)

// A rule with kinds = ["check"] holds a drift check before it plans, for
// its approvers, and leaves dry runs and applies alone. It once never
// matched a check: checks were matched as "plan" before planning and as
// "apply" at their decision.
func TestACheckRuleHoldsACheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "checks" {
  templates        = ["data"]
  kinds            = ["check"]
  require_approval = true
  approvers        = ["alice"]
}
`)
	if v := h.launchWait("alice", "data"); v.Status != StatusSucceeded {
		t.Fatalf("an apply was held by a rule for checks: %s %s", v.Status, v.Message)
	}
	if v := h.launchWait("alice", "data", "--dry-run"); v.Status != StatusSucceeded {
		t.Fatalf("a dry run was held by a rule for checks: %s %s", v.Status, v.Message)
	}
	v := h.launchWait("carol", "data", "--check")
	if v.Status != StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != StageRequest || len(v.Steps) != 0 {
		t.Fatalf("the check is %s (%s) after steps %v, want held before planning", v.Status, v.Message, stepNames(v))
	}
	if hd := v.Proposal.Holds; len(hd) != 1 || hd[0].Rule != "checks" || strings.Join(hd[0].Approvers, ",") != "alice" {
		t.Fatalf("the check is held by %+v, want rule checks for alice", hd)
	}
	if _, errOut, code := h.ssh("bob", "approve", v.ID, "--digest", v.Proposal.Digest); code == 0 || !strings.Contains(errOut, "not among the approvers") {
		t.Errorf("bob released a check held for alice: %d %s", code, errOut)
	}
}

// A rule with kinds = ["check"] and exclude_dry_run scans a drift check
// before it plans, and not a dry run.
func TestACheckRuleWithExcludeDryRunScansACheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "checks" {
  templates        = ["data"]
  kinds            = ["check"]
  require_approval = true
  exclude_dry_run  = true
}
`)
	if v := h.launchWait("alice", "data", "--dry-run"); v.Status != StatusSucceeded || v.Scan != nil {
		t.Fatalf("the dry run: %s, scan %+v; want planned unscanned", v.Status, v.Scan)
	}
	v := h.launchWait("alice", "data", "--check")
	if v.Status != StatusSucceeded || v.Scan == nil || v.Scan.Why != scanForExemption {
		t.Fatalf("the check: %s (%s), scan %+v; want scanned, then checked", v.Status, v.Message, v.Scan)
	}
}

// A rule with kinds = ["reconcile"] holds a reconcile for its approvers and
// no apply.
func TestAReconcileRuleHoldsAReconcile(t *testing.T) {
	t.Parallel()
	h := driftedDataWith(t, nil, `
rule "reconciles" {
  templates        = ["data"]
  kinds            = ["reconcile"]
  require_approval = true
  approvers        = ["alice"]
}
`)
	if v := h.launchWait("alice", "data", "--var", "instances=5"); v.Status != StatusSucceeded {
		t.Fatalf("an apply was held by a rule for reconciles: %s %s", v.Status, v.Message)
	}
	v := h.check("3")
	if len(v.Check.Plan.Holds) != 1 || v.Check.Plan.Holds[0].Rule != "reconciles" {
		t.Errorf("the check's plan records holds %+v, want rule reconciles", v.Check.Plan.Holds)
	}
	// The check changed nothing: the by-hand 5 are what the apply made.
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	r := h.heldReconcile("3", "reconciles", []string{"alice"})
	h.mustSSH("bob", "approve", r.ID, "--digest", r.Proposal.Digest)
	if now := h.show("bob", r.ID); now.Status != StatusAwaitingApproval {
		t.Fatalf("bob alone released a reconcile held for alice: %s", now.Status)
	}
}

// check reports a rule that can never hold or refuse a run, and says what
// to change; it reports nothing for rules that can.
func TestCheckFlagsARuleThatNeverMatches(t *testing.T) {
	t.Parallel()
	h := writeHarness(t, "", dataTemplates+`
project "other" {
  path = "/tmp"
}
rule "plan-content-on-plans" {
  kinds       = ["plan", "check"]
  max_destroy = 0
}
rule "exempts-all-it-names" {
  kinds            = ["check"]
  require_approval = true
  exclude_dry_run  = true
}
rule "wrong-project" {
  templates        = ["data"]
  projects         = ["other"]
  require_approval = true
}
rule "fine-checks" {
  kinds            = ["check"]
  require_approval = true
}
rule "fine-reconciles" {
  kinds       = ["reconcile"]
  max_destroy = 0
}
`)
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range Check(cfg, testEnviron) {
		if strings.HasPrefix(p.What, "rule ") {
			got = append(got, p.What)
		}
	}
	all := strings.Join(got, "\n")
	mustContain(t, "check's report", all,
		"rule plan-content-on-plans", "name reconcile (or apply) in kinds",
		"rule exempts-all-it-names", "exclude_dry_run exempts exactly those",
		"rule wrong-project", "no configured template is both among its templates (data) and in its projects (other)")
	if len(got) != 3 || strings.Contains(all, "fine-") {
		t.Errorf("check reported %d rule problems, want the 3 unmatchable rules:\n%s", len(got), all)
	}
}
