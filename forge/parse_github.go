package forge

import (
	"errors"
	"net/http"
)

// readGitHub reads a GitHub delivery (docs.github.com, "Webhook events
// and payloads"; the payloads follow octokit/webhooks' recorded examples):
//
//   - X-GitHub-Delivery is the delivery id (a GUID), X-GitHub-Event the
//     event;
//   - "ping" (sent when a webhook is created) is KindPing;
//   - "pull_request": action opened or reopened is KindOpened,
//     synchronize KindPushed (its before and after are the head before
//     and after the push), closed KindMerged when pull_request.merged,
//     else KindClosed; other actions are KindIgnored;
//   - "issue_comment": action created on an issue that is a pull request
//     (issue.pull_request is present) is KindComment; on a plain issue, or
//     edited or deleted, KindIgnored. GitHub's comment payload names
//     neither the head commit, the branches nor the head repository: the
//     Event's HeadSHA, HeadRef and BaseRef are empty and Fork is true (a
//     head repository not named is treated as foreign), so the receiver
//     looks the pull request up (Client.OpenPullRequests) before acting;
//   - every other event is KindIgnored.
func readGitHub(h http.Header, body []byte) (Event, error) {
	ev, err := deliveryHeaders(h, []string{"X-GitHub-Delivery"}, []string{"X-GitHub-Event"})
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
	case "ping":
		ev.Kind = KindPing
	case "pull_request":
		err = githubPullRequest(&ev, &p)
	case "issue_comment":
		err = githubComment(&ev, &p)
	default:
		ev.Kind = KindIgnored
	}
	return ev, err
}

func githubPullRequest(ev *Event, p *hubPayload) error {
	if p.PullRequest == nil {
		return errors.New("the pull_request delivery has no pull_request object")
	}
	if err := p.PullRequest.fillPull(ev); err != nil {
		return err
	}
	switch p.Action {
	case "opened", "reopened":
		ev.Kind = KindOpened
	case "synchronize":
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

func githubComment(ev *Event, p *hubPayload) error {
	if p.Action != "created" || p.Issue == nil || p.Issue.PullRequest == nil {
		ev.Kind = KindIgnored
		return nil
	}
	ev.Kind = KindComment
	ev.Fork = true
	return p.fillComment(ev)
}

// closedKind is a closed pull request's Kind: merged or closed unmerged.
func closedKind(merged bool) Kind {
	if merged {
		return KindMerged
	}
	return KindClosed
}
