package scenario

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// plansOf counts pull request n's plans of head.
func (f *forgeHarness) plansOf(n int, head string) int {
	var c int
	for _, r := range f.prRuns(n) {
		if r.Kind == store.KindPlan && r.PullRequest.HeadSHA == head {
			c++
		}
	}
	return c
}

// TestASwitchtenderPlanCommentPlansAgainOnlyFromSomeoneWhoMayPush guards
// the one comment command: `switchtender plan` from a collaborator who may
// push plans the head again, once; the same words from someone who may not
// push, and every delivery Switchtender's own comment edits cause, plan
// nothing.
func TestASwitchtenderPlanCommentPlansAgainOnlyFromSomeoneWhoMayPush(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	n, head := f.openPR("add", map[string]string{"network/extra.tf": testkit.PlainResource})
	f.waitStatus(head, "switchtender/plan/network", "success")
	eve := f.g.CreateUser("eve")
	f.g.CommentOnPR(eve, f.repo, n, "switchtender plan")
	f.relay.waitKept(t, "eve's comment", func(k keptDelivery) bool {
		return k.Header.Get("X-Gitea-Event-Type") == "pull_request_comment" && k.Code == http.StatusOK && contains(k.Body, `"eve"`)
	})
	f.g.CommentOnPR(f.alice, f.repo, n, "switchtender plan")
	waitFor(t, "alice's comment to plan the head again", 2*time.Minute, func() bool { return f.plansOf(n, head) == 2 })
	for _, r := range f.prRuns(n) {
		f.harness.waitStatus(r.ID, store.StatusSucceeded)
	}
	f.waitStatus(head, "switchtender/plan/network", "success")
	if got := f.plansOf(n, head); got != 2 {
		t.Fatalf("%d plans of the head after alice's and eve's comments, want two (the first and alice's):%s", got, f.runsSummary())
	}
	if cs := f.comments(n); len(cs) != 1 {
		t.Fatalf("%d comments by Switchtender, want one edited in place", len(cs))
	}
}

// TestAHeadNoDeliveryReachedIsPlannedByThePoll guards the healing poll: a
// pull request whose deliveries all failed to reach the node is planned
// once the node polls (at its start, and every poll_every after).
func TestAHeadNoDeliveryReachedIsPlannedByThePoll(t *testing.T) {
	t.Parallel()
	f := writeForgeHarness(t)
	n, head := f.openPR("add", map[string]string{"network/extra.tf": testkit.PlainResource})
	f.relay.waitKept(t, "the opened delivery, lost", func(k keptDelivery) bool {
		return k.Header.Get("X-Gitea-Event-Type") == "pull_request" && k.Code != http.StatusOK
	})
	f.startNode()
	f.waitStatus(head, "switchtender/plan/network", "success")
	if got := f.plansOf(n, head); got != 1 {
		t.Fatalf("%d plans of a head the poll found, want one:%s", got, f.runsSummary())
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
