package scenario

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// A reload to a configuration whose plan_gate does not compile is refused
// while a run waits for approval, whether the configuration names another
// policy file or the policy file in force was edited in place: the old
// rules stay (a launch the deny policy refuses is still refused, not held),
// the waiting run keeps its status and holds, the operator log says why,
// and the audit trail records no reload. The break it guards: the reload
// took the policy that did not compile, and the deny became a hold one
// approver could release.
func TestReloadWithAPolicyThatDoesNotCompileKeepsTheRulesInForce(t *testing.T) {
	t.Parallel()
	deny := writePolicy(t, "deny.rego", denyDataPolicy)
	rules := `
rule "approve-network" {
  templates        = ["network"]
  require_approval = true
}
rule "deny" {
  templates = ["data"]
  plan_gate = "` + deny + `"
}
`
	h, logs := newLoggedHarness(t, "", networkTemplate+dataTemplates+rules)
	h.mustSSH("alice", "launch", "network", "--var", "region=x")
	h.waitStatus("1", store.StatusAwaitingApproval)
	before := h.show("bob", "1").Proposal.Holds

	good, _ := os.ReadFile(h.cfgPath)
	other := writePolicy(t, "other.rego", brokenPolicy)
	os.WriteFile(h.cfgPath, []byte(strings.Replace(string(good), deny, other, 1)), 0o600)
	h.mustRefuseReload("other.rego")
	os.WriteFile(h.cfgPath, good, 0o600)
	os.WriteFile(deny, []byte(brokenPolicy), 0o600) // the file in force, edited in place
	h.mustRefuseReload("deny.rego")

	out, _, code := h.ssh("alice", "launch", "data", "--wait")
	if code == 0 || !strings.Contains(out, "refused") || !strings.Contains(out, "creating terraform_data is not allowed here") {
		t.Fatalf("after the refused reloads, a launch the deny policy refuses: exit %d\n%s", code, out)
	}
	v := h.show("bob", "1")
	if v.Status != store.StatusAwaitingApproval || len(v.Proposal.Holds) != len(before) || v.Proposal.Holds[0].Rule != before[0].Rule {
		t.Fatalf("the waiting run is %s with holds %+v, was held by %+v", v.Status, v.Proposal.Holds, before)
	}
	if n := strings.Count(logs.String(), "reload refused: the configuration has errors serve refuses"); n != 2 {
		t.Errorf("%d reload refusals logged, want 2:\n%s", n, logs)
	}
	if out := h.mustSSH("bob", "audit"); strings.Contains(out, "configuration reloaded") {
		t.Errorf("a refused reload is in the audit trail:\n%s", out)
	}
}

// mustRefuseReload loads the harness's configuration file and fails the
// test unless Reload refuses it naming mention.
func (h *harness) mustRefuseReload(mention string) {
	h.t.Helper()
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		h.t.Fatalf("loading: %v", err)
	}
	err = h.srv.Reload(cfg)
	var refused *server.ReloadRefused
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), mention) || !strings.Contains(err.Error(), "does not compile") {
		h.t.Fatalf("reload naming %s: %v", mention, err)
	}
}
