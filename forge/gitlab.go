package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// gitlabPage is the page size of GitLab lists (its maximum).
const gitlabPage = 100

// gitLab is the Client of a GitLab, through
// gitlab.com/gitlab-org/api/client-go (REST API v4, docs.gitlab.com/api).
// A repository is the project's full path ("group/sub/project"); a pull
// request is a merge request, its number the merge request's iid.
type gitLab struct {
	api   *gitlab.Client
	token string
	self  selfLogin
}

// NewGitLab returns the Client of the GitLab at baseURL ("" means
// gitlab.com; the library adds /api/v4). The token (a personal, project or
// group access token) is sent as "PRIVATE-TOKEN". hc nil means a client
// with a 30-second timeout. The library retries a failed GET or PUT (5xx,
// 429), never a POST, which could post a status or comment twice. Nothing
// is sent until a method is called.
func NewGitLab(baseURL, token string, hc *http.Client) (Client, error) {
	hc, err := checkClientArgs(GitLab, baseURL, token, hc)
	if err != nil {
		return nil, err
	}
	opts := []gitlab.ClientOptionFunc{gitlab.WithHTTPClient(hc), gitlab.WithOnlyIdempotentRetries()}
	if baseURL != "" {
		opts = append(opts, gitlab.WithBaseURL(baseURL))
	}
	api, err := gitlab.NewClient(token, opts...)
	if err != nil {
		return nil, apiFailed(GitLab, token, fmt.Sprintf("base URL %q", baseURL), err)
	}
	return &gitLab{api: api, token: token}, nil
}

// gitlabState is the word GitLab's commit status API takes for s: failure
// is "failed", and a superseded head is "canceled".
func gitlabState(s State) (gitlab.BuildStateValue, error) {
	switch s {
	case StatePending:
		return gitlab.Pending, nil
	case StateSuccess:
		return gitlab.Success, nil
	case StateFailure:
		return gitlab.Failed, nil
	case StateSuperseded:
		return gitlab.Canceled, nil
	}
	return "", fmt.Errorf("gitlab: commit status state %q is none of pending, success, failure, superseded", s)
}

// SetStatus posts st on sha with POST /projects/:id/statuses/:sha
// (docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit): the
// state mapped by gitlabState, st.Context as the status's name, the
// description cut to MaxDescription bytes, the target URL when there is
// one. GitLab refuses to move a status that is already pending or running
// to pending (400 "Cannot transition status via :enqueue"): that status
// already says what a pending one says, so the refusal is taken as done.
func (g *gitLab) SetStatus(ctx context.Context, repo, sha string, st Status) error {
	if err := checkProjectPath(repo); err != nil {
		return err
	}
	state, err := gitlabState(st.State)
	if err != nil {
		return err
	}
	opt := &gitlab.SetCommitStatusOptions{
		State:       state,
		Name:        gitlab.Ptr(st.Context),
		Description: gitlab.Ptr(cutDescription(st.Description)),
	}
	if st.TargetURL != "" {
		opt.TargetURL = gitlab.Ptr(st.TargetURL)
	}
	_, _, err = g.api.Commits.SetCommitStatus(repo, sha, opt, gitlab.WithContext(ctx))
	if err != nil && !(state == gitlab.Pending && alreadyPending(err)) {
		return apiFailed(GitLab, g.token, "posting status "+st.Context+" on "+sha, err)
	}
	return nil
}

// alreadyPending reports whether err is GitLab refusing a pending status
// over one that is pending or running.
func alreadyPending(err error) bool {
	var resp *gitlab.ErrorResponse
	return errors.As(err, &resp) && resp.StatusCode == http.StatusBadRequest &&
		strings.Contains(resp.Message, "Cannot transition status via :enqueue")
}

// UpsertComment writes body as Switchtender's note on merge request
// number and returns its id: it edits note id (PUT
// /projects/:id/merge_requests/:iid/notes/:note_id) when id is not 0, and
// when that note is gone (404) or id is 0, edits the first note of the
// merge request that the token's own user wrote and that starts with
// CommentMarker (GET /projects/:id/merge_requests/:iid/notes, oldest
// first, every page), or creates one (POST .../notes). A body not
// starting with CommentMarker or longer than CommentLimit is refused.
func (g *gitLab) UpsertComment(ctx context.Context, repo string, number int, id int64, body string) (int64, error) {
	if err := checkProjectPath(repo); err != nil {
		return 0, err
	}
	if err := checkCommentBody(GitLab, body, g.CommentLimit()); err != nil {
		return 0, err
	}
	iid := int64(number)
	if id != 0 {
		edited, err := g.editNote(ctx, repo, iid, id, body)
		if !errors.Is(err, errCommentGone) {
			return edited, err
		}
	}
	found, err := g.findNote(ctx, repo, iid)
	if err != nil {
		return 0, err
	}
	if found != 0 {
		return g.editNote(ctx, repo, iid, found, body)
	}
	n, _, err := g.api.Notes.CreateMergeRequestNote(repo, iid, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
	if err != nil {
		return 0, apiFailed(GitLab, g.token, fmt.Sprintf("creating the note on merge request %d", number), err)
	}
	return n.ID, nil
}

// editNote replaces note id's body; a 404 is errCommentGone.
func (g *gitLab) editNote(ctx context.Context, repo string, iid, id int64, body string) (int64, error) {
	n, _, err := g.api.Notes.UpdateMergeRequestNote(repo, iid, id, &gitlab.UpdateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
	if errors.Is(err, gitlab.ErrNotFound) {
		return 0, errCommentGone
	}
	if err != nil {
		return 0, apiFailed(GitLab, g.token, fmt.Sprintf("editing note %d", id), err)
	}
	return n.ID, nil
}

// findNote returns the id of the first note on merge request iid that is
// Switchtender's own (isOwnComment, and no system note), or 0.
func (g *gitLab) findNote(ctx context.Context, repo string, iid int64) (int64, error) {
	self, err := g.Self(ctx)
	if err != nil {
		return 0, err
	}
	opt := &gitlab.ListMergeRequestNotesOptions{
		ListOptions: gitlab.ListOptions{PerPage: gitlabPage},
		OrderBy:     gitlab.Ptr("created_at"),
		Sort:        gitlab.Ptr("asc"),
	}
	for {
		notes, resp, err := g.api.Notes.ListMergeRequestNotes(repo, iid, opt, gitlab.WithContext(ctx))
		if err != nil {
			return 0, apiFailed(GitLab, g.token, fmt.Sprintf("listing the notes of merge request %d", iid), err)
		}
		for _, n := range notes {
			if !n.System && isOwnComment(n.Author.Username, self, n.Body) {
				return n.ID, nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opt.Page = resp.NextPage
	}
}

// OpenPullRequests lists the project's open merge requests, every page of
// GET /projects/:id/merge_requests?state=opened
// (docs.gitlab.com/api/merge_requests/#list-project-merge-requests).
func (g *gitLab) OpenPullRequests(ctx context.Context, repo string) ([]PullRequest, error) {
	if err := checkProjectPath(repo); err != nil {
		return nil, err
	}
	var out []PullRequest
	opt := &gitlab.ListProjectMergeRequestsOptions{ListOptions: gitlab.ListOptions{PerPage: gitlabPage}, State: gitlab.Ptr("opened")}
	for {
		mrs, resp, err := g.api.MergeRequests.ListProjectMergeRequests(repo, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, apiFailed(GitLab, g.token, "listing open merge requests of "+repo, err)
		}
		for _, mr := range mrs {
			out = append(out, gitlabPullRequest(mr))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// MergedPullRequests lists the merge requests merged at or after since,
// newest merge first, at most 50, from GET
// /projects/:id/merge_requests?state=merged&updated_after=<since>&order_by=updated_at&sort=desc
// page by page (a merge updates a merge request, so none updated before
// since was merged since; one updated since may have merged before).
func (g *gitLab) MergedPullRequests(ctx context.Context, repo string, since time.Time) ([]PullRequest, error) {
	if err := checkProjectPath(repo); err != nil {
		return nil, err
	}
	var out []PullRequest
	opt := &gitlab.ListProjectMergeRequestsOptions{
		ListOptions:  gitlab.ListOptions{PerPage: gitlabPage},
		State:        gitlab.Ptr("merged"),
		UpdatedAfter: gitlab.Ptr(since),
		OrderBy:      gitlab.Ptr("updated_at"),
		Sort:         gitlab.Ptr("desc"),
	}
	for len(out) < maxMerged {
		mrs, resp, err := g.api.MergeRequests.ListProjectMergeRequests(repo, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, apiFailed(GitLab, g.token, "listing merged merge requests of "+repo, err)
		}
		for _, mr := range mrs {
			if mr.MergedAt != nil && !mr.MergedAt.Before(since) {
				out = append(out, gitlabPullRequest(mr))
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return newestMergedFirst(out), nil
}

// gitlabPullRequest is a GitLab merge request as a poll lists it. Its
// head is a fork when its source project is not its target. The commit it
// left on the target is the merge commit, or the squash commit, or (a
// fast-forward merge without squashing) its head; who merged it is
// merge_user (GitLab 14.7 and later; merged_by, which it replaces, is
// deprecated and not read).
func gitlabPullRequest(mr *gitlab.BasicMergeRequest) PullRequest {
	out := PullRequest{
		Number:  int(mr.IID),
		HeadSHA: mr.SHA,
		HeadRef: mr.SourceBranch,
		BaseRef: mr.TargetBranch,
		Fork:    mr.SourceProjectID != mr.TargetProjectID,
		Open:    mr.State == "opened",
		Merged:  mr.State == "merged",
	}
	if mr.Author != nil {
		out.Author = mr.Author.Username
	}
	if !out.Merged {
		return out
	}
	out.MergeSHA = firstNonEmpty(mr.MergeCommitSHA, mr.SquashCommitSHA, mr.SHA)
	if mr.MergeUser != nil {
		out.MergedBy = mr.MergeUser.Username
	}
	if mr.MergedAt != nil {
		out.MergedAt = *mr.MergedAt
	}
	return out
}

// firstNonEmpty returns the first of ss that is not "".
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// CanPush reports whether login is a member of the project, directly or
// through its groups, with Developer access (30) or more: it finds the
// user with GET /users?username=<login> and its membership with GET
// /projects/:id/members/all/:user_id (docs.gitlab.com/api/members). A user
// who does not exist or is no member (404) cannot push.
func (g *gitLab) CanPush(ctx context.Context, repo, login string) (bool, error) {
	if err := checkProjectPath(repo); err != nil {
		return false, err
	}
	users, _, err := g.api.Users.ListUsers(&gitlab.ListUsersOptions{Username: gitlab.Ptr(login)}, gitlab.WithContext(ctx))
	if err != nil {
		return false, apiFailed(GitLab, g.token, "finding user "+login, err)
	}
	var id int64
	for _, u := range users {
		if strings.EqualFold(u.Username, login) {
			id = u.ID
			break
		}
	}
	if id == 0 {
		return false, nil
	}
	m, _, err := g.api.ProjectMembers.GetInheritedProjectMember(repo, id, gitlab.WithContext(ctx))
	if errors.Is(err, gitlab.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, apiFailed(GitLab, g.token, "reading the membership of "+login+" in "+repo, err)
	}
	return m.AccessLevel >= gitlab.DeveloperPermissions, nil
}

// Self is the token's username, from GET /user
// (docs.gitlab.com/api/users/#retrieve-the-current-user), read once.
func (g *gitLab) Self(ctx context.Context) (string, error) {
	return g.self.get(ctx, func(ctx context.Context) (string, error) {
		u, _, err := g.api.Users.CurrentUser(gitlab.WithContext(ctx))
		if err != nil {
			return "", apiFailed(GitLab, g.token, "reading the token's user", err)
		}
		return u.Username, nil
	})
}

// CommentLimit is CommentLimit: GitLab takes notes of up to 1,000,000
// characters, and Switchtender keeps every forge's comment within the
// smallest limit, GitHub's.
func (g *gitLab) CommentLimit() int { return CommentLimit }
