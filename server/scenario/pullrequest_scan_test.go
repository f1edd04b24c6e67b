package scenario

// A pull request's plan is scanned first: whatever in the branch would run a
// program (a provider it ships, a kubeconfig exec, a module reading remote
// state) is refused before any tofu plan starts.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// Same as above with no .terraform at all: OpenTofu's implied local mirror
// terraform.d/plugins in the working directory. A pull request ships the
// provider binary and its plan runs it: "a plan that would run code" is
// planned without a person.
func TestAPullRequestNeverRunsAProviderFromItsImpliedMirror(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	marker := filepath.Join(h.dir, "mirror-ran")
	h.git("checkout", "-q", "-b", "mirror")
	wd := filepath.Join(h.project, "infra/data")
	pkg := filepath.Join(wd, "terraform.d/plugins/registry.opentofu.org/hashicorp/null/3.2.2/linux_amd64")
	hash := testkit.WriteFakeProvider(t, pkg, marker)
	os.WriteFile(filepath.Join(wd, "prov.tf"), []byte(testkit.NullProviderConfig), 0o644)
	os.WriteFile(filepath.Join(wd, ".terraform.lock.hcl"), []byte(testkit.LockFor(hash)), 0o644)
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "mirror")
	h.git("checkout", "-q", "main")
	os.RemoveAll(filepath.Join(wd, "terraform.d"))

	v := h.launchWait("alice", "data", "--dry-run", "--ref", "mirror")
	log := h.mustSSH("bob", "log", v.ID)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the pull request's shipped provider ran during its plan: %s (%s), steps %v\n%s", v.Status, v.Message, stepNames(v), log)
	}
}

// Promise (docs/pull-requests.md): a pull request's plan is scanned
// first, and a plan "that would run code" is refused, no tofu plan starts.
// Once, a branch's terraform_remote_state with backend "kubernetes" and a
// committed kubeconfig ran the kubeconfig's exec plugin during the plan,
// unheld, because the scan did not know that data source could run a program.
func TestAPullRequestNeverRunsARemoteStatesKubeconfigExec(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	marker := filepath.Join(h.dir, "kube-exec-ran")
	h.git("checkout", "-q", "-b", "kube")
	os.WriteFile(filepath.Join(h.project, "infra/data/kc.yaml"), []byte(testkit.KubeconfigExec(marker)), 0o644)
	os.WriteFile(filepath.Join(h.project, "infra/data/remote.tf"), []byte(testkit.RemoteStateKube), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "kube")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "kube")
	if _, err := os.Stat(marker); err == nil {
		env, _ := os.ReadFile(marker)
		t.Fatalf("a pull request's plan ran the program its kubeconfig names (%s: %s; findings %+v); it saw %d bytes of the server's run environment",
			v.Status, v.Message, v.Findings, len(env))
	}
}

// The branch's own backend: terraform { backend "kubernetes" { config_path =
// "./kc.yaml" } } in a pull request. `tofu init` in the private tree
// configures the backend and lists its workspaces, which runs the
// kubeconfig's exec plugin before any plan; the scan reads no backend
// (scan/blocks.go terraformSchema has only "encryption").
func TestAPullRequestNeverRunsItsBackendsKubeconfigExec(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	marker := filepath.Join(h.dir, "kube-backend-ran")
	h.git("checkout", "-q", "-b", "kubebe")
	os.WriteFile(filepath.Join(h.project, "infra/data/kc.yaml"), []byte(testkit.KubeconfigExec(marker)), 0o644)
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte("terraform {\n  backend \"kubernetes\" {\n    config_path   = \"./kc.yaml\"\n    secret_suffix = \"x\"\n  }\n}\n"), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "kube backend")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "kubebe")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("a pull request's init ran the program its backend's kubeconfig names (%s: %s; steps %v)", v.Status, v.Message, stepNames(v))
	}
}

// A pull request's branch that calls a module from a git repository (fetched
// by the scan's `tofu get`), whose only file reads a remote state, is refused
// with the finding; nothing plans.
func TestAPullRequestsGitModuleReadingRemoteStateIsRefused(t *testing.T) {
	t.Parallel()
	var repo string
	_, v := planBranchOf(t, func(h *harness) map[string]string {
		repo = filepath.Join(h.dir, "modrepo")
		testkit.WriteFiles(t, repo, map[string]string{"main.tf": testkit.HTTPRemoteState("http://127.0.0.1:1/state")})
		git := testkit.GitIn(t, repo)
		git("init", "-q", "-b", "main")
		git("add", "-A")
		git("commit", "-q", "-m", "module")
		return map[string]string{"mod.tf": "module \"m\" {\n  source = \"git::file://" + repo + "\"\n}\n"}
	})
	t.Logf("%s: %s; steps %v; findings %+v", v.Status, v.Message, stepNames(v), v.Findings)
	if v.Run.Status != store.StatusRefused || !strings.Contains(v.Message, "terraform_remote_state") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a branch's git module reading a remote state: %s: %s", v.Status, v.Message)
	}
}
