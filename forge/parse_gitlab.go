package forge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// gitlabDeliveryIDs are the headers the delivery id is read from, first
// present first: webhook-id (the Standard Webhooks id, signed when
// webhook-signature is sent), Idempotency-Key (GitLab 17.4 and later; the
// same on every retry of one event), X-Gitlab-Webhook-UUID (one per
// request), X-Gitlab-Event-UUID (GitLab's recursion-detection id, shared
// by the deliveries one request or job causes: the last resort, for old
// GitLab). See GitLab's app/services/web_hook_service.rb, build_headers.
var gitlabDeliveryIDs = []string{"Webhook-Id", "Idempotency-Key", "X-Gitlab-Webhook-Uuid", "X-Gitlab-Event-Uuid"}

// readGitLab reads a GitLab delivery (docs.gitlab.com,
// user/project/integrations/webhook_events, "Merge request events" and
// "Comment events"):
//
//   - the delivery id is the first of gitlabDeliveryIDs present (a
//     webhook-id and an Idempotency-Key that differ are refused: GitLab
//     sends the same value); X-Gitlab-Event is the event, and object_kind
//     must agree with it;
//   - "Merge Request Hook": object_attributes.action open or reopen is
//     KindOpened; update with object_attributes.oldrev (sent only when
//     commits were pushed) KindPushed, oldrev its BeforeSHA; merge
//     KindMerged; close KindClosed; other actions (update without new
//     commits, approved, approval, ...) KindIgnored. An open whose
//     object_attributes.state is not "opened" is KindPing: GitLab's "Test"
//     button sends its newest merge request as action open whatever its
//     state (app/services/test_hooks/project_service.rb);
//   - "Note Hook": object_attributes.noteable_type MergeRequest, action
//     create (or none, before GitLab 16.11), not a system note, is
//     KindComment, with the head, branches and fork read from
//     merge_request; other notes, and edits, are KindIgnored;
//   - every other event is KindIgnored.
//
// Repository is project.path_with_namespace, Number the iid, HeadSHA
// last_commit.id, HeadRef source_branch, BaseRef target_branch,
// DefaultBranch project.default_branch, Sender user.username, Fork a
// source_project_id other than target_project_id (or none). GitLab's
// payloads name the author only by author_id: Author is user.username when
// the acting user is the author (user.id = author_id), else "".
// merge_commit_sha is null after a fast-forward merge or a squash: then
// MergeSHA is "" and the receiver asks the forge.
func readGitLab(h http.Header, body []byte) (Event, error) {
	ev, err := deliveryHeaders(h, gitlabDeliveryIDs, []string{"X-Gitlab-Event"})
	if err != nil {
		return Event{}, err
	}
	if err := sameWebhookID(h); err != nil {
		return Event{}, err
	}
	var p glPayload
	if err := decodeDelivery(body, &p); err != nil {
		return Event{}, err
	}
	p.fill(&ev)
	switch ev.Event {
	case "Merge Request Hook":
		err = gitlabMergeRequest(&ev, &p)
	case "Note Hook":
		err = gitlabNote(&ev, &p)
	default:
		ev.Kind = KindIgnored
	}
	return ev, err
}

// GitLab's payload members Switchtender reads (lib/gitlab/hook_data/
// merge_request_builder.rb, note_builder.rb; Project#hook_attrs).
type (
	glUser struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	}
	glProject struct {
		PathWithNamespace string `json:"path_with_namespace"`
		DefaultBranch     string `json:"default_branch"`
	}
	glMergeRequest struct {
		IID             int64  `json:"iid"`
		Action          string `json:"action"`
		State           string `json:"state"`
		Oldrev          string `json:"oldrev"`
		SourceBranch    string `json:"source_branch"`
		TargetBranch    string `json:"target_branch"`
		SourceProjectID *int64 `json:"source_project_id"`
		TargetProjectID *int64 `json:"target_project_id"`
		AuthorID        int64  `json:"author_id"`
		MergeCommitSHA  string `json:"merge_commit_sha"`
		LastCommit      *struct {
			ID string `json:"id"`
		} `json:"last_commit"`
	}
	glNote struct {
		ID           int64  `json:"id"`
		Note         string `json:"note"`
		NoteableType string `json:"noteable_type"`
		Action       string `json:"action"`
		System       bool   `json:"system"`
	}
	glPayload struct {
		ObjectKind       string          `json:"object_kind"`
		User             *glUser         `json:"user"`
		Project          *glProject      `json:"project"`
		ObjectAttributes json.RawMessage `json:"object_attributes"`
		MergeRequest     *glMergeRequest `json:"merge_request"`
	}
)

func (p *glPayload) fill(ev *Event) {
	if p.Project != nil {
		ev.Repository = p.Project.PathWithNamespace
		ev.DefaultBranch = p.Project.DefaultBranch
	}
	if p.User != nil {
		ev.Sender = p.User.Username
	}
}

// sameWebhookID refuses a webhook-id and an Idempotency-Key that differ.
func sameWebhookID(h http.Header) error {
	id, err := oneDeliveryHeader(h, "Webhook-Id")
	if err != nil {
		return err
	}
	key, err := oneDeliveryHeader(h, "Idempotency-Key")
	if err != nil {
		return err
	}
	if id != "" && key != "" && id != key {
		return errors.New("the delivery's webhook-id and Idempotency-Key differ; GitLab sends one id in both")
	}
	return nil
}

func gitlabMergeRequest(ev *Event, p *glPayload) error {
	if p.ObjectKind != "merge_request" {
		return fmt.Errorf("the Merge Request Hook delivery's object_kind is %s, not merge_request", quoteMemberName(p.ObjectKind))
	}
	var mr glMergeRequest
	if err := decodeAttributes(p.ObjectAttributes, &mr); err != nil {
		return err
	}
	ev.Action = mr.Action
	if err := mr.fill(ev, p.User, "object_attributes.iid"); err != nil {
		return err
	}
	ev.Kind = mr.kind()
	switch ev.Kind {
	case KindPushed:
		ev.BeforeSHA = mr.Oldrev
	case KindMerged:
		ev.MergeSHA = mr.MergeCommitSHA
	}
	return nil
}

func (mr *glMergeRequest) kind() Kind {
	switch mr.Action {
	case "open", "reopen":
		if mr.State != "" && mr.State != "opened" {
			return KindPing
		}
		return KindOpened
	case "update":
		if mr.Oldrev != "" {
			return KindPushed
		}
	case "merge":
		return KindMerged
	case "close":
		return KindClosed
	}
	return KindIgnored
}

func gitlabNote(ev *Event, p *glPayload) error {
	if p.ObjectKind != "note" {
		return fmt.Errorf("the Note Hook delivery's object_kind is %s, not note", quoteMemberName(p.ObjectKind))
	}
	var note glNote
	if err := decodeAttributes(p.ObjectAttributes, &note); err != nil {
		return err
	}
	ev.Action = note.Action
	if note.NoteableType != "MergeRequest" || note.System || (note.Action != "create" && note.Action != "") {
		ev.Kind = KindIgnored
		return nil
	}
	if p.MergeRequest == nil {
		return errors.New("the merge request comment delivery has no merge_request object")
	}
	ev.Kind = KindComment
	ev.Comment, ev.CommentID = note.Note, note.ID
	return p.MergeRequest.fill(ev, p.User, "merge_request.iid")
}

// fill sets what a merge request object says.
func (mr *glMergeRequest) fill(ev *Event, actor *glUser, iidField string) error {
	n, err := prNumber(mr.IID, iidField)
	if err != nil {
		return err
	}
	ev.Number = n
	ev.HeadRef, ev.BaseRef = mr.SourceBranch, mr.TargetBranch
	if mr.LastCommit != nil {
		ev.HeadSHA = mr.LastCommit.ID
	}
	ev.Fork = mr.SourceProjectID == nil || mr.TargetProjectID == nil || *mr.SourceProjectID != *mr.TargetProjectID
	if actor != nil && actor.ID != 0 && actor.ID == mr.AuthorID {
		ev.Author = actor.Username
	}
	return nil
}

// decodeAttributes reads object_attributes, which must be an object.
func decodeAttributes(raw json.RawMessage, v any) error {
	if len(raw) == 0 || raw[0] != '{' {
		return errors.New("the delivery's object_attributes is not an object")
	}
	if err := decodeDelivery(raw, v); err != nil {
		return fmt.Errorf("in object_attributes, %w", err)
	}
	return nil
}
