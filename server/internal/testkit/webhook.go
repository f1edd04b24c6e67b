package testkit

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Receiver is a webhook receiver for tests: an http.Handler that records
// every request. Set Hold, Code or Huge before serving.
type Receiver struct {
	mu   sync.Mutex
	got  []Received
	Hold chan struct{} // when non-nil, handlers block until it closes
	Code int           // answer status; 0 means 200
	Huge bool          // answer with a body far larger than anyone should read
}

// Received is one request a Receiver got.
type Received struct {
	Path, Event, Sig string
	Body             []byte
}

// ServeHTTP records r and answers as the Receiver is set to.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, Received{r.URL.Path, r.Header.Get("X-Switchtender-Event"), r.Header.Get("X-Switchtender-Signature"), body})
	hold, code, huge := rc.Hold, rc.Code, rc.Huge
	rc.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
		return
	}
	if code != 0 {
		w.WriteHeader(code)
	}
	if huge {
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 256 { // 256 MiB unless the reader hangs up
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// Requests returns what was received so far.
func (rc *Receiver) Requests() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// WaitFor polls until cond holds of the requests received (returning
// them), or fails t after 30 s.
func (rc *Receiver) WaitFor(t testing.TB, what string, cond func([]Received) bool) []Received {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := rc.Requests()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; received %d requests: %+v", what, len(got), got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
