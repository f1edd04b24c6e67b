package forge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"unicode/utf8"
)

// Parse reads one delivery, already verified, into an Event: h is the
// request's headers, body its raw body (at most MaxBody bytes, JSON).
//
// The delivery id and the event name come from headers (Gitea
// X-Gitea-Delivery and X-Gitea-Event-Type, GitHub X-GitHub-Delivery and
// X-GitHub-Event, GitLab see readGitLab); the rest from the body, read
// strictly: a body that is not one JSON object, repeats a member name at
// any depth, has data after the object or nests absurdly deep is an
// error (see checkStrictJSON), and so is a field of the wrong type, a
// head, before or merge commit that is not 40 or 64 lowercase hex, a
// number out of range, or a missing field Switchtender needs for the
// delivery's Kind (see checkEvent). An event or action Switchtender does
// not act on is no error: its Kind is KindIgnored.
//
// Each forge's reading, and the forge documentation it follows, is in
// readGitea, readGitHub and readGitLab. A comment is cut to MaxComment
// bytes on a rune boundary. Errors say what is wrong with the delivery;
// none quotes more than a member's name from the body.
func Parse(t Type, h http.Header, body []byte) (Event, error) {
	ev, err := parseDelivery(t, h, body)
	if err != nil {
		return Event{}, fmt.Errorf("a %s delivery: %w", t, err)
	}
	return ev, nil
}

func parseDelivery(t Type, h http.Header, body []byte) (Event, error) {
	var read func(http.Header, []byte) (Event, error)
	switch t {
	case Gitea:
		read = readGitea
	case GitHub:
		read = readGitHub
	case GitLab:
		read = readGitLab
	default:
		return Event{}, fmt.Errorf("%q is no forge type (gitea, github, gitlab)", t)
	}
	if len(body) > MaxBody {
		return Event{}, fmt.Errorf("the body is %d bytes, more than the %d a delivery may have", len(body), MaxBody)
	}
	if err := checkStrictJSON(body); err != nil {
		return Event{}, err
	}
	ev, err := read(h, body)
	if err != nil {
		return Event{}, err
	}
	ev.Type = t
	ev.Comment = cutDeliveryText(ev.Comment, MaxComment)
	return ev, checkEvent(ev)
}

// maxHeaderText is the longest delivery id or event name a delivery may
// carry, in bytes; forges send a UUID (36) and a short name.
const maxHeaderText = 128

// deliveryHeaders reads the delivery id from the first of idNames present
// and the event name from the first of eventNames present. Each must be
// sent once, be printable ASCII, and be at most maxHeaderText bytes.
func deliveryHeaders(h http.Header, idNames, eventNames []string) (Event, error) {
	id, err := firstHeader(h, idNames)
	if err != nil {
		return Event{}, err
	}
	event, err := firstHeader(h, eventNames)
	if err != nil {
		return Event{}, err
	}
	return Event{DeliveryID: id, Event: event}, nil
}

func firstHeader(h http.Header, names []string) (string, error) {
	for _, name := range names {
		v, err := oneDeliveryHeader(h, name)
		if err != nil {
			return "", err
		}
		if v == "" {
			continue
		}
		if len(v) > maxHeaderText || !isPrintableASCII(v) {
			return "", fmt.Errorf("the %s header is not up to %d printable ASCII characters", name, maxHeaderText)
		}
		return v, nil
	}
	return "", fmt.Errorf("the delivery has no %s header; is this endpoint receiving another forge's deliveries?", names[0])
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// decodeDelivery unmarshals a checked body into v, saying which member
// has the wrong type when one has.
func decodeDelivery(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("the body's member %s is a JSON %s, not what the forge sends there", quoteMemberName(typeErr.Field), typeErr.Value)
		}
		return fmt.Errorf("the body cannot be read: %w", err)
	}
	return nil
}

// prNumber is a pull request number or comment-target number as sent: 0
// when absent, an error when negative or above 2^31-1 (no forge numbers
// that high).
func prNumber(n int64, field string) (int, error) {
	if n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("the body's %s is %d, not a pull request number", field, n)
	}
	return int(n), nil
}

// checkEvent refuses an Event that lacks what its Kind needs, or that
// names a commit that is not a commit id.
func checkEvent(ev Event) error {
	if err := checkSHAs(ev); err != nil {
		return err
	}
	if ev.Kind == KindIgnored || ev.Kind == KindPing {
		return nil
	}
	need := []struct {
		missing bool
		what    string
	}{
		{ev.Repository == "", "the repository's full name"},
		{ev.Number == 0, "the pull request's number"},
		{ev.Sender == "", "who caused it (the sender's login)"},
		{ev.HeadSHA == "" && ev.Kind.needsHead(), "the pull request's head commit"},
		{ev.HeadRef == "" && ev.Kind.needsHead(), "the pull request's head branch"},
		{ev.BaseRef == "" && ev.Kind.needsHead(), "the pull request's base branch"},
		{ev.DefaultBranch == "" && ev.Kind == KindMerged, "the repository's default branch"},
		{ev.CommentID <= 0 && ev.Kind == KindComment, "the comment's id"},
	}
	for _, n := range need {
		if n.missing {
			return fmt.Errorf("the %s delivery lacks %s, which Switchtender needs", ev.Kind, n.what)
		}
	}
	return nil
}

// needsHead reports whether a Kind acts on the pull request's head: a
// plan of it (opened, pushed) or the apply a merge proposes.
func (k Kind) needsHead() bool {
	return k == KindOpened || k == KindPushed || k == KindMerged
}

// checkSHAs refuses a head, before or merge commit that is not a commit
// id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
func checkSHAs(ev Event) error {
	for _, c := range []struct{ name, sha string }{
		{"head commit", ev.HeadSHA}, {"commit before the push", ev.BeforeSHA}, {"merge commit", ev.MergeSHA},
	} {
		if c.sha != "" && !isCommitID(c.sha) {
			return fmt.Errorf("the %s the delivery names is not 40 or 64 lowercase hex digits", c.name)
		}
	}
	return nil
}

func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

// cutDeliveryText cuts s to at most n bytes, on a rune boundary.
func cutDeliveryText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// The shape Gitea and GitHub share: Gitea's API structs
// (modules/structs/pull.go, repo.go, user.go, issue.go) take GitHub's
// member names. Only what Switchtender reads is declared.
type (
	hubUser struct {
		Login string `json:"login"`
	}
	hubRepo struct {
		ID            int64  `json:"id"`
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	}
	hubBranch struct {
		Ref  string   `json:"ref"`
		SHA  string   `json:"sha"`
		Repo *hubRepo `json:"repo"` // null when the head repository is gone
	}
	hubPull struct {
		Number         int64      `json:"number"`
		User           *hubUser   `json:"user"`
		Head           *hubBranch `json:"head"`
		Base           *hubBranch `json:"base"`
		Merged         bool       `json:"merged"`
		MergeCommitSHA *string    `json:"merge_commit_sha"`
	}
	hubIssue struct {
		Number      int64     `json:"number"`
		User        *hubUser  `json:"user"`
		PullRequest *struct{} `json:"pull_request"` // present when the issue is a pull request
	}
	hubComment struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
	}
	// hubPayload is a pull_request, issue_comment or ping payload.
	hubPayload struct {
		Action      string      `json:"action"`
		Before      string      `json:"before"`
		After       string      `json:"after"`
		PullRequest *hubPull    `json:"pull_request"`
		Issue       *hubIssue   `json:"issue"`
		Comment     *hubComment `json:"comment"`
		IsPull      bool        `json:"is_pull"` // Gitea's comment payloads
		Repository  *hubRepo    `json:"repository"`
		Sender      *hubUser    `json:"sender"`
	}
)

// fillRepository sets the base repository and the sender.
func (p *hubPayload) fillRepository(ev *Event) {
	if p.Repository != nil {
		ev.Repository = p.Repository.FullName
		ev.DefaultBranch = p.Repository.DefaultBranch
	}
	if p.Sender != nil {
		ev.Sender = p.Sender.Login
	}
}

// fillPull sets what a pull request object says: number, author, head,
// base, fork, and the merge commit once merged (GitHub names a test merge
// commit in merge_commit_sha before a merge: it is not kept).
func (pr *hubPull) fillPull(ev *Event) error {
	n, err := prNumber(pr.Number, "pull_request.number")
	if err != nil {
		return err
	}
	ev.Number = n
	if pr.User != nil {
		ev.Author = pr.User.Login
	}
	if pr.Head != nil {
		ev.HeadSHA, ev.HeadRef = pr.Head.SHA, pr.Head.Ref
	}
	if pr.Base != nil {
		ev.BaseRef = pr.Base.Ref
	}
	ev.Fork = pr.isFork()
	if pr.Merged && pr.MergeCommitSHA != nil {
		ev.MergeSHA = *pr.MergeCommitSHA
	}
	return nil
}

// isFork reports whether the head lives in another repository than the
// base: another id or full name, or a head repository the payload does
// not name (deleted, or unknown), which is treated as foreign.
func (pr *hubPull) isFork() bool {
	if pr.Head == nil || pr.Base == nil || pr.Head.Repo == nil || pr.Base.Repo == nil {
		return true
	}
	return pr.Head.Repo.ID != pr.Base.Repo.ID || pr.Head.Repo.FullName != pr.Base.Repo.FullName
}

// fillComment sets a comment's body and id, and the number and author of
// the issue (pull request) it is on.
func (p *hubPayload) fillComment(ev *Event) error {
	if p.Comment == nil {
		return errors.New("the comment delivery has no comment object")
	}
	ev.Comment, ev.CommentID = p.Comment.Body, p.Comment.ID
	if p.Issue == nil {
		return errors.New("the comment delivery has no issue object")
	}
	n, err := prNumber(p.Issue.Number, "issue.number")
	if err != nil {
		return err
	}
	ev.Number = n
	if p.Issue.User != nil {
		ev.Author = p.Issue.User.Login
	}
	return nil
}
