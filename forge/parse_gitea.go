package forge

import (
	"errors"
	"net/http"
)

// readGitea reads a Gitea delivery as Gitea v1.27 sends it (headers:
// services/webhook/deliver.go, addDefaultHeaders; payloads:
// services/webhook/notifier.go filling modules/structs/hook.go):
//
//   - X-Gitea-Delivery is the delivery id (the hook task's UUID);
//     X-Gitea-Event-Type the event ("pull_request", "pull_request_sync",
//     "pull_request_comment", "issue_comment", "push", ...), or when it is
//     absent (Gitea before 1.19) X-Gitea-Event, which names a sync
//     "pull_request" and a pull request comment "issue_comment";
//   - "pull_request" and "pull_request_sync": action opened or reopened
//     is KindOpened; synchronized KindPushed, its before and after the
//     head before and after the push (PullRequestSynchronized); closed is
//     KindMerged when pull_request.merged, else KindClosed; other actions
//     (edited, label_updated, assigned, ...) and the other pull_request_*
//     events (label, milestone, review, assign) are KindIgnored;
//   - "pull_request_comment" and "issue_comment": action created on a pull
//     request (is_pull, with pull_request set) is KindComment, with the
//     pull request's head, branches and fork read from pull_request; on a
//     plain issue, or edited or deleted, KindIgnored;
//   - "push" whose before equals its after is KindPing: Gitea's "Test
//     delivery" (routers/web/repo/setting/webhook.go TestWebhook, and the
//     API's POST /repos/{owner}/{repo}/hooks/{id}/tests) sends a push of
//     one commit onto itself, which a real push never is; other pushes and
//     every other event are KindIgnored.
func readGitea(h http.Header, body []byte) (Event, error) {
	ev, err := deliveryHeaders(h, []string{"X-Gitea-Delivery"}, []string{"X-Gitea-Event-Type", "X-Gitea-Event"})
	if err != nil {
		return Event{}, err
	}
	var p hubPayload
	if err := decodeDelivery(body, &p); err != nil {
		return Event{}, err
	}
	ev.Action = p.Action
	p.fillRepository(&ev)
	switch ev.Event {
	case "pull_request", "pull_request_sync":
		err = giteaPullRequest(&ev, &p)
	case "pull_request_comment", "issue_comment":
		err = giteaComment(&ev, &p)
	case "push":
		ev.Kind = KindIgnored
		if p.Before != "" && p.Before == p.After {
			ev.Kind = KindPing
		}
	default:
		ev.Kind = KindIgnored
	}
	return ev, err
}

func giteaPullRequest(ev *Event, p *hubPayload) error {
	if p.PullRequest == nil {
		return errors.New("the pull request delivery has no pull_request object")
	}
	if err := p.PullRequest.fillPull(ev); err != nil {
		return err
	}
	switch p.Action {
	case "opened", "reopened":
		ev.Kind = KindOpened
	case "synchronized":
		ev.Kind = KindPushed
		ev.BeforeSHA = p.Before
		if p.After != "" {
			ev.HeadSHA = p.After
		}
	case "closed":
		ev.Kind = closedKind(p.PullRequest.Merged)
	default:
		ev.Kind = KindIgnored
	}
	return nil
}

func giteaComment(ev *Event, p *hubPayload) error {
	if p.Action != "created" || !p.IsPull {
		ev.Kind = KindIgnored
		return nil
	}
	if p.PullRequest == nil {
		return errors.New("the comment delivery says is_pull but has no pull_request object")
	}
	ev.Kind = KindComment
	if err := p.PullRequest.fillPull(ev); err != nil {
		return err
	}
	return p.fillComment(ev)
}
