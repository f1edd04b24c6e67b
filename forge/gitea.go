package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"code.gitea.io/sdk/gitea"
)

// giteaPage is the page size of Gitea lists (Gitea's default
// MAX_RESPONSE_ITEMS).
const giteaPage = 50

// giteaClient is the Client of a Gitea (or Forgejo), through
// code.gitea.io/sdk/gitea (API v1, the server's /api/swagger).
type giteaClient struct {
	baseURL string
	token   string
	hc      *http.Client
	self    selfLogin
}

// NewGitea returns the Client of the Gitea at baseURL (such as
// "https://gitea.example.com"; the library adds /api/v1). The token (an
// access token) is sent as "Authorization: token". hc nil means a client
// with a 30-second timeout. The library is told not to ask the server its
// version, so nothing is sent until a method is called; it then assumes a
// Gitea of 1.14 or later.
func NewGitea(baseURL, token string, hc *http.Client) (Client, error) {
	if baseURL == "" {
		return nil, errors.New(`gitea: the base URL is empty: write the Gitea's address, such as "https://gitea.example.com"`)
	}
	hc, err := checkClientArgs(Gitea, baseURL, token, hc)
	if err != nil {
		return nil, err
	}
	g := &giteaClient{baseURL: baseURL, token: token, hc: hc}
	if _, err := g.api(context.Background()); err != nil {
		return nil, fmt.Errorf("gitea: base URL %q: %w", baseURL, err)
	}
	return g, nil
}

// api returns a library client for one call under ctx: the library keeps
// one context per client, so each call has its own (it costs no request).
func (g *giteaClient) api(ctx context.Context) (*gitea.Client, error) {
	return gitea.NewClient(g.baseURL,
		gitea.SetToken(g.token),
		gitea.SetHTTPClient(g.hc),
		gitea.SetGiteaVersion(""),
		gitea.SetContext(ctx),
	)
}

// call runs do with a library client for ctx, and wraps its error as
// "gitea: <doing>: ...".
func (g *giteaClient) call(ctx context.Context, doing string, do func(*gitea.Client) (*gitea.Response, error)) (*gitea.Response, error) {
	api, err := g.api(ctx)
	if err != nil {
		return nil, apiFailed(Gitea, g.token, doing, err)
	}
	resp, err := do(api)
	if err != nil {
		return resp, apiFailed(Gitea, g.token, doing, err)
	}
	return resp, nil
}

// giteaState is the word Gitea's commit status API takes for s: a
// superseded head is "error" (Gitea also has "warning", which reads as a
// verdict with remarks; "error" says no verdict was come to, as GitHub).
func giteaState(s State) (gitea.StatusState, error) {
	switch s {
	case StatePending:
		return gitea.StatusPending, nil
	case StateSuccess:
		return gitea.StatusSuccess, nil
	case StateFailure:
		return gitea.StatusFailure, nil
	case StateSuperseded:
		return gitea.StatusError, nil
	}
	return "", fmt.Errorf("gitea: commit status state %q is none of pending, success, failure, superseded", s)
}

// SetStatus posts st on sha with POST /repos/{owner}/{repo}/statuses/{sha}:
// the state mapped by giteaState, the description cut to MaxDescription
// bytes, the target URL (empty when there is none).
func (g *giteaClient) SetStatus(ctx context.Context, repo, sha string, st Status) error {
	owner, name, err := splitRepo(Gitea, repo)
	if err != nil {
		return err
	}
	state, err := giteaState(st.State)
	if err != nil {
		return err
	}
	opt := gitea.CreateStatusOption{State: state, TargetURL: st.TargetURL, Description: cutDescription(st.Description), Context: st.Context}
	_, err = g.call(ctx, "posting status "+st.Context+" on "+sha, func(api *gitea.Client) (*gitea.Response, error) {
		_, resp, err := api.CreateStatus(owner, name, sha, opt)
		return resp, err
	})
	return err
}

// UpsertComment writes body as Switchtender's comment on pull request
// number and returns its id: it edits comment id (PATCH
// /repos/{owner}/{repo}/issues/comments/{id}) when id is not 0, and when
// that comment is gone (404) or id is 0, edits the first comment of the
// pull request that the token's own login wrote and that starts with
// CommentMarker (GET /repos/{owner}/{repo}/issues/{number}/comments, every
// page), or creates one (POST .../issues/{number}/comments). A body not
// starting with CommentMarker or longer than CommentLimit is refused.
func (g *giteaClient) UpsertComment(ctx context.Context, repo string, number int, id int64, body string) (int64, error) {
	owner, name, err := splitRepo(Gitea, repo)
	if err != nil {
		return 0, err
	}
	if err := checkCommentBody(Gitea, body, g.CommentLimit()); err != nil {
		return 0, err
	}
	if id != 0 {
		edited, err := g.editComment(ctx, owner, name, id, body)
		if !errors.Is(err, errCommentGone) {
			return edited, err
		}
	}
	found, err := g.findComment(ctx, owner, name, number)
	if err != nil {
		return 0, err
	}
	if found != 0 {
		return g.editComment(ctx, owner, name, found, body)
	}
	var c *gitea.Comment
	_, err = g.call(ctx, fmt.Sprintf("creating the comment on pull request %d", number), func(api *gitea.Client) (resp *gitea.Response, err error) {
		c, resp, err = api.CreateIssueComment(owner, name, int64(number), gitea.CreateIssueCommentOption{Body: body})
		return resp, err
	})
	if err != nil {
		return 0, err
	}
	return c.ID, nil
}

// editComment replaces comment id's body; a 404 is errCommentGone.
func (g *giteaClient) editComment(ctx context.Context, owner, name string, id int64, body string) (int64, error) {
	var c *gitea.Comment
	resp, err := g.call(ctx, fmt.Sprintf("editing comment %d", id), func(api *gitea.Client) (resp *gitea.Response, err error) {
		c, resp, err = api.EditIssueComment(owner, name, id, gitea.EditIssueCommentOption{Body: body})
		return resp, err
	})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return 0, errCommentGone
		}
		return 0, err
	}
	return c.ID, nil
}

// findComment returns the id of the first comment on pull request number
// that is Switchtender's own (isOwnComment), or 0 when there is none.
func (g *giteaClient) findComment(ctx context.Context, owner, name string, number int) (int64, error) {
	self, err := g.Self(ctx)
	if err != nil {
		return 0, err
	}
	opt := gitea.ListIssueCommentOptions{ListOptions: gitea.ListOptions{Page: 1, PageSize: giteaPage}}
	for {
		var comments []*gitea.Comment
		resp, err := g.call(ctx, fmt.Sprintf("listing the comments of pull request %d", number), func(api *gitea.Client) (resp *gitea.Response, err error) {
			comments, resp, err = api.ListIssueComments(owner, name, int64(number), opt)
			return resp, err
		})
		if err != nil {
			return 0, err
		}
		for _, c := range comments {
			if c.Poster != nil && isOwnComment(c.Poster.UserName, self, c.Body) {
				return c.ID, nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opt.Page = resp.NextPage
	}
}

// listPulls reads one page of GET /repos/{owner}/{repo}/pulls with opt.
func (g *giteaClient) listPulls(ctx context.Context, owner, name string, opt gitea.ListPullRequestsOptions) ([]*gitea.PullRequest, *gitea.Response, error) {
	var prs []*gitea.PullRequest
	resp, err := g.call(ctx, "listing "+string(opt.State)+" pull requests of "+owner+"/"+name, func(api *gitea.Client) (resp *gitea.Response, err error) {
		prs, resp, err = api.ListRepoPullRequests(owner, name, opt)
		return resp, err
	})
	return prs, resp, err
}

// OpenPullRequests lists the repository's open pull requests, every page
// of GET /repos/{owner}/{repo}/pulls?state=open.
func (g *giteaClient) OpenPullRequests(ctx context.Context, repo string) ([]PullRequest, error) {
	owner, name, err := splitRepo(Gitea, repo)
	if err != nil {
		return nil, err
	}
	var out []PullRequest
	opt := gitea.ListPullRequestsOptions{State: gitea.StateOpen, ListOptions: gitea.ListOptions{Page: 1, PageSize: giteaPage}}
	for {
		prs, resp, err := g.listPulls(ctx, owner, name, opt)
		if err != nil {
			return nil, err
		}
		for _, pr := range prs {
			out = append(out, giteaPullRequest(pr))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// MergedPullRequests lists the pull requests merged at or after since,
// newest merge first, at most 50: it reads GET
// /repos/{owner}/{repo}/pulls?state=closed&sort=recentupdate page by page
// until a pull request was last updated before since (a merge updates it,
// so none older was merged since). One the list gives without its merger
// is read again with GET /repos/{owner}/{repo}/pulls/{number}.
func (g *giteaClient) MergedPullRequests(ctx context.Context, repo string, since time.Time) ([]PullRequest, error) {
	owner, name, err := splitRepo(Gitea, repo)
	if err != nil {
		return nil, err
	}
	var out []PullRequest
	opt := gitea.ListPullRequestsOptions{State: gitea.StateClosed, Sort: "recentupdate", ListOptions: gitea.ListOptions{Page: 1, PageSize: giteaPage}}
	for len(out) < maxMerged {
		prs, resp, err := g.listPulls(ctx, owner, name, opt)
		if err != nil {
			return nil, err
		}
		kept, done := giteaMergedSince(prs, since)
		for _, pr := range kept {
			full, err := g.mergedBy(ctx, owner, name, pr)
			if err != nil {
				return nil, err
			}
			out = append(out, giteaPullRequest(full))
		}
		if done || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return newestMergedFirst(out), nil
}

// giteaMergedSince keeps from one page of closed pull requests (updated
// newest first) those merged at or after since, and reports done when the
// page reached one last updated before since.
func giteaMergedSince(prs []*gitea.PullRequest, since time.Time) (kept []*gitea.PullRequest, done bool) {
	for _, pr := range prs {
		if pr.Updated != nil && pr.Updated.Before(since) {
			return kept, true
		}
		if pr.HasMerged && pr.Merged != nil && !pr.Merged.Before(since) {
			kept = append(kept, pr)
		}
	}
	return kept, false
}

// mergedBy returns pr, read again with GET
// /repos/{owner}/{repo}/pulls/{number} when the list did not say who
// merged it.
func (g *giteaClient) mergedBy(ctx context.Context, owner, name string, pr *gitea.PullRequest) (*gitea.PullRequest, error) {
	if pr.MergedBy != nil {
		return pr, nil
	}
	var full *gitea.PullRequest
	_, err := g.call(ctx, fmt.Sprintf("reading pull request %d", pr.Index), func(api *gitea.Client) (resp *gitea.Response, err error) {
		full, resp, err = api.GetPullRequest(owner, name, pr.Index)
		return resp, err
	})
	return full, err
}

// giteaPullRequest is a Gitea pull request as a poll lists it. Its head
// is a fork when it lives in another repository than its base (or in none
// any more: repo_id 0).
func giteaPullRequest(pr *gitea.PullRequest) PullRequest {
	out := PullRequest{Number: int(pr.Index), Open: pr.State == gitea.StateOpen, Merged: pr.HasMerged}
	if pr.Head != nil {
		out.HeadSHA, out.HeadRef = pr.Head.Sha, pr.Head.Ref
	}
	if pr.Base != nil {
		out.BaseRef = pr.Base.Ref
	}
	out.Fork = pr.Head == nil || pr.Base == nil || pr.Head.RepoID != pr.Base.RepoID
	if pr.Poster != nil {
		out.Author = pr.Poster.UserName
	}
	if !out.Merged {
		return out
	}
	if pr.MergedCommitID != nil {
		out.MergeSHA = *pr.MergedCommitID
	}
	if pr.MergedBy != nil {
		out.MergedBy = pr.MergedBy.UserName
	}
	if pr.Merged != nil {
		out.MergedAt = *pr.Merged
	}
	return out
}

// CanPush reports whether login has write access or more ("write",
// "admin" or "owner"), from GET
// /repos/{owner}/{repo}/collaborators/{login}/permission (the token must
// be the repository's admin, or login itself).
func (g *giteaClient) CanPush(ctx context.Context, repo, login string) (bool, error) {
	owner, name, err := splitRepo(Gitea, repo)
	if err != nil {
		return false, err
	}
	var perm *gitea.CollaboratorPermissionResult
	_, err = g.call(ctx, "reading the permission of "+login+" on "+repo, func(api *gitea.Client) (resp *gitea.Response, err error) {
		perm, resp, err = api.CollaboratorPermission(owner, name, login)
		return resp, err
	})
	if err != nil || perm == nil {
		return false, err
	}
	switch perm.Permission {
	case gitea.AccessModeWrite, gitea.AccessModeAdmin, gitea.AccessModeOwner:
		return true, nil
	}
	return false, nil
}

// Self is the token's login, from GET /user, read once.
func (g *giteaClient) Self(ctx context.Context) (string, error) {
	return g.self.get(ctx, func(ctx context.Context) (string, error) {
		var u *gitea.User
		_, err := g.call(ctx, "reading the token's user", func(api *gitea.Client) (resp *gitea.Response, err error) {
			u, resp, err = api.GetMyUserInfo()
			return resp, err
		})
		if err != nil {
			return "", err
		}
		return u.UserName, nil
	})
}

// CommentLimit is CommentLimit: Gitea keeps a comment in a text column
// without a limit of its own, and Switchtender keeps every forge's comment
// within GitHub's.
func (g *giteaClient) CommentLimit() int { return CommentLimit }
