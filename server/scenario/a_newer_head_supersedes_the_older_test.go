package scenario

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// TestTwoQuickPushesPlanOnlyTheNewerHead guards supersession: two commits
// pushed in quick succession plan once, for the newer head, and the older
// heads' statuses say they were superseded — the pushed-over one included,
// though Gitea may build both sync deliveries with the newer head.
func TestTwoQuickPushesPlanOnlyTheNewerHead(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	n, first := f.openPR("grow", map[string]string{"network/a.tf": testkit.PlainResource})
	f.waitStatus(first, "switchtender/plan/network", "success")
	middle := f.g.PushToBranch(f.alice, f.repo, "grow", map[string]string{"network/b.tf": strings.ReplaceAll(testkit.PlainResource, `"x"`, `"b"`)}, "b")
	newest := f.g.PushToBranch(f.alice, f.repo, "grow", map[string]string{"network/c.tf": strings.ReplaceAll(testkit.PlainResource, `"x"`, `"c"`)}, "c")
	f.waitStatus(newest, "switchtender/plan/network", "success")
	for _, old := range []string{first, middle} {
		if desc := f.waitStatus(old, "switchtender/plan/network", "error"); !strings.Contains(desc, "superseded") {
			t.Errorf("head %s's status says %q, not superseded", old, desc)
		}
	}
	var newer int
	for _, r := range f.prRuns(n) {
		switch r.PullRequest.HeadSHA {
		case newest:
			newer++
		case middle:
			if r.Status != store.StatusCancelled && r.PullRequest.SupersededBy == "" {
				t.Errorf("run %s of the pushed-over head is %s and not superseded", r.ID, r.Status)
			}
		}
	}
	if newer != 1 {
		t.Fatalf("%d plans of the newest head, want one:%s", newer, f.runsSummary())
	}
	f.waitComment(n, newest[:7])
}
