package scenario

// Helpers that build a checkout with a branch and plan it as a pull request.

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

// stateServer records each request's method, path and basic auth.
func stateServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" auth="+u+":"+p)
		mu.Unlock()
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, got...) }
}

// httpStatePRConfig is a pull-request template on the control node's own
// queue whose credential authenticates an http state backend.
const httpStatePRConfig = `
credential "state13d" {
  env = { TF_HTTP_USERNAME = "switchtender", TF_HTTP_PASSWORD = "state-password-13d" }
}
template "pr13d" {
  project     = "infra"
  command     = "infra/pr13d"
  credentials = ["state13d"]
}
`

// planBranch starts a control node whose checkout's infra/pr13d holds
// main (on branch main) and a branch "pr" that writes branch over it, and
// plans the branch as a pull request.
func planBranch(t *testing.T, main, branch map[string]string) api.RunView {
	t.Helper()
	return planBranchWith(t, main, func(h *harness, wd string) { testkit.WriteFiles(t, wd, branch) })
}

// planBranchWith is planBranch with the branch's change made by change
// (in the checkout, on branch pr; everything it leaves is committed).
func planBranchWith(t *testing.T, main map[string]string, change func(h *harness, wd string)) api.RunView {
	t.Helper()
	h := writeHarness(t, "", httpStatePRConfig)
	wd := filepath.Join(h.project, "infra/pr13d")
	testkit.WriteFiles(t, wd, main)
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	change(h, wd)
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	return h.launchWait("alice", "pr13d", "--dry-run", "--ref", "pr")
}

// httpBackend is an http backend whose address is expr.
func httpBackend(expr string) string {
	return "terraform {\n  backend \"http\" {\n    address = " + expr + "\n  }\n}\n"
}

// planBranchOf plans, as a pull request of template pr13f, a branch that
// adds branch's files to a clean working directory.
func planBranchOf(t *testing.T, branch func(h *harness) map[string]string) (*harness, api.RunView) {
	t.Helper()
	h := writeHarness(t, "", fileReadingPRConfig)
	wd := filepath.Join(h.project, "infra/pr13f")
	testkit.WriteFiles(t, wd, map[string]string{"main.tf": testkit.PlainResource})
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	testkit.WriteFiles(t, wd, branch(h))
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	return h, h.launchWait("alice", "pr13f", "--dry-run", "--ref", "pr")
}
