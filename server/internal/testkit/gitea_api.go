package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GiteaPR is a pull request as Gitea's API returns it: the fields the
// tests read.
type GiteaPR struct {
	Number         int        `json:"number"`
	Title          string     `json:"title"`
	State          string     `json:"state"` // "open" or "closed"
	Merged         bool       `json:"merged"`
	MergeCommitSHA string     `json:"merge_commit_sha"` // 40 hex once merged
	Mergeable      bool       `json:"mergeable"`
	Head           GiteaPRRef `json:"head"`
	Base           GiteaPRRef `json:"base"`
	HTMLURL        string     `json:"html_url"`
}

// GiteaPRRef is a pull request's head or base: branch name and commit.
type GiteaPRRef struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

// GiteaComment is a comment on an issue or pull request.
type GiteaComment struct {
	ID      int64      `json:"id"`
	Body    string     `json:"body"`
	User    GiteaLogin `json:"user"`
	HTMLURL string     `json:"html_url"`
	Created time.Time  `json:"created_at"`
	Updated time.Time  `json:"updated_at"`
}

// GiteaLogin names an account in an API answer.
type GiteaLogin struct {
	Login string `json:"login"`
}

// GiteaStatus is a commit status: State is one of "pending", "success",
// "error", "failure", "warning" (Gitea's API calls the field "status").
type GiteaStatus struct {
	ID          int64      `json:"id"`
	State       string     `json:"status"`
	Context     string     `json:"context"`
	Description string     `json:"description"`
	TargetURL   string     `json:"target_url"`
	Creator     GiteaLogin `json:"creator"`
	Created     time.Time  `json:"created_at"`
}

// call makes one API request (path under /api/v1) as as (nil: no
// credentials; basic: with the password, else with the token) and returns
// the status and the body read.
func (g *Gitea) call(as *GiteaUser, basic bool, method, path string, in any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, fmt.Errorf("encoding the %s %s request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.URL+"/api/v1"+path, body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	switch {
	case as != nil && basic:
		req.SetBasicAuth(as.Name, as.Password)
	case as != nil:
		req.Header.Set("Authorization", "token "+as.Token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, b, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// api makes one API request as as (with its token) and decodes the JSON
// answer into out (nil: not decoded), failing the test unless the status
// is want.
func (g *Gitea) api(as *GiteaUser, method, path string, in, out any, want int) {
	g.t.Helper()
	g.expect(as, false, method, path, in, out, want)
}

func (g *Gitea) expect(as *GiteaUser, basic bool, method, path string, in, out any, want int) {
	g.t.Helper()
	code, b, err := g.call(as, basic, method, path, in)
	if err != nil {
		g.t.Fatalf("Gitea API: %v", err)
	}
	if code != want {
		g.t.Fatalf("Gitea API %s %s answered %d, want %d: %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			g.t.Fatalf("Gitea API %s %s: decoding the answer: %v\n%s", method, path, err, b)
		}
	}
}

// repoPath is /repos/{owner}/{name} of repo ("owner/name"), escaped.
func (g *Gitea) repoPath(repo string) string {
	g.t.Helper()
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		g.t.Fatalf("repository %q is not owner/name", repo)
	}
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name)
}

// CreateToken makes an API token for u with the given scopes (Gitea's
// names: "all", "write:repository", "read:issue", ...), authenticating
// with u's password, and returns it (40 hex).
func (g *Gitea) CreateToken(u *GiteaUser, scopes ...string) string {
	g.t.Helper()
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	in := map[string]any{"name": "test-" + randomHex(g.t, 4), "scopes": scopes}
	g.expect(u, true, http.MethodPost, "/users/"+url.PathEscape(u.Name)+"/tokens", in, &tok, http.StatusCreated)
	if tok.SHA1 == "" {
		g.t.Fatalf("Gitea made a token for %s and did not return it", u.Name)
	}
	return tok.SHA1
}

// CreateUser makes an account name (name@example.com, a random password,
// nothing to change at first login) and its token of scope "all".
func (g *Gitea) CreateUser(name string) *GiteaUser {
	g.t.Helper()
	u := &GiteaUser{Name: name, Email: name + "@example.com", Password: "pw-" + randomHex(g.t, 12)}
	in := map[string]any{"username": u.Name, "email": u.Email, "password": u.Password,
		"must_change_password": false, "send_notify": false}
	g.api(g.Admin, http.MethodPost, "/admin/users", in, nil, http.StatusCreated)
	u.Token = g.CreateToken(u, "all")
	return u
}

// CreateRepo makes the public repository owner/name (owner an account) with
// one commit on main, a README, and returns "owner/name".
func (g *Gitea) CreateRepo(owner, name string) string {
	g.t.Helper()
	in := map[string]any{"name": name, "auto_init": true, "default_branch": "main", "readme": "Default"}
	g.api(g.Admin, http.MethodPost, "/admin/users/"+url.PathEscape(owner)+"/repos", in, nil, http.StatusCreated)
	return owner + "/" + name
}

// AddCollaborator gives user permission ("read", "write" or "admin") on
// repo.
func (g *Gitea) AddCollaborator(repo, user, permission string) {
	g.t.Helper()
	g.api(g.Admin, http.MethodPut, g.repoPath(repo)+"/collaborators/"+url.PathEscape(user),
		map[string]string{"permission": permission}, nil, http.StatusNoContent)
}

// OpenPR opens a pull request of head into base in repo as as and returns
// its number.
func (g *Gitea) OpenPR(as *GiteaUser, repo, head, base, title string) int {
	g.t.Helper()
	var pr GiteaPR
	in := map[string]string{"head": head, "base": base, "title": title, "body": "Opened by a test."}
	g.api(as, http.MethodPost, g.repoPath(repo)+"/pulls", in, &pr, http.StatusCreated)
	return pr.Number
}

// PR returns pull request n of repo as the admin sees it.
func (g *Gitea) PR(repo string, n int) GiteaPR {
	g.t.Helper()
	var pr GiteaPR
	g.api(g.Admin, http.MethodGet, g.repoPath(repo)+"/pulls/"+strconv.Itoa(n), nil, &pr, http.StatusOK)
	return pr
}

// BranchHead returns the commit branch of repo points at (40 hex).
func (g *Gitea) BranchHead(repo, branch string) string {
	g.t.Helper()
	var b struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	g.api(g.Admin, http.MethodGet, g.repoPath(repo)+"/branches/"+url.PathEscape(branch), nil, &b, http.StatusOK)
	return b.Commit.ID
}

// SetPRState closes ("closed") or reopens ("open") pull request n as as.
func (g *Gitea) SetPRState(as *GiteaUser, repo string, n int, state string) {
	g.t.Helper()
	g.api(as, http.MethodPatch, g.repoPath(repo)+"/pulls/"+strconv.Itoa(n),
		map[string]string{"state": state}, nil, http.StatusCreated)
}

// MergePR merges pull request n as as, with style "merge" (a merge commit)
// or "squash", keeping the head branch. While Gitea is still checking
// whether the pull request can merge it answers "try again later"; MergePR
// retries for up to a minute, then waits until the pull request reads as
// merged and returns its merge commit (40 hex).
func (g *Gitea) MergePR(as *GiteaUser, repo string, n int, style string) string {
	g.t.Helper()
	if !slices.Contains([]string{"merge", "squash"}, style) {
		g.t.Fatalf("merge style %q: want merge or squash", style)
	}
	path := g.repoPath(repo) + "/pulls/" + strconv.Itoa(n) + "/merge"
	in := map[string]any{"do": style, "delete_branch_after_merge": false}
	deadline := time.Now().Add(time.Minute)
	for {
		code, b, err := g.call(as, false, http.MethodPost, path, in)
		if err != nil {
			g.t.Fatalf("Gitea API: %v", err)
		}
		if code == http.StatusOK {
			break
		}
		if code != http.StatusMethodNotAllowed || !strings.Contains(string(b), "try again later") || time.Now().After(deadline) {
			g.t.Fatalf("merging %s#%d (%s) answered %d: %s", repo, n, style, code, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var pr GiteaPR
	WaitFor(g.t, fmt.Sprintf("%s#%d to read as merged", repo, n), time.Minute, func() bool {
		pr = g.PR(repo, n)
		return pr.Merged && pr.MergeCommitSHA != ""
	})
	return pr.MergeCommitSHA
}

// CommentOnPR writes a comment on pull request n as as and returns it.
func (g *Gitea) CommentOnPR(as *GiteaUser, repo string, n int, body string) GiteaComment {
	g.t.Helper()
	var c GiteaComment
	g.api(as, http.MethodPost, g.repoPath(repo)+"/issues/"+strconv.Itoa(n)+"/comments",
		map[string]string{"body": body}, &c, http.StatusCreated)
	return c
}

// ListComments returns the comments on pull request n, oldest first.
func (g *Gitea) ListComments(repo string, n int) []GiteaComment {
	g.t.Helper()
	var cs []GiteaComment
	g.api(g.Admin, http.MethodGet, g.repoPath(repo)+"/issues/"+strconv.Itoa(n)+"/comments", nil, &cs, http.StatusOK)
	return cs
}

// SetStatus sets a commit status on sha as as: state "pending",
// "success", "error", "failure" or "warning", under context.
func (g *Gitea) SetStatus(as *GiteaUser, repo, sha, state, context, description string) {
	g.t.Helper()
	in := map[string]string{"state": state, "context": context, "description": description}
	g.api(as, http.MethodPost, g.repoPath(repo)+"/statuses/"+url.PathEscape(sha), in, nil, http.StatusCreated)
}

// ListStatuses returns every status set on sha (each setting is one
// entry, so a context set twice appears twice), newest first, at most 50.
// It asks for sort=leastindex, which Gitea orders by the status's index
// descending (models/git/commit_status.go); its default orders by the
// creation second, which leaves statuses set in one second unordered.
func (g *Gitea) ListStatuses(repo, sha string) []GiteaStatus {
	g.t.Helper()
	var ss []GiteaStatus
	g.api(g.Admin, http.MethodGet, g.repoPath(repo)+"/statuses/"+url.PathEscape(sha)+"?sort=leastindex&limit=50", nil, &ss, http.StatusOK)
	return ss
}

// AddWebhook adds an active webhook of type gitea to repo that posts JSON
// to target, signed with secret (X-Gitea-Signature: hex HMAC-SHA256 of the
// body), and returns its id. Events are the API's names (Gitea
// modules/webhook/type.go and routers/api/v1/utils/hook.go): for pull
// requests "pull_request_only" (opened, closed, reopened, edited),
// "pull_request_sync" (a push to the head), "pull_request_comment" (a
// comment on one, delivered as X-Gitea-Event: issue_comment); the bare
// "pull_request" turns on every pull request event (assign, label,
// milestone, comment, review, sync too), "push" pushes. None means push.
// Gitea's API lists no deliveries: record them at target
// (RecordGiteaDeliveries).
func (g *Gitea) AddWebhook(repo, target, secret string, events ...string) int64 {
	g.t.Helper()
	var hook struct {
		ID int64 `json:"id"`
	}
	in := map[string]any{
		"type":   "gitea",
		"config": map[string]string{"url": target, "content_type": "json", "secret": secret},
		"events": events,
		"active": true,
	}
	g.api(g.Admin, http.MethodPost, g.repoPath(repo)+"/hooks", in, &hook, http.StatusCreated)
	return hook.ID
}
