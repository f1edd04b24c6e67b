package scenario

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// mergeAndHold merges pull request n as Gitea's admin and waits for the
// one apply the merge proposes to be held; it returns the merge commit
// and the apply.
func (f *forgeHarness) mergeAndHold(n int) (string, store.Run) {
	f.t.Helper()
	merge := f.g.MergePR(f.g.Admin, f.repo, n, "merge")
	var apply store.Run
	waitFor(f.t, "the merge's apply to be held", 3*time.Minute, func() bool {
		for _, r := range f.prRuns(n) {
			if r.Kind == store.KindApply && r.Status == store.StatusAwaitingApproval && r.Proposal != nil && r.Proposal.Stage == store.StagePlan {
				apply = r
				return true
			}
		}
		return false
	})
	return merge, apply
}

// TestAMergeProposesOneApplyThatAnApproverReleasesOverSSH guards the
// merge: the checkout moves to the merge commit, exactly one apply is held
// with its saved plan's digest shown on the pull request and a pending
// switchtender/apply status on the merge commit; bob releases it over SSH
// by that digest, the status turns success and the comment says bob
// approved. Alice, who wrote the pull request and holds the approve role,
// may not approve it: once, the merger's and the author's namesakes could
// approve a merge's apply with allow_self_approval off. The merge delivery
// sent again proposes nothing more.
func TestAMergeProposesOneApplyThatAnApproverReleasesOverSSH(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	n, head := f.openPR("add", map[string]string{"network/extra.tf": testkit.PlainResource})
	f.waitStatus(head, "switchtender/plan/network", "success")
	merge, apply := f.mergeAndHold(n)
	if c, err := vcs.Head(t.Context(), f.projectPath()); err != nil || c.SHA != merge {
		t.Fatalf("the checkout is at %v (%v), want the merge commit %s", c, err, merge)
	}
	digest := apply.Proposal.Digest
	waitFor(t, "the held apply's pending status to say how to approve", time.Minute, func() bool {
		for _, s := range f.g.ListStatuses(f.repo, merge) {
			if s.Context == "switchtender/apply/network" {
				return s.State == "pending" && strings.Contains(s.Description, "approve")
			}
		}
		return false
	})
	f.waitComment(n, digest, "approve "+apply.ID)
	if apply.Requester != "root" || apply.RequesterKind != store.RequesterForge {
		t.Errorf("the apply is requested by %s (%s), want root, who merged, as a forge account", apply.Requester, apply.RequesterKind)
	}
	if !apply.PullRequest.Compared && apply.PullRequest.ShownRun == "" {
		t.Errorf("the apply names no plan shown on the pull request: %+v", apply.PullRequest)
	}
	merged := f.relay.waitKept(t, "the merge delivery", func(k keptDelivery) bool {
		return k.Header.Get("X-Gitea-Event-Type") == "pull_request" && strings.Contains(string(k.Body), `"merged": true`)
	})
	f.relay.send(merged.Header, merged.Body)
	if _, errOut, code := f.ssh("alice", "approve", apply.ID, "--digest", digest); code == 0 || !strings.Contains(errOut, "cannot approve") {
		t.Fatalf("alice, who wrote the pull request, approved its apply (exit %d): %s", code, errOut)
	}
	f.mustSSH("bob", "approve", apply.ID, "--digest", digest)
	f.waitStatus(merge, "switchtender/apply/network", "success")
	f.waitComment(n, "bob")
	var applies int
	for _, r := range f.prRuns(n) {
		if r.Kind == store.KindApply {
			applies++
		}
	}
	if applies != 1 {
		t.Fatalf("%d applies for one merge, want one:%s", applies, f.runsSummary())
	}
}

// TestASecondMergeMakesTheHeldApplyStaleOnBothPullRequests guards the
// checkout's move: a second pull request merged while the first's apply
// is held moves the checkout (no run executes in it), makes the held
// apply stale — said on the first pull request — and proposes the
// second's apply, which says how it differs from the plan shown on its
// pull request: it carries the first pull request's resource too.
func TestASecondMergeMakesTheHeldApplyStaleOnBothPullRequests(t *testing.T) {
	t.Parallel()
	f := newForgeHarness(t)
	one, oneHead := f.openPR("one", map[string]string{"network/one.tf": strings.ReplaceAll(testkit.PlainResource, `"x"`, `"one"`)})
	two, twoHead := f.openPR("two", map[string]string{"network/two.tf": strings.ReplaceAll(testkit.PlainResource, `"x"`, `"two"`)})
	f.waitStatus(oneHead, "switchtender/plan/network", "success")
	f.waitStatus(twoHead, "switchtender/plan/network", "success")
	firstMerge, first := f.mergeAndHold(one)
	_, second := f.mergeAndHold(two)
	f.harness.waitStatus(first.ID, store.StatusStale)
	if desc := f.waitStatus(firstMerge, "switchtender/apply/network", "failure"); !strings.Contains(desc, "stale") {
		t.Errorf("the stale apply's status says %q", desc)
	}
	f.waitComment(one, "stale", "pull request "+strconv.Itoa(two))
	var diffs []string
	waitFor(t, "the second apply's comparison with the plan shown", time.Minute, func() bool {
		r, err := f.db().GetRun(second.ID)
		diffs = r.PullRequest.Differences
		return err == nil && r.PullRequest.Compared
	})
	if len(diffs) != 1 || !strings.Contains(diffs[0], "terraform_data.one") {
		t.Fatalf("the second apply's differences from its pull request's plan = %q, want terraform_data.one alone", diffs)
	}
	f.waitComment(two, "terraform_data.one", second.Proposal.Digest)
}
