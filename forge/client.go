package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// New returns the Client for a forge of type t: NewGitea, NewGitHub or
// NewGitLab, given the forge's base URL (the address people browse, such
// as "https://gitea.example.com"; "" means the public service for GitHub
// and GitLab), the token it authenticates with, and the HTTP client it
// sends with (nil means one with a 30-second timeout). A type that is not
// one of Types is an error naming the three; a bad base URL or an empty
// token is an error saying what to write instead. No request is sent.
func New(t Type, baseURL, token string, hc *http.Client) (Client, error) {
	switch t {
	case Gitea:
		return NewGitea(baseURL, token, hc)
	case GitHub:
		return NewGitHub(baseURL, token, hc)
	case GitLab:
		return NewGitLab(baseURL, token, hc)
	}
	names := make([]string, len(Types))
	for i, k := range Types {
		names[i] = fmt.Sprintf("%q", k)
	}
	return nil, fmt.Errorf("forge type %q is not one Switchtender speaks to: write %s", t, strings.Join(names, ", "))
}

// clientTimeout bounds every request of a Client built without an HTTP
// client of its own.
const clientTimeout = 30 * time.Second

// checkClientArgs checks what every constructor is given: baseURL, when
// not empty, is an absolute http or https URL with a host; token is not
// empty. It returns the HTTP client to use: hc, or one with clientTimeout.
func checkClientArgs(t Type, baseURL, token string, hc *http.Client) (*http.Client, error) {
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: base URL %q is not an http or https address: write it as https://host[/path]", t, baseURL)
		}
		if u.User != nil {
			return nil, fmt.Errorf("%s: base URL %q holds a user name or password: give the token as the forge's token, not in the URL", t, u.Redacted())
		}
	}
	if strings.TrimSpace(token) == "" {
		return nil, fmt.Errorf("%s: the token is empty: Switchtender needs a token to post statuses and comments", t)
	}
	if hc == nil {
		hc = &http.Client{Timeout: clientTimeout}
	}
	return hc, nil
}

// apiError is a failed call to a forge's API: its text names the forge and
// what was being done, and never holds the token (a server that echoes the
// request's credentials back in its error has them scrubbed). Unwrap gives
// the library's own error, for errors.Is and errors.As.
type apiError struct {
	msg string
	err error
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

// apiFailed wraps err from forge t as "<t>: <doing>: <err>", with every
// occurrence of token replaced by "[token]".
func apiFailed(t Type, token, doing string, err error) error {
	msg := fmt.Sprintf("%s: %s: %v", t, doing, err)
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "[token]")
	}
	return &apiError{msg: msg, err: err}
}

// splitRepo splits "owner/name" into its two parts; anything else is an
// error saying the shape expected.
func splitRepo(t Type, repo string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%s: repository %q is not owner/name", t, repo)
	}
	return owner, name, nil
}

// checkProjectPath checks a GitLab project's full path: a namespace and a
// name ("group/project", "group/sub/project"), no part empty.
func checkProjectPath(repo string) error {
	parts := strings.Split(repo, "/")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return fmt.Errorf("gitlab: project %q is not a full path such as group/project", repo)
	}
	return nil
}

// cutDescription returns s cut to at most MaxDescription bytes, on a rune
// boundary.
func cutDescription(s string) string {
	if len(s) <= MaxDescription {
		return s
	}
	n := MaxDescription
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// checkCommentBody refuses a body UpsertComment must not write: one that
// does not start with CommentMarker (it could never be found again) or is
// longer than limit bytes (the forge would refuse it).
func checkCommentBody(t Type, body string, limit int) error {
	if !strings.HasPrefix(body, CommentMarker) {
		return fmt.Errorf("%s: the comment does not start with %s: Switchtender could not find it again", t, CommentMarker)
	}
	if len(body) > limit {
		return fmt.Errorf("%s: the comment is %d bytes, more than the %d the forge takes", t, len(body), limit)
	}
	return nil
}

// isOwnComment reports whether a comment by author with body is the one
// Switchtender keeps: written by the token's own login and starting with
// CommentMarker. Logins compare without regard to case, as every forge
// treats them.
func isOwnComment(author, self, body string) bool {
	return strings.EqualFold(author, self) && strings.HasPrefix(body, CommentMarker)
}

// errCommentGone is a comment to edit that no longer exists (the forge
// answered 404): UpsertComment then looks for its comment by marker.
var errCommentGone = errors.New("the comment no longer exists")

// maxMerged is how many pull requests MergedPullRequests returns at most.
const maxMerged = 50

// newestMergedFirst sorts pull requests by MergedAt, newest first, and
// keeps at most maxMerged.
func newestMergedFirst(prs []PullRequest) []PullRequest {
	sort.SliceStable(prs, func(i, j int) bool { return prs[i].MergedAt.After(prs[j].MergedAt) })
	if len(prs) > maxMerged {
		prs = prs[:maxMerged]
	}
	return prs
}

// selfLogin remembers the login a token authenticates as once it is
// known: it does not change while the token lives.
type selfLogin struct {
	mu    sync.Mutex
	login string
}

// get returns the remembered login, asking fetch the first time.
func (s *selfLogin) get(ctx context.Context, fetch func(context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login != "" {
		return s.login, nil
	}
	login, err := fetch(ctx)
	if err != nil {
		return "", err
	}
	s.login = login
	return login, nil
}
