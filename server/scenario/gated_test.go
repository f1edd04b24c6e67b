package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// A count going from 3 to 1 under max_destroy = 1 is held with destroy
// count 2; only the right digest, from an approver who is not the
// requester, releases it, exactly once, and the state matches the plan.
func TestGatedApplyHoldsAndReleasesTheDigest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "destroys" {
  templates   = ["data"]
  max_destroy = 1
  approvers   = ["bob"]
}
`)
	// Nothing destroyed: the rule passes it and the saved plan is applied.
	out := h.mustSSH("alice", "launch", "data", "--wait")
	if !strings.Contains(out, "run 1: succeeded") || !strings.Contains(out, "-out=") || !strings.Contains(out, "apply -input=false -no-color "+filepath.Join(h.dir, "data", "runs", "1", runstep.PlanFileName)) {
		t.Fatalf("first apply did not go through a saved plan:\n%s", out)
	}
	if strings.Contains(out, "-auto-approve") {
		t.Fatalf("a gated apply used -auto-approve:\n%s", out)
	}
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers, want 3", n)
	}

	out = h.mustSSH("carol", "launch", "data", "--var", "instances=1", "--wait")
	if !strings.Contains(out, "run 2: awaiting_approval") {
		t.Fatalf("destroying 2 under max_destroy 1 was not held:\n%s", out)
	}
	v := h.show("bob", "2")
	p := v.Proposal
	if p == nil || p.Destroy != 2 || p.Stage != "plan" || len(p.Holds) != 1 || p.Holds[0].Rule != "destroys" {
		t.Fatalf("proposal = %+v", p)
	}
	if got := strings.Join(p.Addresses["delete"], ","); got != "terraform_data.server[1],terraform_data.server[2]" {
		t.Errorf("delete addresses = %q", got)
	}
	if !strings.Contains(p.PlanText, "2 to destroy") || strings.Contains(p.PlanText, "tofu init") {
		t.Errorf("plan text lacks the plan: %q", p.PlanText)
	}
	// The sealed plan waits; no plaintext plan exists.
	for _, f := range h.dataFiles() {
		if filepath.Base(f) == runstep.PlanFileName {
			t.Errorf("plaintext plan while held: %s", f)
		}
	}

	wrong := "sha256:" + strings.Repeat("0", 64)
	first := h.show("bob", "1").Proposal.Digest // a real digest, of another run's plan
	for _, c := range []struct{ user, digest, want string }{
		{"bob", first, "is not the digest of run 2's held proposal"},
		{"bob", wrong, "is not the digest of run 2's held proposal"},
		{"bob", "sha256:a55b", "want 64"},
		{"carol", p.Digest, "approve role is missing"},
		{"alice", p.Digest, "not among the approvers"},
		{"deploy-bot", p.Digest, "agents cannot approve"},
	} {
		_, errOut, code := h.ssh(c.user, "approve", "2", "--digest", c.digest)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("approve by %s with %s: exit %d %q, want %q", c.user, c.digest, code, errOut, c.want)
		}
	}
	if n := h.stateCount(); n != 3 {
		t.Fatalf("a refused approval changed the state: %d servers", n)
	}
	h.mustSSH("bob", "approve", "2", "--digest", p.Digest)
	h.waitStatus("2", store.StatusSucceeded)
	if n := h.stateCount(); n != 1 {
		t.Fatalf("state holds %d servers after the approved plan, want 1", n)
	}
	_, errOut, code := h.ssh("bob", "approve", "2", "--digest", p.Digest)
	if code == 0 || !strings.Contains(errOut, "already") {
		t.Errorf("second approval: exit %d %q", code, errOut)
	}
	v = h.show("bob", "2")
	if len(v.Approvals) != 1 || v.Approvals[0].By != "bob" || v.Approvals[0].Digest != p.Digest || !v.Proposal.Used {
		t.Errorf("approvals = %+v, used = %v", v.Approvals, v.Proposal.Used)
	}
	for _, f := range h.dataFiles() {
		if filepath.Base(f) == runstep.PlanFileName {
			t.Errorf("plaintext plan after apply: %s", f)
		}
	}
}

// A requester cannot approve their own apply.
func TestSelfApprovalRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	v := h.show("alice", "1")
	_, errOut, code := h.ssh("alice", "approve", "1", "--digest", v.Proposal.Digest)
	if code == 0 || !strings.Contains(errOut, "cannot approve it") {
		t.Fatalf("self approval: exit %d %q", code, errOut)
	}
	h.mustSSH("bob", "approve", "1", "--digest", v.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
}

// A triggers_replace change on 3 resources under max_destroy = 0 is held
// with destroy count 3, all of them replaces.
func TestReplaceCountsAsDestroy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "none" {
  templates   = ["data"]
  max_destroy = 0
}
`)
	h.mustSSH("alice", "launch", "data", "--wait")
	out := h.mustSSH("alice", "launch", "data", "--var", "generation=2", "--wait")
	if !strings.Contains(out, "awaiting_approval") {
		t.Fatalf("not held:\n%s", out)
	}
	p := h.show("bob", "2").Proposal
	if p.Destroy != 3 || p.Replace != 3 || p.Add != 0 || len(p.Addresses["replace"]) != 3 {
		t.Fatalf("proposal = %+v", p)
	}
	h.mustSSH("bob", "reject", "2", "--reason", "not today")
}

// A held plan whose state another apply changed meanwhile ends stale with
// the "submit again" message, and the state is what the other apply left.
func TestStalePlanIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "destroys" {
  templates   = ["data"]
  max_destroy = 0
}
`)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.mustSSH("alice", "launch", "data", "--var", "instances=1", "--wait")
	p := h.show("bob", "2").Proposal
	// Someone applies in the working directory outside Switchtender: the
	// server cannot know before the apply checks the state.
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	if n := h.stateCount(); n != 5 {
		t.Fatalf("the other apply left %d servers", n)
	}
	// The local state file is read when the plan is shown or approved, so
	// the change is caught before anyone approves.
	if _, errOut, code := h.ssh("bob", "approve", "2", "--digest", p.Digest); code != 1 || !strings.Contains(errOut, "stale") {
		t.Fatalf("approving a plan whose state changed: exit %d %q", code, errOut)
	}
	h.waitStatus("2", store.StatusStale)
	r, _ := h.db().GetRun("2")
	if !strings.Contains(r.Message, "rerun 2") || !r.Proposal.Stale {
		t.Errorf("message = %q", r.Message)
	}
	if n := h.stateCount(); n != 5 {
		t.Fatalf("a stale plan changed the state: %d servers", n)
	}
}

// An agent's apply is held before anything plans, then its plan is held
// again: two approvals. An exempted agent's apply takes a person's path.
func TestAgentApplyNeedsTwoApprovals(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate+dataTemplates+`
rule "destroys" {
  templates   = ["data"]
  max_destroy = 0
}
exemption "helper" {
  agents    = ["helper-bot"]
  templates = ["data"]
}
`)
	out := h.mustSSH("deploy-bot", "launch", "network", "--var", "region=x")
	if !strings.Contains(out, "awaiting_approval") {
		t.Fatalf("agent apply not held before planning:\n%s", out)
	}
	if log := h.mustSSH("bob", "log", "1"); strings.Contains(log, "$ tofu") {
		t.Fatalf("something ran before the release:\n%s", log)
	}
	v := h.show("bob", "1")
	if v.Proposal.Stage != "request" {
		t.Fatalf("proposal = %+v", v.Proposal)
	}
	h.mustSSH("bob", "approve", "1", "--digest", v.Proposal.Digest)
	h.waitStatus("1", store.StatusAwaitingApproval, store.StatusFailed)
	v = h.show("bob", "1")
	if v.Status != store.StatusAwaitingApproval || v.Proposal == nil || v.Proposal.Stage != "plan" {
		t.Fatalf("after the first release: %s %s %+v", v.Status, v.Message, v.Proposal)
	}
	h.mustSSH("bob", "approve", "1", "--digest", v.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
	if v = h.show("bob", "1"); len(v.Approvals) != 2 {
		t.Fatalf("approvals = %+v", v.Approvals)
	}

	// Exempted: planned at once; the rule passes a plan that destroys nothing.
	out = h.mustSSH("helper-bot", "launch", "data", "--wait")
	if !strings.Contains(out, "run 2: succeeded") {
		t.Fatalf("exempted agent's apply:\n%s", out)
	}
}

// An apply whose submission asks for approval waits for a person with its
// saved plan even when no rule covers it.
func TestRequireApprovalWithoutRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	out := h.mustSSH("alice", "launch", "network", "--var", "region=x", "--require-approval", "--wait")
	if !strings.Contains(out, "awaiting_approval") || !strings.Contains(out, "-out=") {
		t.Fatalf("not planned and held:\n%s", out)
	}
	p := h.show("bob", "1").Proposal
	h.mustSSH("bob", "approve", "1", "--digest", p.Digest)
	h.waitStatus("1", store.StatusSucceeded)
}

// A plan_gate policy that does not compile holds (fails closed) with the
// compile error shown; one that denies refuses.
func TestPlanGatePolicies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.rego")
	deny := filepath.Join(dir, "deny.rego")
	os.WriteFile(broken, []byte("package switchtender.plan\n\ndeny contains msg if {\n  msg := \n}\n"), 0o644)
	os.WriteFile(deny, []byte(`package switchtender.plan

deny contains msg if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
	"create" in rc.change.actions
	msg := sprintf("%s: creating terraform_data is not allowed here", [rc.address])
}
`), 0o644)
	h := newHarness(t, networkTemplate+dataTemplates+`
rule "broken" {
  templates = ["network"]
  plan_gate = "`+broken+`"
}
rule "deny" {
  templates = ["data"]
  plan_gate = "`+deny+`"
}
`)
	out := h.mustSSH("alice", "launch", "network", "--var", "region=x", "--wait")
	if !strings.Contains(out, "awaiting_approval") {
		t.Fatalf("a broken policy did not hold:\n%s", out)
	}
	p := h.show("bob", "1").Proposal
	if len(p.Holds) == 0 || !strings.Contains(p.Holds[0].Reason, "broken.rego") {
		t.Fatalf("holds = %+v", p.Holds)
	}
	out, _, code := h.ssh("alice", "launch", "data", "--wait")
	if code == 0 || !strings.Contains(out, "run 2: refused") || !strings.Contains(out, "creating terraform_data is not allowed here") {
		t.Fatalf("deny policy: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(h.project, "infra/data/terraform.tfstate")); err == nil {
		t.Fatalf("a refused apply wrote state")
	}
}

// A dry run an approval rule covers is held before anything plans; a rule
// with exclude_dry_run exempts it once the configuration scan finds nothing
// (scan_test.go has what the scan finds), and a plan-content rule alone
// holds no dry run.
func TestDryRunHeldByApprovalRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate+dataTemplates+`
rule "approve-network" {
  templates        = ["network"]
  require_approval = true
}
rule "approve-data" {
  templates        = ["data"]
  require_approval = true
  exclude_dry_run  = true
}
rule "destroys" {
  templates   = ["data-free"]
  max_destroy = 0
}
`)
	out := h.mustSSH("alice", "launch", "network", "--dry-run", "--var", "region=x", "--wait")
	if !strings.Contains(out, "run 1: awaiting_approval") || strings.Contains(out, "$ tofu") {
		t.Fatalf("dry run under an approval rule:\n%s", out)
	}
	v := h.show("bob", "1")
	if v.Proposal.Stage != "request" || v.Proposal.Holds[0].Rule != "approve-network" {
		t.Fatalf("proposal = %+v", v.Proposal)
	}
	h.mustSSH("bob", "approve", "1", "--digest", v.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
	if log := h.mustSSH("bob", "log", "1"); !strings.Contains(log, `vpc = "vpc-x"`) {
		t.Fatalf("released dry run did not plan:\n%s", log)
	}

	out = h.mustSSH("alice", "launch", "data", "--dry-run", "--wait")
	if !strings.Contains(out, "succeeded") || !strings.Contains(out, "scan: read 1 module and 1 file") || !strings.Contains(out, "no finding") {
		t.Fatalf("exclude_dry_run exempts a plan the scan finds clean:\n%s", out)
	}
	out = h.mustSSH("alice", "launch", "data-free", "--dry-run", "--wait")
	if !strings.Contains(out, "succeeded") {
		t.Fatalf("a max_destroy rule held a dry run:\n%s", out)
	}
}

// OpenTofu compares less for a plan made from empty state, so the server
// checks the state's lineage and serial itself: a plan made before any
// state existed is refused once another apply created state.
func TestStalePlanFromEmptyState(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	p := h.show("bob", "1").Proposal
	if p.Lineage != "" || p.Serial != 0 {
		t.Fatalf("a plan from no state recorded lineage %q serial %d", p.Lineage, p.Serial)
	}
	h.tofuByHand("infra/data", "init", "-input=false")
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=2")
	if _, errOut, code := h.ssh("bob", "approve", "1", "--digest", p.Digest); code != 1 || !strings.Contains(errOut, "stale") {
		t.Fatalf("approving a plan made from no state after state appeared: exit %d %q", code, errOut)
	}
	h.waitStatus("1", store.StatusStale)
	if n := h.stateCount(); n != 2 {
		t.Fatalf("the stale plan changed the state: %d servers, want the other apply's 2", n)
	}
	if log := h.mustSSH("bob", "log", "1"); strings.Contains(log, "apply -input=false -no-color /") {
		t.Fatalf("the stale plan reached tofu apply:\n%s", log)
	}
}

// An AI proposal is planned first, and its apply waits for a person with
// the saved plan even when no rule covers it.
func TestAIProposalWaitsForAPerson(t *testing.T) {
	t.Parallel()
	h := newHarness(t, networkTemplate)
	out := h.mustSSH("alice", "launch", "network", "--var", "region=x", "--ai-proposal", "--wait")
	if !strings.Contains(out, "-out=") || !strings.Contains(out, "run 1: awaiting_approval") {
		t.Fatalf("AI proposal not planned and held:\n%s", out)
	}
	v := h.show("bob", "1")
	if v.Proposal.Stage != "plan" || v.Proposal.Holds[0].Rule != "ai_proposal" {
		t.Fatalf("proposal = %+v", v.Proposal)
	}
	h.mustSSH("bob", "approve", "1", "--digest", v.Proposal.Digest)
	h.waitStatus("1", store.StatusSucceeded)
}

// An exempted agent takes a person's path: no hold before planning, and a
// rule that holds its plan needs exactly one approval.
func TestExemptedAgentNeedsOneApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "destroys" {
  templates   = ["data"]
  max_destroy = 0
}
exemption "helper" {
  agents    = ["helper-bot"]
  templates = ["data"]
}
`)
	h.mustSSH("helper-bot", "launch", "data", "--wait")
	out := h.mustSSH("helper-bot", "launch", "data", "--var", "instances=1", "--wait")
	if !strings.Contains(out, "run 2: awaiting_approval") || !strings.Contains(out, "$ tofu plan") {
		t.Fatalf("exempted agent's destroying apply:\n%s", out)
	}
	v := h.show("bob", "2")
	if v.Proposal.Stage != "plan" {
		t.Fatalf("held at stage %q", v.Proposal.Stage)
	}
	h.mustSSH("bob", "approve", "2", "--digest", v.Proposal.Digest)
	h.waitStatus("2", store.StatusSucceeded)
	if v = h.show("bob", "2"); len(v.Approvals) != 1 {
		t.Fatalf("approvals = %+v", v.Approvals)
	}
}

// An approval survives a restart (DESIGN invariant 6): an approved apply
// still waiting in the queue when the server stops applies after the next
// start, exactly once; the run that was executing is interrupted, not re-run.
func TestApprovalSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, "  max_parallel = 1\n", dataTemplates+`
template "pause" {
  project = "infra"
  command = "infra/pause"
}
rule "everything" {
  templates        = ["data"]
  require_approval = true
}
`)
	h.mustSSH("alice", "launch", "data", "--wait")
	p := h.show("bob", "1").Proposal
	// The only slot is taken, so the approved apply waits in the queue.
	h.mustSSH("alice", "launch", "pause")
	h.waitStatus("2", store.StatusRunning)
	h.mustSSH("bob", "approve", "1", "--digest", p.Digest)
	if r, _ := h.db().GetRun("1"); r.Status != store.StatusQueued || r.Phase != store.PhaseApply {
		t.Fatalf("approved run 1 is %s in phase %s, want queued to apply", r.Status, r.Phase)
	}
	h.restart()
	h.waitStatus("1", store.StatusSucceeded)
	h.waitStatus("2", store.StatusInterrupted)
	if n := h.stateCount(); n != 3 {
		t.Fatalf("state holds %d servers, want the approved plan's 3", n)
	}
	r, _ := h.db().GetRun("1")
	applies := 0
	for _, st := range r.Steps {
		if st.Name == "apply" {
			applies++
		}
	}
	if applies != 1 || len(r.Approvals) != 1 || r.Approvals[0].Digest != p.Digest {
		t.Fatalf("run 1: %d applies, approvals %+v", applies, r.Approvals)
	}
}
