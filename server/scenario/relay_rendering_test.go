package scenario

// On a relay pool the rules decide on what the plan file does, not on the
// rendering a worker sends beside it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// Promise (docs/relay.md; which builds on the gate's
// "the gate measures what the plan destroys from that saved file, rendered
// with tofu show -json"): the rules decide on what the saved plan does, as
// for a local run. Once, the rules decided on the show -json bytes a worker
// sent beside its plan, so a plan destroying three instances with a rendering
// that changed nothing was passed with no approval and queued to apply.
func TestTheRulesDecideOnThePlanNotOnAWorkersRendering(t *testing.T) {
	t.Parallel()
	h, keys, _ := relayHarness(t, poolDataTemplate)
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	runTofuByHand(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	destroy, realJSON := planDataByHand(t, h, "instances=0")
	if !bytes.Contains(realJSON, []byte(`"delete"`)) {
		t.Fatalf("the hand-made plan destroys nothing:\n%s", realJSON)
	}
	raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	if welcome.Type != relay.MsgWelcome {
		t.Fatalf("hello: %+v", welcome)
	}
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rdata")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	harmless := []byte(`{"format_version":"1.2","terraform_version":"1.9.0","planned_values":{"root_module":{}},"resource_changes":[],"configuration":{"root_module":{}}}`)
	handOverPlan(raw, id, job.Token, destroy, harmless)
	settlePlanPhase(h, id, 15*time.Second)
	r, _ := h.db().GetRun(id)
	if r.Status == store.StatusRefused && strings.Contains(r.Message, "rendering of the saved plan is not the plan's") && r.Phase != store.PhaseApply {
		return // fixed: the control node counts the plan file's own changes and refuses a rendering that does not match
	}
	if r.Proposal == nil {
		t.Fatalf("no proposal: %s %s", r.Status, r.Message)
	}
	bobApproved := false
	for _, a := range r.Approvals {
		if a.By == "bob" {
			bobApproved = true
		}
	}
	if r.Phase == store.PhaseApply && !bobApproved {
		t.Errorf("a plan destroying 3 resources passed max_destroy = 0 without bob (proposal: %d to destroy, digest %s; approvals %+v): the control node decided on the worker's JSON, not on the plan it sealed; status %s",
			r.Proposal.Destroy, r.Proposal.Digest, r.Approvals, r.Status)
	}
	if r.Proposal.Destroy != 3 {
		t.Errorf("the proposal shows %d destroys; the sealed plan destroys 3", r.Proposal.Destroy)
	}
}

// Promise (the fix, relay_plan.go renderingIsThePlans: "the gate decides on
// what the plan does, not on what a worker says it does"). Once, the check
// compared only how many changes of each action the rendering and the plan
// counted, so a plan replacing server[0] passed a policy with the rendering
// of one replacing server[2].
func TestARenderingOfAnotherResourceIsRefused(t *testing.T) {
	t.Parallel()
	policy := filepath.Join(t.TempDir(), "primary.rego")
	if err := os.WriteFile(policy, []byte(primaryPolicy), 0o644); err != nil {
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
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	runTofuByHand(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, honest := planTargetByHand(t, h, "terraform_data.server[0]")
	_, js := planTargetByHand(t, h, "terraform_data.server[2]")
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := readWorker(raw)
	// With its own rendering the plan is stopped by the policy.
	id, job := leaseRun(t, h, raw, ch, "rdata13e")
	handOverPlan(raw, id, job.Token, plan, honest)
	settlePlanPhase(h, id, 15*time.Second)
	if r, _ := h.db().GetRun(id); r.Phase == store.PhaseApply || !strings.Contains(r.Message, "primary") {
		t.Fatalf("the policy did not stop the honest rendering: %s %s: %s", r.Status, r.Phase, r.Message)
	}
	id, job = leaseRun(t, h, raw, ch, "rdata13e")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	handOverPlan(raw, id, job.Token, plan, js)
	settlePlanPhase(h, id, 15*time.Second)
	r, _ := h.db().GetRun(id)
	t.Logf("%s %s: %s", r.Status, r.Phase, r.Message)
	if r.Phase == store.PhaseApply && r.Status == store.StatusRunning {
		t.Fatalf("a plan replacing terraform_data.server[0], which the plan_gate forbids, passed the rules on a rendering that replaces server[2] and is queued to apply (digest %s)", r.Proposal.Digest)
	}
}

// Promise (docs/relay.md: "the control node ... checks that the worker's show
// -json rendering names, per action, the very resource instances the plan
// file itself changes ... Attribute values a plan_gate reads come from the
// worker's rendering: that much of the gate trusts the worker"; relay_plan.go
// renderingIsThePlans: "the gate decides on what the plan does, not on what a
// worker says it does"). Once, every field but address and action still came
// from the worker's rendering unchecked, so a rendering that only changed
// "type" passed the README's by-type policy with a plan destroying
// terraform_data.server[2].
func TestARenderingCannotForgeTheResourceType(t *testing.T) {
	t.Parallel()
	r := handOverForgedType(t, "rdata13f", func(honest []byte) []byte {
		return forgeRendering(t, honest, map[string]any{"type": "null_resource"})
	})
	if r.Phase == store.PhaseApply && r.Status == store.StatusRunning {
		t.Fatalf("a plan destroying terraform_data.server[2], which the README's by-type plan_gate denies, passed on a rendering whose addresses and actions are the plan file's and whose \"type\" is forged; it is queued to apply (digest %s, %d to destroy)",
			r.Proposal.Digest, r.Proposal.Destroy)
	}
}

// Promise (74a5cac, gate/planfile.go RenderingNamesItsAddresses: "a rendering
// made elsewhere cannot keep the addresses and change what they are", so "a
// policy reading a change's type reads the plan's"). Once, a rendering with
// "type" and then "TYPE" showed the check the plan's type and the policy
// another, since encoding/json matched keys case-insensitively and the policy
// input read them exactly.
func TestARenderingsTypeInAnotherCaseIsRefused(t *testing.T) {
	t.Parallel()
	r := handOverForgedType(t, "rdata13g", func(honest []byte) []byte {
		return bytes.ReplaceAll(honest, []byte(`"type":"terraform_data"`), []byte(`"type":"null_resource","TYPE":"terraform_data"`))
	})
	if r.Phase == store.PhaseApply && r.Status == store.StatusRunning {
		t.Fatalf("a plan destroying terraform_data.server[2], which the README's by-type plan_gate denies, passed on a rendering whose changes say \"type\":\"null_resource\" then \"TYPE\":\"terraform_data\"; it is queued to apply (digest %s, %d to destroy)",
			r.Proposal.Digest, r.Proposal.Destroy)
	}
}

// primaryPolicy denies any plan that destroys or replaces
// terraform_data.server[0].
const primaryPolicy = `package switchtender.plan

deny contains msg if {
	some rc in input.plan.resource_changes
	rc.address == "terraform_data.server[0]"
	"delete" in rc.change.actions
	msg := "terraform_data.server[0] is the primary: it is never destroyed or replaced here"
}
`

// planTargetByHand makes a real saved plan of infra/data by hand that
// replaces only target, and its real show -json.
func planTargetByHand(t *testing.T, h *harness, target string) (plan, js []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.tfplan")
	runTofuByHand(t, h, "infra/data", "plan", "-input=false", "-var", "generation=2", "-target="+target, "-out="+path)
	js = runTofuByHand(t, h, "infra/data", "show", "-json", path)
	if i := strings.IndexByte(string(js), '{'); i > 0 {
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan, []byte(strings.TrimSpace(string(js)))
}

// byTypePolicy is the README's example policy ("This one limits
// destroys by resource type"), aimed at the only resource type a test can
// plan without a provider download.
const byTypePolicy = `package switchtender.plan

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

// forgeRendering rewrites every resource change of a show -json rendering
// with set (a field name -> its new value), leaving address and actions
// as the plan file has them.
func forgeRendering(t *testing.T, js []byte, set map[string]any) []byte {
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

// handOverForgedType runs the README's by-type plan_gate over a
// gated apply of template (infra/data, pool eu) whose real plan destroys
// terraform_data.server[2]: a raw worker hands the plan over with its
// honest rendering, which the policy must deny, then again with the
// rendering forge makes of it; it returns the second run as it settled.
func handOverForgedType(t *testing.T, template string, forge func(honest []byte) []byte) store.Run {
	t.Helper()
	policy := testkit.PolicyFile(t, byTypePolicy)
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
	runTofuByHand(t, h, "infra/data", "init", "-input=false")
	runTofuByHand(t, h, "infra/data", "apply", "-auto-approve", "-input=false")
	plan, honest := planDataByHand(t, h, "instances=2") // destroys terraform_data.server[2]
	raw, _ := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := readWorker(raw)

	id, job := leaseRun(t, h, raw, ch, template)
	handOverPlan(raw, id, job.Token, plan, honest)
	settlePlanPhase(h, id, 15*time.Second)
	if r, _ := h.db().GetRun(id); r.Phase == store.PhaseApply || !strings.Contains(r.Message, "destroys 1 terraform_data") {
		t.Fatalf("the policy did not stop the honest rendering: %s %s: %s", r.Status, r.Phase, r.Message)
	}

	forged := forge(honest)
	if bytes.Equal(forged, honest) {
		t.Fatalf("the forged rendering is the honest one: %.300s", honest)
	}
	id, job = leaseRun(t, h, raw, ch, template)
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	handOverPlan(raw, id, job.Token, plan, forged)
	settlePlanPhase(h, id, 15*time.Second)
	r, _ := h.db().GetRun(id)
	t.Logf("%s %s: %s", r.Status, r.Phase, r.Message)
	return r
}
