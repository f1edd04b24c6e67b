package testkit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// giteaTestSecret is the webhook secret of these tests, named in
// forge/testdata/deliveries/gitea-real/README.md.
const giteaTestSecret = "switchtender-gitea-test-secret"

// recordEnv names the directory the tests save the deliveries they get
// into (forge/testdata/deliveries/gitea-real to refresh those), when set.
const recordEnv = "SWITCHTENDER_RECORD_GITEA_DELIVERIES"

// giteaPR is a Gitea with a repository whose webhook posts pull request,
// sync and comment deliveries to rec, and a pull request alice (a
// collaborator with write access) opened from change into main.
type giteaPR struct {
	g     *Gitea
	rec   *GiteaDeliveries
	alice *GiteaUser
	repo  string
	head  string // the pull request's head commit
	n     int
}

func openGiteaPR(t *testing.T) giteaPR {
	t.Helper()
	g := StartGitea(t)
	rec := RecordGiteaDeliveries(t)
	repo := g.CreateRepo(g.Admin.Name, "infra")
	alice := g.CreateUser("alice")
	g.AddCollaborator(repo, alice.Name, "write")
	g.AddWebhook(repo, rec.URL+"/webhooks/gitea", giteaTestSecret, "pull_request_only", "pull_request_sync", "pull_request_comment")
	head := g.CreateBranchAndPush(alice, repo, "main", "change", map[string]string{"main.tf": PlainResource}, "Add a resource")
	n := g.OpenPR(alice, repo, "change", "main", "Add a resource")
	return giteaPR{g, rec, alice, repo, head, n}
}

// record saves d as name.json (the body, byte for byte) and
// name.headers.json under $SWITCHTENDER_RECORD_GITEA_DELIVERIES, when set.
func record(t *testing.T, name string, d GiteaDelivery) {
	t.Helper()
	dir := os.Getenv(recordEnv)
	if dir == "" {
		return
	}
	h := map[string]string{}
	for k, v := range d.Header {
		h[k] = v[0]
	}
	hb, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, name+".json"), string(d.Body))
	WriteFile(t, filepath.Join(dir, name+".headers.json"), string(hb)+"\n")
}

func TestGiteaDeliversAPullRequestWebhookSignedWithItsSecret(t *testing.T) {
	t.Parallel()
	f := openGiteaPR(t)
	d := f.rec.WaitFor("the pull request's opening", GiteaPREvent("pull_request", "opened", f.n))
	record(t, "pull_request-opened", d)

	m := hmac.New(sha256.New, []byte(giteaTestSecret))
	m.Write(d.Body)
	sig := hex.EncodeToString(m.Sum(nil))
	if got := d.Header.Get("X-Gitea-Signature"); got != sig {
		t.Errorf("X-Gitea-Signature = %q, want the hex HMAC-SHA256 of the body %q", got, sig)
	}
	if d.SignedWith("another secret") {
		t.Error("the delivery verifies under a secret it was not signed with")
	}
	if got := d.Header.Get("X-Hub-Signature-256"); got != "sha256="+sig {
		t.Errorf("X-Hub-Signature-256 = %q, want sha256=%s", got, sig)
	}
	if d.Event() != "pull_request" || d.Header.Get("X-Gitea-Delivery") == "" {
		t.Errorf("X-Gitea-Event %q, X-Gitea-Delivery %q: want pull_request and a delivery id", d.Event(), d.Header.Get("X-Gitea-Delivery"))
	}
	p := d.Payload()
	if p.PullRequest == nil || p.PullRequest.Head.SHA != f.head || p.PullRequest.Head.Ref != "change" || p.PullRequest.Base.Ref != "main" {
		t.Errorf("the payload's pull request is %+v, want head change at %s into main", p.PullRequest, f.head)
	}
	if p.Sender.Login != f.alice.Name {
		t.Errorf("the sender is %q, want %s", p.Sender.Login, f.alice.Name)
	}
	mem, err := f.g.Memory()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Gitea's memory: %d MiB resident (%d MiB its own, the rest the binary's shared pages), %d MiB at its peak",
		mem.RSS>>20, mem.Anon>>20, mem.Peak>>20)
}

func TestGiteaDeliversASyncWhenAPullRequestsHeadIsPushed(t *testing.T) {
	t.Parallel()
	f := openGiteaPR(t)
	f.rec.WaitFor("the pull request's opening", GiteaPREvent("pull_request", "opened", f.n))
	second := f.g.PushToBranch(f.alice, f.repo, "change", map[string]string{"extra.tf": PlainResource}, "Add another")
	d := f.rec.WaitFor("the sync of the second push", func(d GiteaDelivery) bool {
		p := d.Payload()
		return GiteaPREvent("pull_request_sync", "synchronized", f.n)(d) && p.PullRequest != nil && p.PullRequest.Head.SHA == second
	})
	record(t, "pull_request_sync-synchronized", d)
	if !d.SignedWith(giteaTestSecret) || d.Event() != "pull_request" {
		t.Errorf("the sync delivery is %v; want X-Gitea-Event pull_request, signed with the hook's secret", d)
	}
	if p := d.Payload(); p.Before != f.head || p.After != second {
		t.Errorf("the sync says before %q after %q, want %s then %s", p.Before, p.After, f.head, second)
	}
}

func TestGiteaMergesAPullRequestAndDeliversItClosedAndMerged(t *testing.T) {
	t.Parallel()
	f := openGiteaPR(t)
	sha := f.g.MergePR(f.g.Admin, f.repo, f.n, "merge")
	d := f.rec.WaitFor("the merge", GiteaPREvent("pull_request", "closed", f.n))
	record(t, "pull_request-closed-merged", d)
	if p := d.Payload(); p.PullRequest == nil || !p.PullRequest.Merged || p.PullRequest.MergeCommitSHA != sha {
		t.Errorf("the closing delivery's pull request is %+v, want merged as %s", p.PullRequest, sha)
	}
	if head := f.g.BranchHead(f.repo, "main"); head != sha {
		t.Errorf("main is at %s after the merge, want the merge commit %s", head, sha)
	}

	squashHead := f.g.CreateBranchAndPush(f.alice, f.repo, "main", "squashed", map[string]string{"b.tf": PlainResource}, "Add b")
	n := f.g.OpenPR(f.alice, f.repo, "squashed", "main", "Add b")
	squash := f.g.MergePR(f.g.Admin, f.repo, n, "squash")
	if head := f.g.BranchHead(f.repo, "main"); head != squash || squash == squashHead {
		t.Errorf("main is at %s after the squash, want the squash commit %s (not the head %s)", head, squash, squashHead)
	}
}

func TestGiteaDeliversACommentOnAPullRequestAsAnIssueComment(t *testing.T) {
	t.Parallel()
	f := openGiteaPR(t)
	c := f.g.CommentOnPR(f.alice, f.repo, f.n, "switchtender plan")
	d := f.rec.WaitFor("the comment", func(d GiteaDelivery) bool {
		p := d.Payload()
		return d.EventType() == "pull_request_comment" && p.Action == "created" && p.Comment != nil && p.Comment.ID == c.ID
	})
	record(t, "issue_comment-pull_request_comment-created", d)
	p := d.Payload()
	if d.Event() != "issue_comment" || !p.IsPull || p.Issue == nil || p.Issue.Number != f.n || p.Comment.Body != "switchtender plan" {
		t.Errorf("the comment delivery is %v (is_pull %v, issue %+v); want issue_comment on pull request %d saying `switchtender plan`", d, p.IsPull, p.Issue, f.n)
	}
	if !slices.ContainsFunc(f.g.ListComments(f.repo, f.n), func(got GiteaComment) bool { return got.ID == c.ID && got.User.Login == f.alice.Name }) {
		t.Errorf("the pull request's comments lack alice's %d", c.ID)
	}
}

func TestGiteaListsTheStatusesSetOnACommitNewestFirst(t *testing.T) {
	t.Parallel()
	g := StartGitea(t)
	repo := g.CreateRepo(g.Admin.Name, "infra")
	head := g.BranchHead(repo, "main")
	g.SetStatus(g.Admin, repo, head, "pending", "switchtender/plan", "planning")
	g.SetStatus(g.Admin, repo, head, "success", "switchtender/plan", "no changes")
	ss := g.ListStatuses(repo, head)
	if len(ss) != 2 || ss[0].State != "success" || ss[1].State != "pending" || ss[0].Context != "switchtender/plan" || ss[0].Creator.Login != g.Admin.Name {
		t.Errorf("the statuses of %s are %+v, want success then pending under switchtender/plan by %s", head, ss, g.Admin.Name)
	}
}

func TestGiteaLeavesNoProcessWhenItsTestEnds(t *testing.T) {
	t.Parallel()
	var g *Gitea
	t.Run("gitea", func(t *testing.T) {
		g = StartGitea(t)
		repo := g.CreateRepo(g.Admin.Name, "infra")
		g.PushToBranch(g.Admin, repo, "main", map[string]string{"main.tf": PlainResource}, "Add a resource")
	})
	if g == nil {
		t.Skip("Gitea did not start")
	}
	if err := syscall.Kill(g.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("gitea web (pid %d) is still there after its test: %v", g.cmd.Process.Pid, err)
	}
	if left := processesIn(g.Dir); len(left) > 0 {
		t.Errorf("processes %v still work in %s", left, g.Dir)
	}
}
