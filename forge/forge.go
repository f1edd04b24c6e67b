// Package forge is Switchtender's side of a code forge (Gitea, GitHub,
// GitLab): it verifies and reads the webhook deliveries a forge sends about
// pull requests, and it talks back to the forge (commit statuses, the one
// comment a pull request gets, the pull requests a poll lists) through the
// forge's own client library.
//
// What the server does with a delivery (plans, supersedes, the apply a
// merge proposes) is the server's; this package knows forges, not runs.
// See docs/forges.md.
package forge

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Type is a forge's kind, as a forge block's `type` names it.
type Type string

// The forges Switchtender speaks to.
const (
	Gitea  Type = "gitea"
	GitHub Type = "github"
	GitLab Type = "gitlab"
)

// Types lists every Type, in the order docs and errors name them.
var Types = []Type{Gitea, GitHub, GitLab}

// MaxBody is the largest webhook body the receiver reads, in bytes: a
// larger one is refused with 413 and stored nowhere. Pull-request and
// comment payloads are a few tens of kilobytes; GitHub caps its own at
// 25 MB, but a pull_request event never comes close.
const MaxBody = 4 << 20

// Kind is what a delivery is about, as Switchtender reads it.
type Kind string

// Delivery kinds. A delivery of any other event or action is KindIgnored:
// it is verified and answered, and changes nothing.
const (
	KindOpened  Kind = "opened"  // a pull request opened or reopened: plan its head
	KindPushed  Kind = "pushed"  // new commits on a pull request's head (GitHub "synchronize", Gitea "synchronized", GitLab "update" with new commits)
	KindClosed  Kind = "closed"  // closed without merging: its runs that have not ended are cancelled
	KindMerged  Kind = "merged"  // merged: the apply is proposed when the base is the default branch
	KindComment Kind = "comment" // a comment on a pull request (only `switchtender plan` does anything)
	KindPing    Kind = "ping"    // the forge's test delivery
	KindIgnored Kind = "ignored" // verified, and nothing Switchtender acts on
)

// Event is one verified webhook delivery, read strictly into what the
// server needs. Every string is as the forge sent it; nothing here is
// trusted for display (the server escapes before showing any of it).
type Event struct {
	Type       Type   `json:"type"`
	DeliveryID string `json:"delivery_id"` // X-Gitea-Delivery, X-GitHub-Delivery, X-Gitlab-Event-UUID (or the idempotency key); never empty for a verified delivery
	Event      string `json:"event"`       // the forge's event name as its header says it ("pull_request", "pull_request_sync", "Merge Request Hook", ...)
	Action     string `json:"action"`      // the payload's action word as sent ("opened", "synchronize", "update", ...)
	Kind       Kind   `json:"kind"`
	Repository string `json:"repository"` // base repository, "owner/name" (GitLab: path_with_namespace)
	Number     int    `json:"number"`     // pull request number (GitLab: the merge request iid)
	HeadSHA    string `json:"head_sha"`   // the head commit the payload names (40 hex)
	// BeforeSHA is the head before a push (Gitea and GitHub send before,
	// GitLab oldrev), when the payload says it: a head that was pushed
	// over before anything planned it is still known and marked.
	BeforeSHA     string `json:"before_sha,omitempty"`
	HeadRef       string `json:"head_ref"`       // head branch name
	BaseRef       string `json:"base_ref"`       // base branch name
	DefaultBranch string `json:"default_branch"` // the base repository's default branch
	MergeSHA      string `json:"merge_sha,omitempty"`
	Author        string `json:"author"` // the pull request's author's login
	Sender        string `json:"sender"` // who caused the delivery: the pusher, merger or commenter
	Fork          bool   `json:"fork"`   // the head lives in another repository than the base
	// Comment is a KindComment's body as written (at most MaxComment bytes
	// are kept); CommentID its id.
	Comment   string `json:"comment,omitempty"`
	CommentID int64  `json:"comment_id,omitempty"`
}

// MaxComment is how much of a comment's body Event keeps, in bytes.
const MaxComment = 1024

// ErrSignature is a delivery whose signature or token is missing or does
// not match the forge's webhook secret: the receiver answers 401 and stores
// nothing.
var ErrSignature = errors.New("the delivery's signature does not match the forge's webhook secret")

// State is a commit status's state, as Switchtender means it; a Client maps
// it onto the forge's own words.
type State string

// Commit status states.
const (
	StatePending    State = "pending"    // queued or running
	StateSuccess    State = "success"    // planned (or applied)
	StateFailure    State = "failure"    // refused by the scan or the rules, or failed
	StateSuperseded State = "superseded" // a newer head replaced this one (Gitea and GitHub "error", GitLab "canceled")
)

// Status is one commit status: Context such as
// "switchtender/plan/network", a State, and a Description of at most
// MaxDescription bytes (GitHub's limit is 140 characters).
type Status struct {
	Context     string
	State       State
	Description string
	TargetURL   string // may be empty
}

// MaxDescription is the longest status description a Client sends, in
// bytes; a Client cuts a longer one on a rune boundary.
const MaxDescription = 140

// PullRequest is a pull request as a poll lists it.
type PullRequest struct {
	Number   int
	HeadSHA  string
	HeadRef  string
	BaseRef  string
	Author   string
	Fork     bool
	Open     bool
	Merged   bool
	MergeSHA string // the merge (or squash) commit on the base branch, when merged
	MergedBy string
	MergedAt time.Time
}

// Client talks to one forge's API with one token. Every method takes the
// base repository as "owner/name" (GitLab: the project's full path). The
// token is never put in an error, a log or a URL.
type Client interface {
	// SetStatus posts a commit status on sha.
	SetStatus(ctx context.Context, repo, sha string, st Status) error
	// UpsertComment writes body as Switchtender's one comment on pull
	// request number: it edits comment id when id is not 0 and it still
	// exists, otherwise it edits the first comment of the pull request
	// holding CommentMarker, otherwise it creates one. It returns the
	// comment's id.
	UpsertComment(ctx context.Context, repo string, number int, id int64, body string) (int64, error)
	// OpenPullRequests lists the repository's open pull requests.
	OpenPullRequests(ctx context.Context, repo string) ([]PullRequest, error)
	// MergedPullRequests lists pull requests merged since the time given
	// (newest first, at most 50).
	MergedPullRequests(ctx context.Context, repo string, since time.Time) ([]PullRequest, error)
	// CanPush reports whether login may push to the repository (write
	// access or more): who may ask for a plan with a comment.
	CanPush(ctx context.Context, repo, login string) (bool, error)
	// Self is the login the token authenticates as: deliveries its own
	// comments cause are ignored.
	Self(ctx context.Context) (string, error)
	// CommentLimit is the longest comment body the forge takes, in bytes.
	CommentLimit() int
}

// CommentMarker starts every comment Switchtender writes, so it finds its
// own comment again after a restart and ignores deliveries it caused. It is
// an HTML comment: no forge renders it.
const CommentMarker = "<!-- switchtender -->"

// CommentLimit is GitHub's limit on a comment body, 65,536 characters:
// the limit every forge's comment is kept within.
const CommentLimit = 65535

// FetchRef is the ref under which the base repository serves pull request
// number's head: Gitea and GitHub refs/pull/N/head, GitLab
// refs/merge-requests/N/head.
func FetchRef(t Type, number int) string {
	if t == GitLab {
		return "refs/merge-requests/" + strconv.Itoa(number) + "/head"
	}
	return "refs/pull/" + strconv.Itoa(number) + "/head"
}
