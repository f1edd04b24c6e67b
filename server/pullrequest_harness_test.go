package server

// Helpers that build a checkout with a branch and plan it as a pull request.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// kubeconfigExec is a kubeconfig whose user runs sh (touching marker) for
// its credentials: client-go runs an exec credential plugin when it first
// talks to the cluster.
func kubeconfigExec(marker string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: sh
      args: ["-c", "env > %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\"}}'"]
      interactiveMode: Never
`, marker)
}

const remoteStateKube = `data "terraform_remote_state" "k" {
  backend = "kubernetes"
  config = {
    config_path   = "./kc.yaml"
    secret_suffix = "x"
  }
}
`

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

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testkit.WriteFiles(t, dir, files)
}

// planBranch starts a control node whose checkout's infra/pr13d holds
// main (on branch main) and a branch "pr" that writes branch over it, and
// plans the branch as a pull request.
func planBranch(t *testing.T, main, branch map[string]string) runView {
	t.Helper()
	return planBranchWith(t, main, func(h *harness, wd string) { writeFiles(t, wd, branch) })
}

// planBranchWith is planBranch with the branch's change made by change
// (in the checkout, on branch pr; everything it leaves is committed).
func planBranchWith(t *testing.T, main map[string]string, change func(h *harness, wd string)) runView {
	t.Helper()
	h := writeHarness(t, "", httpStatePRConfig)
	wd := filepath.Join(h.project, "infra/pr13d")
	writeFiles(t, wd, main)
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

const plainResource = "resource \"terraform_data\" \"x\" {\n  input = \"x\"\n}\n"

// httpRemoteState is a data source reading another state over http
// at addr, with no credentials of its own.
func httpRemoteState(addr string) string {
	return "data \"terraform_remote_state\" \"peek\" {\n  backend = \"http\"\n  config = {\n    address = \"" + addr + "\"\n  }\n}\n"
}

// planBranchOf plans, as a pull request of template pr13f, a branch that
// adds branch's files to a clean working directory.
func planBranchOf(t *testing.T, branch func(h *harness) map[string]string) (*harness, runView) {
	t.Helper()
	h := writeHarness(t, "", fileReadingPRConfig)
	wd := filepath.Join(h.project, "infra/pr13f")
	writeFiles(t, wd, map[string]string{"main.tf": plainResource})
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	writeFiles(t, wd, branch(h))
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	return h, h.launchWait("alice", "pr13f", "--dry-run", "--ref", "pr")
}
