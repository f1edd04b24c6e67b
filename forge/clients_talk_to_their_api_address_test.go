package forge

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// addressRecorder is an http.RoundTripper that records the URL of every
// request and answers each with a user, as GET /user of any forge would.
type addressRecorder struct {
	mu   sync.Mutex
	urls []string
}

func (a *addressRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	a.urls = append(a.urls, r.URL.String())
	a.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"id":42,"login":"switchtender-bot","username":"switchtender-bot"}`)),
		Request:    r,
	}, nil
}

func (a *addressRecorder) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.urls...)
}

// TestEachClientTalksToItsForgesAPIAddressAndNothingBeforeAsked guards
// where each Client sends its calls (the public GitHub and GitLab for an
// empty base URL, /api/v3, /api/v4 and /api/v1 under a server of one's
// own) and that building a Client sends nothing.
func TestEachClientTalksToItsForgesAPIAddressAndNothingBeforeAsked(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ  Type
		base string
		want string
	}{
		{GitHub, "", "https://api.github.com/user"},
		{GitHub, "https://api.github.com/", "https://api.github.com/user"},
		{GitHub, "https://github.example.com", "https://github.example.com/api/v3/user"},
		{GitLab, "", "https://gitlab.com/api/v4/user"},
		{GitLab, "https://example.com/gitlab", "https://example.com/gitlab/api/v4/user"},
		{Gitea, "https://gitea.example.com/", "https://gitea.example.com/api/v1/user"},
		{Gitea, "https://example.com/gitea", "https://example.com/gitea/api/v1/user"},
	}
	for _, tc := range cases {
		rec := &addressRecorder{}
		c, err := New(tc.typ, tc.base, testToken, &http.Client{Transport: rec})
		if err != nil {
			t.Fatalf("New(%s, %q): %v", tc.typ, tc.base, err)
		}
		if seen := rec.seen(); len(seen) != 0 {
			t.Errorf("New(%s, %q) sent %v before being asked anything", tc.typ, tc.base, seen)
		}
		if login, err := c.Self(t.Context()); err != nil || login != testSelf {
			t.Errorf("%s at %q: Self = %q, %v", tc.typ, tc.base, login, err)
		}
		if seen := rec.seen(); len(seen) != 1 || seen[0] != tc.want {
			t.Errorf("%s at %q asked %v, want [%s]", tc.typ, tc.base, seen, tc.want)
		}
	}
}
