package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// planDigest is what a saved plan's digest reads: sha256 and 64 hex digits.
var planDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// dryPlanOf checks that `show ID --json` carries run id's saved plan as
// "plan" (and no "dry_plan") and returns it.
func dryPlanOf(t *testing.T, h *harness, id string) map[string]any {
	t.Helper()
	raw := h.showRaw("bob", id)
	if _, ok := raw["dry_plan"]; ok {
		t.Errorf("show %s --json carries the stored dry_plan beside plan", id)
	}
	plan, ok := raw["plan"].(map[string]any)
	if !ok {
		t.Fatalf("show %s --json has no plan object: %v", id, raw["plan"])
	}
	if d, _ := plan["digest"].(string); !planDigest.MatchString(d) {
		t.Errorf("run %s's plan digest %q is not sha256:HEX", id, plan["digest"])
	}
	for _, k := range []string{"add", "change", "destroy", "replace", "forget"} {
		if _, ok := plan[k].(float64); !ok {
			t.Errorf("run %s's plan has no number %s: %v", id, k, plan)
		}
	}
	return plan
}

// A dry run with real tofu keeps its plan's digest and counts and its
// change set: show --json says them as "plan" (runs --json too), show says
// the digest and counts, show --changes lists what it would create (the
// same after a restart, from the sealed change set), and the plan file
// itself is gone.
func TestADryRunKeepsItsPlanDigestAndChangeSet(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	v := h.launchWait("carol", "data", "--dry-run")
	if v.Run.Status != store.StatusSucceeded {
		t.Fatalf("the dry run %s: %s", v.Status, v.Message)
	}
	plan := dryPlanOf(t, h, v.ID)
	if plan["add"] != 3.0 || plan["change"] != 0.0 || plan["destroy"] != 0.0 || plan["replace"] != 0.0 || plan["forget"] != 0.0 {
		t.Errorf("the dry run's plan: %v, want 3 to add", plan)
	}
	digest := plan["digest"].(string)
	if v.Plan == nil || v.Plan.Digest != digest {
		t.Errorf("launch --wait --json's plan %+v differs from show's %s", v.Plan, digest)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(h.mustSSH("bob", "runs", "--json")), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v", err)
	}
	if p, _ := runs[0]["plan"].(map[string]any); p == nil || p["digest"] != digest {
		t.Errorf("runs --json's plan: %v", runs[0]["plan"])
	}
	text := h.mustSSH("bob", "show", v.ID)
	for _, want := range []string{"dry run's plan", "digest   " + digest, "plan:    3 to add, 0 to change, 0 to destroy", "show " + v.ID + " --changes"} {
		if !strings.Contains(text, want) {
			t.Errorf("show %s does not say %q:\n%s", v.ID, want, text)
		}
	}
	changes := h.mustSSH("bob", "show", v.ID, "--changes")
	if !strings.Contains(firstLine(changes), digest) || !strings.Contains(changes, "terraform_data.server[2]") {
		t.Errorf("show %s --changes:\n%s", v.ID, changes)
	}
	sameAddresses(t, "the dry run", changeSetOf(t, h, v.ID), &store.Proposal{Addresses: map[string][]string{
		"create": {"terraform_data.server[0]", "terraform_data.server[1]", "terraform_data.server[2]"}}})
	if _, err := os.Stat(filepath.Join(h.dir, "data", "runs", v.ID, runstep.PlanFileName)); err == nil {
		t.Error("the dry run's plan file outlived the run")
	}
	h.restart()
	if again := h.mustSSH("bob", "show", v.ID, "--changes"); again != changes {
		t.Errorf("after a restart show --changes says:\n%s\nwas:\n%s", again, changes)
	}
}

// A pull request's plan (launch --ref), scanned and planned in a private
// tree, keeps its digest and change set as any dry run does: the
// branch's new resource is in it.
func TestAPullRequestsDryRunKeepsItsPlanDigestAndChangeSet(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "clean")
	if v.Run.Status != store.StatusSucceeded || v.Commit == nil || v.Commit.Ref != "clean" {
		t.Fatalf("the pull request's plan %s: %s (commit %+v)", v.Status, v.Message, v.Commit)
	}
	plan := dryPlanOf(t, h, v.ID)
	if plan["add"] != 4.0 {
		t.Errorf("the pull request's plan: %v, want the checkout's 3 and the branch's 1 to add", plan)
	}
	changes := h.mustSSH("bob", "show", v.ID, "--changes")
	if !strings.Contains(firstLine(changes), plan["digest"].(string)) || !strings.Contains(changes, "terraform_data.extra") {
		t.Errorf("show %s --changes of the pull request's plan:\n%s", v.ID, changes)
	}
}

// A secret answer for a variable the configuration declares sensitive,
// and the value the plan derives from it, appear in no door that shows a
// dry run's plan: not its change set (text or JSON), not show --json, not
// runs --json; the change set says the sensitive value with fingerprints.
func TestADryRunsChangeSetHoldsNoSecret(t *testing.T) {
	t.Parallel()
	const canary = "dry-plan-canary-7c1e"
	h := newHarness(t, `
template "secret" {
  project = "infra"
  command = "infra/secret"
  survey "db_password" {
    type      = "string"
    sensitive = true
  }
}
`)
	out, errOut, code := h.sshStdin("alice", `{"db_password":"`+canary+`"}`, "launch", "secret", "--dry-run", "--answers", "-", "--wait")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	dryPlanOf(t, h, "1")
	sum := sha256.Sum256([]byte(canary))
	derived := hex.EncodeToString(sum[:])
	changes := h.mustSSH("bob", "show", "1", "--changes")
	if !strings.Contains(changes, "terraform_data.db") || !strings.Contains(changes, "fp:") {
		t.Errorf("show 1 --changes names no sensitive change of terraform_data.db:\n%s", changes)
	}
	for name, doc := range map[string]string{
		"show --changes":        changes,
		"show --changes --json": h.mustSSH("bob", "show", "1", "--changes", "--json"),
		"show --json":           h.mustSSH("bob", "show", "1", "--json"),
		"show":                  h.mustSSH("bob", "show", "1"),
		"runs --json":           h.mustSSH("bob", "runs", "--json"),
	} {
		if strings.Contains(doc, canary) || strings.Contains(doc, derived) {
			t.Errorf("%s shows the secret or the value derived from it:\n%s", name, doc)
		}
	}
}
