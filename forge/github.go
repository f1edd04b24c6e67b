package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"
)

// githubAPI is the public GitHub's API address; any other base URL is a
// GitHub Enterprise Server.
const githubAPI = "https://api.github.com"

// githubPage is the page size of GitHub lists (its maximum).
const githubPage = 100

// gitHub is the Client of GitHub and GitHub Enterprise Server, through
// github.com/google/go-github (REST API v3, docs.github.com/rest).
type gitHub struct {
	api   *github.Client
	token string
	self  selfLogin
}

// NewGitHub returns the Client of a GitHub: baseURL "" or
// "https://api.github.com" is github.com; any other is a GitHub
// Enterprise Server, whose API the library finds under /api/v3/ of it.
// The token (a personal access or app installation token) is sent as
// "Authorization: Bearer". hc nil means a client with a 30-second timeout.
// Nothing is sent until a method is called.
func NewGitHub(baseURL, token string, hc *http.Client) (Client, error) {
	hc, err := checkClientArgs(GitHub, baseURL, token, hc)
	if err != nil {
		return nil, err
	}
	api := github.NewClient(hc).WithAuthToken(token)
	if base := strings.TrimSuffix(baseURL, "/"); base != "" && base != githubAPI {
		if api, err = api.WithEnterpriseURLs(baseURL, baseURL); err != nil {
			return nil, fmt.Errorf("github: base URL %q: %w", baseURL, err)
		}
	}
	return &gitHub{api: api, token: token}, nil
}

// githubState is the word GitHub's commit status API takes for s:
// a superseded head is "error", GitHub's state for a status that did not
// come to a verdict.
func githubState(s State) (string, error) {
	switch s {
	case StatePending, StateSuccess, StateFailure:
		return string(s), nil
	case StateSuperseded:
		return "error", nil
	}
	return "", fmt.Errorf("github: commit status state %q is none of pending, success, failure, superseded", s)
}

// SetStatus posts st on sha with POST /repos/{owner}/{repo}/statuses/{sha}
// (docs.github.com/rest/commits/statuses#create-a-commit-status): the state
// mapped by githubState, the description cut to MaxDescription bytes, the
// target URL when there is one.
func (g *gitHub) SetStatus(ctx context.Context, repo, sha string, st Status) error {
	owner, name, err := splitRepo(GitHub, repo)
	if err != nil {
		return err
	}
	state, err := githubState(st.State)
	if err != nil {
		return err
	}
	status := github.RepoStatus{
		State:       github.Ptr(state),
		Context:     github.Ptr(st.Context),
		Description: github.Ptr(cutDescription(st.Description)),
	}
	if st.TargetURL != "" {
		status.TargetURL = github.Ptr(st.TargetURL)
	}
	if _, _, err := g.api.Repositories.CreateStatus(ctx, owner, name, sha, status); err != nil {
		return apiFailed(GitHub, g.token, "posting status "+st.Context+" on "+sha, err)
	}
	return nil
}

// UpsertComment writes body as Switchtender's comment on pull request
// number and returns its id: it edits comment id (PATCH
// /repos/{owner}/{repo}/issues/comments/{id}) when id is not 0, and when
// that comment is gone (404) or id is 0, edits the first comment of the
// pull request that the token's own login wrote and that starts with
// CommentMarker (GET /repos/{owner}/{repo}/issues/{number}/comments, every
// page), or creates one (POST .../issues/{number}/comments). A body not
// starting with CommentMarker or longer than CommentLimit is refused.
func (g *gitHub) UpsertComment(ctx context.Context, repo string, number int, id int64, body string) (int64, error) {
	owner, name, err := splitRepo(GitHub, repo)
	if err != nil {
		return 0, err
	}
	if err := checkCommentBody(GitHub, body, g.CommentLimit()); err != nil {
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
	c, _, err := g.api.Issues.CreateComment(ctx, owner, name, number, &github.IssueComment{Body: github.Ptr(body)})
	if err != nil {
		return 0, apiFailed(GitHub, g.token, fmt.Sprintf("creating the comment on pull request %d", number), err)
	}
	return c.GetID(), nil
}

// editComment replaces comment id's body; a 404 is errCommentGone.
func (g *gitHub) editComment(ctx context.Context, owner, name string, id int64, body string) (int64, error) {
	c, resp, err := g.api.Issues.EditComment(ctx, owner, name, id, &github.IssueComment{Body: github.Ptr(body)})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return 0, errCommentGone
		}
		return 0, apiFailed(GitHub, g.token, fmt.Sprintf("editing comment %d", id), err)
	}
	return c.GetID(), nil
}

// findComment returns the id of the first comment on pull request number
// that is Switchtender's own (isOwnComment), or 0 when there is none.
func (g *gitHub) findComment(ctx context.Context, owner, name string, number int) (int64, error) {
	self, err := g.Self(ctx)
	if err != nil {
		return 0, err
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: githubPage}}
	for {
		comments, resp, err := g.api.Issues.ListComments(ctx, owner, name, number, opts)
		if err != nil {
			return 0, apiFailed(GitHub, g.token, fmt.Sprintf("listing the comments of pull request %d", number), err)
		}
		for _, c := range comments {
			if isOwnComment(c.GetUser().GetLogin(), self, c.GetBody()) {
				return c.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

// OpenPullRequests lists the repository's open pull requests, every page
// of GET /repos/{owner}/{repo}/pulls?state=open
// (docs.github.com/rest/pulls/pulls#list-pull-requests).
func (g *gitHub) OpenPullRequests(ctx context.Context, repo string) ([]PullRequest, error) {
	owner, name, err := splitRepo(GitHub, repo)
	if err != nil {
		return nil, err
	}
	var out []PullRequest
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: githubPage}}
	for {
		prs, resp, err := g.api.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return nil, apiFailed(GitHub, g.token, "listing open pull requests of "+repo, err)
		}
		for _, pr := range prs {
			out = append(out, githubPullRequest(pr))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// MergedPullRequests lists the pull requests merged at or after since,
// newest merge first, at most 50: it reads GET
// /repos/{owner}/{repo}/pulls?state=closed&sort=updated&direction=desc page
// by page until a pull request was last updated before since (a merge
// updates it, so none older was merged since), and reads GET
// /repos/{owner}/{repo}/pulls/{number} for each kept one, as the list does
// not say who merged.
func (g *gitHub) MergedPullRequests(ctx context.Context, repo string, since time.Time) ([]PullRequest, error) {
	owner, name, err := splitRepo(GitHub, repo)
	if err != nil {
		return nil, err
	}
	var out []PullRequest
	opts := &github.PullRequestListOptions{State: "closed", Sort: "updated", Direction: "desc", ListOptions: github.ListOptions{PerPage: githubPage}}
	for len(out) < maxMerged {
		prs, resp, err := g.api.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return nil, apiFailed(GitHub, g.token, "listing closed pull requests of "+repo, err)
		}
		kept, done := githubMergedSince(prs, since)
		for _, pr := range kept {
			full, err := g.mergedBy(ctx, owner, name, pr)
			if err != nil {
				return nil, err
			}
			out = append(out, full)
		}
		if done || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return newestMergedFirst(out), nil
}

// githubMergedSince keeps from one page of closed pull requests (updated
// newest first) those merged at or after since, and reports done when the
// page reached one last updated before since.
func githubMergedSince(prs []*github.PullRequest, since time.Time) (kept []*github.PullRequest, done bool) {
	for _, pr := range prs {
		if pr.GetUpdatedAt().Before(since) {
			return kept, true
		}
		if pr.MergedAt != nil && !pr.GetMergedAt().Before(since) {
			kept = append(kept, pr)
		}
	}
	return kept, false
}

// mergedBy completes a merged pull request from the list with who merged
// it, from GET /repos/{owner}/{repo}/pulls/{number}.
func (g *gitHub) mergedBy(ctx context.Context, owner, name string, pr *github.PullRequest) (PullRequest, error) {
	if pr.MergedBy != nil {
		return githubPullRequest(pr), nil
	}
	full, _, err := g.api.PullRequests.Get(ctx, owner, name, pr.GetNumber())
	if err != nil {
		return PullRequest{}, apiFailed(GitHub, g.token, fmt.Sprintf("reading pull request %d", pr.GetNumber()), err)
	}
	return githubPullRequest(full), nil
}

// githubPullRequest is a GitHub pull request as a poll lists it. Its head
// is a fork when it lives in another repository than its base, or in none
// (a deleted fork).
func githubPullRequest(pr *github.PullRequest) PullRequest {
	headRepo := pr.GetHead().GetRepo()
	out := PullRequest{
		Number:  pr.GetNumber(),
		HeadSHA: pr.GetHead().GetSHA(),
		HeadRef: pr.GetHead().GetRef(),
		BaseRef: pr.GetBase().GetRef(),
		Author:  pr.GetUser().GetLogin(),
		Fork:    headRepo == nil || headRepo.GetID() != pr.GetBase().GetRepo().GetID(),
		Open:    pr.GetState() == "open",
		Merged:  pr.MergedAt != nil,
	}
	if out.Merged {
		out.MergeSHA = pr.GetMergeCommitSHA()
		out.MergedBy = pr.GetMergedBy().GetLogin()
		out.MergedAt = pr.GetMergedAt().Time
	}
	return out
}

// CanPush reports whether login has write access or more ("write" or
// "admin"; GitHub reports "maintain" as "write"), from GET
// /repos/{owner}/{repo}/collaborators/{login}/permission
// (docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user).
func (g *gitHub) CanPush(ctx context.Context, repo, login string) (bool, error) {
	owner, name, err := splitRepo(GitHub, repo)
	if err != nil {
		return false, err
	}
	level, _, err := g.api.Repositories.GetPermissionLevel(ctx, owner, name, login)
	if err != nil {
		return false, apiFailed(GitHub, g.token, "reading the permission of "+login+" on "+repo, err)
	}
	switch level.GetPermission() {
	case "admin", "write":
		return true, nil
	}
	return false, nil
}

// Self is the token's login, from GET /user
// (docs.github.com/rest/users/users#get-the-authenticated-user), read once.
func (g *gitHub) Self(ctx context.Context) (string, error) {
	return g.self.get(ctx, func(ctx context.Context) (string, error) {
		u, _, err := g.api.Users.Get(ctx, "")
		if err != nil {
			return "", apiFailed(GitHub, g.token, "reading the token's user", err)
		}
		return u.GetLogin(), nil
	})
}

// CommentLimit is CommentLimit: GitHub's own limit on a comment body.
func (g *gitHub) CommentLimit() int { return CommentLimit }
