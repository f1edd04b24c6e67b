package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// TestAPullRequestOnGiteaIsPlannedAndItsDigestShownOnIt guards the forge's
// first promise: a pull request that adds a terraform_data gets, on its
// head, switchtender/plan/network = success and one comment whose digest
// is the one `show N --json` gives as plan.digest, the run requested by
// the pull request's author as a forge account.
func TestAPullRequestOnGiteaIsPlannedAndItsDigestShownOnIt(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	n, head := f.openPR("add", map[string]string{"network/extra.tf": testkit.PlainResource})
	f.waitStatus(head, "switchtender/plan/network", "success")
	runs := f.prRuns(n)
	if len(runs) != 1 {
		t.Fatalf("pull request #%d has %d runs, want one plan:%s", n, len(runs), f.runsSummary())
	}
	v := f.showJSON(runs[0].ID)
	plan, _ := v["plan"].(map[string]any)
	digest, _ := plan["digest"].(string)
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("show --json plan = %v, want a digest", v["plan"])
	}
	body := f.waitComment(n, digest)
	if !strings.Contains(body, "2 to add") {
		t.Errorf("the comment does not count the plan's two creates (the module's and the pull request's):\n%s", body)
	}
	if v["requester"] != "alice" || v["requester_kind"] != "forge" {
		t.Errorf("requester = %v (%v), want alice as a forge account", v["requester"], v["requester_kind"])
	}
	pr, _ := v["pull_request"].(map[string]any)
	if pr["head_sha"] != head || pr["number"] != float64(n) || pr["repository"] != f.repo {
		t.Errorf("pull_request = %v, want %s#%d at %s", pr, f.repo, n, head)
	}
}

// TestAPullRequestWhoseModuleRunsAProgramIsRefusedBeforeAnyTofu guards the
// scan's promise on the forge: a pull request that changes only a local
// module the template calls, adding data "external", is planned for that
// template (the module is part of what it runs), and refused: status
// failure, the comment naming the address and file:line, no init or plan
// ever started. A pull request that changes nothing a template reads
// gets no run and no status.
func TestAPullRequestWhoseModuleRunsAProgramIsRefusedBeforeAnyTofu(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	external := "data \"external\" \"lookup\" {\n  program = [\"sh\", \"-c\", \"echo {}\"]\n}\n"
	quiet, quietHead := f.openPR("docs", map[string]string{"unrelated/README.md": "more words\n"})
	n, head := f.openPR("evil", map[string]string{"modules/vpc/lookup.tf": external})
	desc := f.waitStatus(head, "switchtender/plan/network", "failure")
	body := f.waitComment(n, "module.vpc.data.external.lookup", "modules/vpc/lookup.tf:1")
	runs := f.prRuns(n)
	if len(runs) != 1 {
		t.Fatalf("pull request #%d has %d runs, want one:%s", n, len(runs), f.runsSummary())
	}
	for _, s := range runs[0].Steps {
		if s.Name == "init" || s.Name == "plan" {
			t.Fatalf("a refused pull request's plan ran tofu %s (steps %+v)\n%s", s.Name, runs[0].Steps, body)
		}
	}
	if !strings.Contains(strings.ToLower(desc), "refused") {
		t.Errorf("the failure status says %q, not that the plan was refused", desc)
	}
	if got := f.prRuns(quiet); len(got) != 0 {
		t.Errorf("a pull request that changes no template's configuration got runs:%s", f.runsSummary())
	}
	if st := f.g.ListStatuses(f.repo, quietHead); len(st) != 0 {
		t.Errorf("a pull request that changes no template's configuration got statuses %+v", st)
	}
}
