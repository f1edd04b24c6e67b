package forge

import (
	"net/http"
	"testing"
)

// TestAPendingStatusOverAPendingOneIsDoneOnGitLab guards SetStatus against
// GitLab's refusal to move a pending or running status to pending (400
// "Cannot transition status via :enqueue"): that status already says
// pending, so it is no error. Any other refusal still is one.
func TestAPendingStatusOverAPendingOneIsDoneOnGitLab(t *testing.T) {
	t.Parallel()
	const path = "/api/v4/projects/octocat%2FHello-World/statuses/" + headSHA
	enqueue := `{"message":"Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via \"enqueue\")"}`
	other := `{"message":"Cannot transition status via :drop from :failed (Reason(s): Status cannot transition via \"drop\")"}`
	cases := []struct {
		name    string
		state   State
		answer  string
		refused bool
	}{
		{"pending over pending", StatePending, enqueue, false},
		{"failure over failure", StateFailure, other, true},
		{"pending refused for another reason", StatePending, other, true},
	}
	for _, tc := range cases {
		f := newFakeForge(t, "PRIVATE-TOKEN", []route{{method: "POST", path: path, status: http.StatusBadRequest, body: tc.answer}})
		c, err := NewGitLab(f.srv.URL, testToken, f.srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		err = c.SetStatus(t.Context(), testRepo, headSHA, Status{Context: "switchtender/plan/network", State: tc.state})
		if (err != nil) != tc.refused {
			t.Errorf("%s: SetStatus = %v, want refused %v", tc.name, err, tc.refused)
		}
		if calls := f.callsTo("POST " + path); len(calls) != 1 {
			t.Errorf("%s: %d posts, want 1 (a POST is never retried)", tc.name, len(calls))
		}
	}
}
