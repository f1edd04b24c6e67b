package testkit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// GiteaDelivery is one webhook request Gitea made, as received: every
// header and the body's exact bytes.
type GiteaDelivery struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
}

// Event is X-Gitea-Event, the event's family ("pull_request",
// "issue_comment", "push", ...).
func (d GiteaDelivery) Event() string { return d.Header.Get("X-Gitea-Event") }

// EventType is X-Gitea-Event-Type, the precise event ("pull_request",
// "pull_request_sync", "pull_request_comment", ...).
func (d GiteaDelivery) EventType() string { return d.Header.Get("X-Gitea-Event-Type") }

// SignedWith reports whether X-Gitea-Signature is the hex HMAC-SHA256 of
// the body under secret.
func (d GiteaDelivery) SignedWith(secret string) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(d.Body)
	want := hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(d.Header.Get("X-Gitea-Signature")), []byte(want))
}

// GiteaPayload is what the tests read of a pull request or comment
// delivery's body.
type GiteaPayload struct {
	Action      string    `json:"action"` // "opened", "synchronized", "closed", "created", ...
	Number      int       `json:"number"` // pull request events
	Before      string    `json:"before"` // pull_request_sync: the head before the push
	After       string    `json:"after"`  // pull_request_sync: the head after it
	PullRequest *struct { // pull request events, and comments on one
		Number         int        `json:"number"`
		Merged         bool       `json:"merged"`
		MergeCommitSHA string     `json:"merge_commit_sha"`
		Head           GiteaPRRef `json:"head"`
		Base           GiteaPRRef `json:"base"`
	} `json:"pull_request"`
	Issue *struct {
		Number int `json:"number"`
	} `json:"issue"` // comment events
	Comment *GiteaComment `json:"comment"` // comment events
	IsPull  bool          `json:"is_pull"` // comment events: the issue is a pull request
	Sender  GiteaLogin    `json:"sender"`
}

// Payload decodes the body as a GiteaPayload; a body that is not one
// yields the zero GiteaPayload.
func (d GiteaDelivery) Payload() GiteaPayload {
	var p GiteaPayload
	json.Unmarshal(d.Body, &p)
	return p
}

func (d GiteaDelivery) String() string {
	p := d.Payload()
	return fmt.Sprintf("%s/%s action=%q number=%d (%d bytes)", d.Event(), d.EventType(), p.Action, p.Number, len(d.Body))
}

// GiteaDeliveries records every webhook request Gitea makes to it: an
// httptest server on 127.0.0.1 answering 200 with no body, closed when
// the test ends. Point a webhook at URL (any path under it).
type GiteaDeliveries struct {
	URL string
	t   testing.TB
	mu  sync.Mutex
	got []GiteaDelivery
}

// RecordGiteaDeliveries starts a GiteaDeliveries.
func RecordGiteaDeliveries(t testing.TB) *GiteaDeliveries {
	r := &GiteaDeliveries{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, GiteaDelivery{req.URL.Path, req.Header.Clone(), body, time.Now()})
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// All returns the deliveries received so far, in order of arrival.
func (r *GiteaDeliveries) All() []GiteaDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]GiteaDelivery(nil), r.got...)
}

// WaitFor returns the first delivery that matches, waiting up to a minute
// for it (Gitea delivers from a queue, seconds late and not always in
// order), or fails the test naming what it waited for and what came.
func (r *GiteaDeliveries) WaitFor(what string, match func(GiteaDelivery) bool) GiteaDelivery {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := r.All()
		for _, d := range got {
			if match(d) {
				return d
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no delivery of %s within a minute; received %d: %v", what, len(got), got)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// GiteaPREvent matches a delivery of event type eventType (X-Gitea-Event-Type)
// with action about pull request n.
func GiteaPREvent(eventType, action string, n int) func(GiteaDelivery) bool {
	return func(d GiteaDelivery) bool {
		p := d.Payload()
		return d.EventType() == eventType && p.Action == action && p.Number == n
	}
}
