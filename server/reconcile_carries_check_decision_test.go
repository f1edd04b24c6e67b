package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// denyDeletes is a plan_gate that refuses every plan that deletes.
const denyDeletes = `package switchtender.plan

deny contains msg if {
	some addr in input.summary.by_action.delete
	msg := sprintf("the policy denies deleting %s", [addr])
}
`

// cannotRun is a plan_gate that errors on every evaluation.
const cannotRun = `package switchtender.plan

deny contains msg if { msg := sprintf("%d", [to_number("x")]) }
`

// policyRule is a rule block whose plan_gate is policies/NAME.rego.
func policyRule(name string) string {
	return "rule \"" + name + "\" {\n  templates = [\"data\"]\n  plan_gate = \"policies/" + name + ".rego\"\n}\n"
}

// writePolicy writes policies/NAME.rego beside the harness's configuration.
func (h *harness) writePolicy(name, src string) {
	h.t.Helper()
	dir := filepath.Join(h.dir, "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".rego"), []byte(src), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// reloadReplacing rewrites the configuration file with old replaced by
// new, then reloads the server with it.
func (h *harness) reloadReplacing(old, new string) {
	h.t.Helper()
	b, err := os.ReadFile(h.cfgPath)
	if err != nil || !strings.Contains(string(b), old) {
		h.t.Fatalf("the configuration lacks %q (%v)", old, err)
	}
	if err := os.WriteFile(h.cfgPath, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.reloadWith("")
}

// driftedDataWith is driftedData on a harness whose policies are written
// before it starts: 3 servers applied through Switchtender, 5 by hand, so a
// check's plan destroys 2.
func driftedDataWith(t *testing.T, policies map[string]string, extra string) *harness {
	t.Helper()
	h := writeHarness(t, "", dataTemplates+extra)
	for name, src := range policies {
		h.writePolicy(name, src)
	}
	h.start()
	h.mustSSH("alice", "launch", "data-free", "--wait")
	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	return h
}

// refusedReconcile proposes a reconcile of check and fails the test unless
// it is refused with every want in its sentence, proposing no run and
// leaving the 5 servers as they are.
func (h *harness) refusedReconcile(check string, wants ...string) {
	h.t.Helper()
	out, errOut, code := h.ssh("carol", "reconcile", check)
	if code == 0 {
		h.t.Fatalf("reconcile %s was accepted:\n%s", check, out)
	}
	mustContain(h.t, "the refusal", errOut, wants...)
	runs, _ := h.srv.db.ListRuns()
	for _, r := range runs {
		if r.ReconcileOf == check {
			h.t.Errorf("a refused reconcile left run %s (%s)", r.ID, r.Status)
		}
	}
	if n := h.stateCount(); n != 5 {
		h.t.Errorf("the state holds %d servers after a refused reconcile, want the 5 left by hand", n)
	}
}

// A check's plan that a plan_gate denies cannot be applied through a
// reconcile, even once the policy is gone: the check's refusal is the
// reconcile's floor. It once was decided again without the plan's
// rendering, the policy "could not run", the refusal became a hold, and one
// approver destroyed the protected resources.
func TestReconcileOfACheckPlanAPolicyDeniedIsRefused(t *testing.T) {
	t.Parallel()
	h := driftedDataWith(t, map[string]string{"protect": denyDeletes}, policyRule("protect"))
	v := h.check("2")
	if !strings.Contains(v.Reconcile, "cannot be proposed: the rules refuse this plan") || len(v.Check.Plan.Refusals) == 0 {
		t.Fatalf("the check's note %q, refusals %+v", v.Reconcile, v.Check.Plan.Refusals)
	}
	h.refusedReconcile("2", "the policy denies deleting terraform_data.server[3]", "rule protect", "Nothing was proposed")
	h.reloadReplacing(policyRule("protect"), "")
	h.refusedReconcile("2", "the policy denies deleting terraform_data.server[3]", "rule protect")
}

// A plan_gate that cannot run refuses a reconcile rather than holding it,
// whether it failed at the check or only at the reconcile.
func TestReconcileIsRefusedByAPolicyThatCannotRun(t *testing.T) {
	t.Parallel()
	h := driftedDataWith(t, map[string]string{"broken": cannotRun}, policyRule("broken"))
	v := h.check("2")
	if len(v.Check.Plan.Refusals) == 0 || !strings.Contains(v.Reconcile, "cannot be proposed") {
		t.Fatalf("a check whose policy cannot run records no refusal: %q %+v", v.Reconcile, v.Check.Plan)
	}
	h.refusedReconcile("2", "plan_gate failed", "rule broken", "refuses the reconcile")

	// A check the rules let through, then a reload to a policy that cannot run.
	h.reloadReplacing(policyRule("broken"), "")
	v = h.check("3")
	if len(v.Check.Plan.Refusals) != 0 || len(v.Check.Plan.Holds) != 0 {
		t.Fatalf("check 3 under no rules: %+v", v.Check.Plan)
	}
	h.reloadWith(policyRule("broken"))
	h.refusedReconcile("3", "plan_gate failed", "rule broken")
}

// A reconcile is decided on the plan its check kept, by the rules now: a
// policy added after the check denies it from the check's sealed rendering.
func TestReconcileIsDecidedOnTheCheckPlanRendering(t *testing.T) {
	t.Parallel()
	h := driftedDataWith(t, map[string]string{"protect": denyDeletes}, "")
	h.check("2")
	if _, err := h.srv.db.GetBlob(blobDriftRendering, "2"); err != nil {
		t.Fatalf("the check kept no rendering: %v", err)
	}
	h.reloadWith(policyRule("protect"))
	h.refusedReconcile("2", "the policy denies deleting terraform_data.server[4]", "rule protect")
	// A check that kept its plan but no rendering (kept by an older
	// version) cannot be reconciled: nothing would weigh its plan.
	h.reloadReplacing(policyRule("protect"), "")
	if err := h.srv.db.DeleteBlob(blobDriftRendering, "2"); err != nil {
		t.Fatal(err)
	}
	h.refusedReconcile("2", "kept no rendering of its plan", "run the check again")
}

// fewDestroys holds an apply that destroys for alice alone.
const fewDestroys = `
rule "few-destroys" {
  templates   = ["data"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["alice"]
}
`

// The reconcile of a check's plan that a rule held for alice is held for
// alice too: bob's approval releases only the reconcile hold, and the plan
// applies once alice releases it. It once was held by the reconcile hold
// alone, and bob released the destroy reserved for alice.
func TestReconcileIsHeldForTheCheckPlanApprovers(t *testing.T) {
	t.Parallel()
	h := driftedDataWith(t, nil, fewDestroys)
	v := h.check("2")
	if text := h.mustSSH("alice", "show", "2"); !strings.Contains(text, "a reconcile would be held by rule few-destroys too") {
		t.Fatalf("show 2 does not say the rule holds its reconcile:\n%s", text)
	}
	r := h.heldReconcile("2", "few-destroys", []string{"alice"})
	h.mustSSH("bob", "approve", r.ID, "--digest", v.Check.Plan.Digest)
	if now := h.show("bob", r.ID); now.Status != StatusAwaitingApproval || !strings.Contains(now.Message, "still held by rule few-destroys (alice)") {
		t.Fatalf("after bob's approval the reconcile is %s: %s", now.Status, now.Message)
	}
	if _, errOut, code := h.ssh("dave", "approve", r.ID, "--digest", v.Check.Plan.Digest); code == 0 || !strings.Contains(errOut, "not among the approvers") {
		t.Errorf("dave's approval: %d %s", code, errOut)
	}
	if n := h.stateCount(); n != 5 {
		t.Fatalf("the state holds %d servers before alice released the reconcile", n)
	}
	h.mustSSH("alice", "approve", r.ID, "--digest", v.Check.Plan.Digest)
	h.waitStatus(r.ID, StatusSucceeded)
	if n := h.stateCount(); n != 3 {
		t.Errorf("the state holds %d servers after the reconcile, want 3", n)
	}
}

// The check's holds are the floor: a rule removed, or widened to more
// approvers, after the check still holds its reconcile for the approvers the
// check's plan was held for; a rule whose approvers now have no one in
// common with the check's is refused rather than released by either.
func TestReconcileKeepsTheCheckPlanHoldsAfterAReload(t *testing.T) {
	t.Parallel()
	h := driftedDataWith(t, nil, fewDestroys)
	h.check("2")
	h.reloadReplacing(fewDestroys, "")
	h.heldReconcile("2", "few-destroys", []string{"alice"})

	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	h.reloadWith(fewDestroys)
	h.check("4")
	h.reloadReplacing(`approvers   = ["alice"]`, `approvers   = ["alice", "bob"]`)
	h.heldReconcile("4", "few-destroys", []string{"alice"})

	h.tofuByHand("infra/data", "apply", "-auto-approve", "-input=false", "-var", "instances=5")
	h.reloadReplacing(`approvers   = ["alice", "bob"]`, `approvers   = ["alice"]`)
	h.check("6")
	h.reloadReplacing(`approvers   = ["alice"]`, `approvers   = ["bob"]`)
	out, errOut, code := h.ssh("carol", "reconcile", "6")
	if code == 0 {
		t.Fatalf("a reconcile whose rule's approvers changed to no one in common was accepted:\n%s", out)
	}
	mustContain(t, "the refusal", errOut, "rule few-destroys held the check's plan for alice and holds the reconcile for bob")
}

// heldReconcile proposes, as carol, the reconcile of check and checks it
// is held by the reconcile hold and by rule for exactly approvers.
func (h *harness) heldReconcile(check, rule string, approvers []string) runView {
	h.t.Helper()
	var r runView
	out := h.mustSSH("carol", "reconcile", check, "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Proposal == nil {
		h.t.Fatalf("reconcile %s: %v\n%s", check, err, out)
	}
	found := false
	for _, hd := range r.Proposal.Holds {
		if hd.Rule == rule {
			found = true
			if strings.Join(hd.Approvers, ",") != strings.Join(approvers, ",") {
				h.t.Errorf("reconcile %s: rule %s holds it for %v, want %v", r.ID, rule, hd.Approvers, approvers)
			}
		}
	}
	if !found || r.Proposal.Holds[0].Rule != reconcileHold {
		h.t.Errorf("reconcile %s holds %+v, want the reconcile hold and rule %s", r.ID, r.Proposal.Holds, rule)
	}
	return r
}

// On a pool, a check's plan is kept with its rendering as on the control
// node: a policy added after the check refuses its reconcile, and a check
// the policy denies records the refusal, whose reconcile is refused too.
func TestRelayReconcileIsDecidedOnTheCheckPlanRendering(t *testing.T) {
	t.Parallel()
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
	if check.Check == nil || !check.Check.Kept || check.PlannedBy != "w1" {
		t.Fatalf("the check: %s %s", check.Status, check.Message)
	}
	if _, err := h.srv.db.GetBlob(blobDriftRendering, check.ID); err != nil {
		t.Fatalf("the pool's check kept no rendering: %v", err)
	}
	h.writePolicy("protect", denyDeletes)
	h.reloadWith(strings.Replace(policyRule("protect"), `["data"]`, `["rdata"]`, 1))
	refused := func(id string) {
		t.Helper()
		out, errOut, code := h.ssh("carol", "reconcile", id)
		if code == 0 {
			t.Fatalf("reconcile %s was accepted:\n%s", id, out)
		}
		mustContain(t, "the refusal", errOut, "the policy denies deleting terraform_data.server[2]", "rule protect")
	}
	refused(check.ID)
	again := h.launchWait("alice", "rdata", "--check", "--var", "instances=2")
	if again.Check == nil || len(again.Check.Plan.Refusals) == 0 {
		t.Fatalf("the pool's check under the policy records no refusal: %s %s", again.Status, again.Message)
	}
	refused(again.ID)
}
