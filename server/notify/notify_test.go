package notify

import (
	"testing"

	"github.com/switchtender/switchtender/store"
)

// Which status change is which event, and the summary says what happened
// with names and counts only.
func TestNotifyEventOf(t *testing.T) {
	drifted := store.Run{ID: "9", Kind: "check", Template: "net", Requester: "schedule",
		Check: &store.Check{Drifted: true, Drift: []store.ResourceDiff{{Address: "a"}}, Plan: &store.Proposal{Digest: "sha256:d", Change: 1}}}
	cases := []struct {
		r        store.Run
		from, to store.Status
		want     string
	}{
		{store.Run{Kind: "apply"}, store.StatusRunning, store.StatusAwaitingApproval, "awaiting_approval"},
		{store.Run{Kind: "apply"}, "", store.StatusAwaitingApproval, "awaiting_approval"},
		{store.Run{Kind: "apply"}, store.StatusAwaitingApproval, store.StatusQueued, "approved"},
		{store.Run{Kind: "apply"}, "", store.StatusQueued, ""},
		{store.Run{Kind: "apply"}, store.StatusAwaitingApproval, store.StatusRejected, "rejected"},
		{store.Run{Kind: "apply"}, store.StatusRunning, store.StatusSucceeded, "applied"},
		{store.Run{Kind: "reconcile"}, store.StatusRunning, store.StatusSucceeded, "applied"},
		{store.Run{Kind: "plan"}, store.StatusRunning, store.StatusSucceeded, ""},
		{store.Run{Kind: "check"}, store.StatusRunning, store.StatusSucceeded, ""},
		{drifted, store.StatusRunning, store.StatusSucceeded, "drift"},
		{store.Run{Kind: "apply"}, store.StatusRunning, store.StatusFailed, "failed"},
		{store.Run{Kind: "apply"}, store.StatusRunning, store.StatusRefused, "failed"},
		{store.Run{Kind: "apply"}, store.StatusRunning, store.StatusInterrupted, "failed"},
		{store.Run{Kind: "apply"}, store.StatusAwaitingApproval, store.StatusStale, "stale"},
		{store.Run{Kind: "apply"}, store.StatusAwaitingApproval, store.StatusCancelled, ""},
	}
	for _, tc := range cases {
		if got := EventOf(tc.r, tc.from, tc.to); got != tc.want {
			t.Errorf("%s %s→%s: %q, want %q", tc.r.Kind, tc.from, tc.to, got, tc.want)
		}
	}
	p := PayloadOf(drifted, "drift")
	if p.Summary != "run 9 (check of net by schedule) found drift: 1 changed outside OpenTofu; plan: 0 to add, 1 to change, 0 to destroy" || p.Digest != "sha256:d" {
		t.Errorf("drift payload %+v", p)
	}
}
