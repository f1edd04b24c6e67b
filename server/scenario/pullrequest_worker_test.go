package scenario

// Pull-request plans on a relay worker keep the promises they keep on the
// control node: the ref recorded, the backend pinned, and nothing written
// outside the run's private directory.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// Promise (spec: "The worker reports the commit of its checkout that it ran";
// a pull request's plan records the ref and the commit it planned, and rerun
// plans its ref again). Once, a pull request's plan on a worker that ended
// before its export finished had its recorded commit replaced by the worker's
// checkout HEAD, so show named the wrong commit and rerun planned the
// checkout.
func TestAPullRequestEndedBeforeItsExportKeepsItsRef(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	git := testkit.GitIn(t, checkout)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "be")
	testkit.WriteFile(t, filepath.Join(checkout, "infra/data/backend.tf"), "terraform {\n  backend \"local\" {\n    path = \"/tmp/pr-on-worker-elsewhere.tfstate\"\n  }\n}\n")
	git("add", "-A")
	git("commit", "-q", "-m", "another backend")
	git("checkout", "-q", "main")
	head, be := git("rev-parse", "HEAD"), git("rev-parse", "be")
	startWorker(t, w1)

	v := h.launchWait("alice", "rpr", "--dry-run", "--ref", "be")
	if v.Run.Status != store.StatusRefused || !strings.Contains(v.Message, "backend") {
		t.Fatalf("a branch changing the backend: %s: %s", v.Status, v.Message)
	}
	if v.Commit == nil || v.Commit.Ref != "be" || v.Commit.SHA != be {
		t.Errorf("the refused pull request's plan records commit %+v, not ref be at %s (the worker's HEAD is %s)", v.Commit, be, head)
	}
	v = h.launchWait("alice", "rpr", "--dry-run", "--ref", "no-such-branch")
	if v.Run.Status != store.StatusFailed {
		t.Fatalf("a ref the worker lacks: %s: %s", v.Status, v.Message)
	}
	if v.Commit == nil || v.Commit.Ref != "no-such-branch" || v.Commit.SHA == head {
		t.Errorf("a pull request's plan of a ref nobody holds records commit %+v (the worker's HEAD is %s)", v.Commit, head)
	}
	out, _, _ := h.ssh("alice", "rerun", v.ID, "--wait", "--json")
	if strings.Contains(out, `"status": "succeeded"`) {
		t.Errorf("rerunning the pull request's plan of no-such-branch planned the worker's checkout instead:\n%.600s", out)
	}
}

// The control node's pull-request attacks, tried against a worker's export
// from its own checkout (pullrequest_tree_test.go, pullrequest_scan_test.go):
// a committed .terraform link out of the tree with a module call (tofu get
// would write through it), a committed lock-info link to a file outside, a
// .gitattributes filter driver the worker's checkout defines, a link in the
// branch that leads the read-only state copy back into the checkout's state
// directory, a kubeconfig exec plugin read by terraform_remote_state, and
// refs git could read as options. None writes outside the run's private
// directory, runs a program, or touches the worker's checkout.
func TestAPullRequestOnAWorkerStaysInItsPrivateDirectory(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, relayScanConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	dir := t.TempDir()
	outside, victim := filepath.Join(dir, "outside"), filepath.Join(dir, "victim.tfstate")
	smudged, kubeRan := filepath.Join(dir, "smudge-ran"), filepath.Join(dir, "kube-exec-ran")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, victim, "the real state\n")
	git := testkit.GitIn(t, checkout)
	git("init", "-q", "-b", "main")
	testkit.WriteFile(t, filepath.Join(wd, "backend.tf"), "terraform {\n  backend \"local\" {\n    path = \"../state/data.tfstate\"\n  }\n}\n")
	testkit.WriteFile(t, filepath.Join(checkout, ".gitignore"), "infra/state/\n")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	branch := func(name string, files map[string]string, links map[string]string) {
		git("checkout", "-q", "-b", name, "main")
		for p, body := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(checkout, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			testkit.WriteFile(t, filepath.Join(checkout, p), body)
		}
		for p, target := range links {
			if err := os.Symlink(target, filepath.Join(checkout, p)); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A", "-f")
		git("commit", "-q", "-m", name)
		git("checkout", "-q", "main")
		for p := range links {
			os.Remove(filepath.Join(checkout, p))
		}
	}
	branch("link", map[string]string{"infra/data/m/main.tf": "resource \"terraform_data\" \"m\" {}\n",
		"infra/data/mod.tf": "module \"m\" {\n  source = \"./m\"\n}\n"}, map[string]string{"infra/data/.terraform": outside})
	branch("lockinfo", nil, map[string]string{"infra/data/.terraform.tfstate.lock.info": victim})
	branch("attrs", map[string]string{".gitattributes": "*.tf filter=lfs\n", "infra/data/extra.tf": "# nothing\n"}, nil)
	branch("rmstate", nil, map[string]string{"infra/state": filepath.Join(checkout, "infra/state")})
	branch("kube", map[string]string{"infra/data/kc.yaml": testkit.KubeconfigExec(kubeRan), "infra/data/remote.tf": testkit.RemoteStateKube}, nil)
	git("config", "filter.lfs.smudge", "touch "+smudged+"; cat")
	state := filepath.Join(checkout, "infra/state/data.tfstate")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, state, `{"version":4,"terraform_version":"1.8.0","serial":1,"lineage":"pr-on-worker","outputs":{},"resources":[]}`+"\n")
	before, head := git("status", "--porcelain", "--ignored"), git("rev-parse", "HEAD")
	startWorker(t, w1)

	for _, ref := range []string{"link", "lockinfo", "attrs", "rmstate", "kube"} {
		v := h.launchWait("alice", "rpr", "--dry-run", "--ref", ref)
		t.Logf("%s: %s: %s; steps %v", ref, v.Status, v.Message, stepNames(v))
	}
	for _, ref := range []string{"-x", "--output=/tmp/x", "main:..", "main\nx"} {
		if _, _, code := h.ssh("alice", "launch", "rpr", "--dry-run", "--ref", ref); code == 0 {
			if ref != "main:.." {
				t.Errorf("ref %q was queued", ref)
			}
		}
	}
	var written []string
	filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != outside {
			written = append(written, p)
		}
		return nil
	})
	if len(written) > 0 {
		t.Errorf("a pull request's plan wrote outside its private directory: %v", written)
	}
	if b, _ := os.ReadFile(victim); string(b) != "the real state\n" {
		t.Errorf("a committed lock-info link overwrote a file outside: %q", b)
	}
	for what, marker := range map[string]string{"a filter driver": smudged, "a kubeconfig exec plugin": kubeRan} {
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("a pull request's plan on the worker ran %s", what)
		}
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("the worker's checkout state is gone: %v", err)
	}
	if after := git("status", "--porcelain", "--ignored"); after != before || git("rev-parse", "HEAD") != head {
		t.Errorf("the worker's checkout changed:\nbefore %q\nafter  %q", before, after)
	}
}

// Promise (spec and docs/pull-requests.md: the plan runs against the
// state the checkout's runs use, read as they read it, with their
// credentials; a branch that changes the backend is refused rather than
// planned, since "a backend ... the branch chose would get the run's
// credentials"). Once, a branch that changed only the default of a variable
// the backend block read pointed the backend at its own host while the
// block's text stayed the same, and the worker sent the run's TF_HTTP_*
// credentials there.
func TestAPullRequestCannotRedirectTheBackendThroughAVariable(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	h, keys, identity := relayHarness(t, relayScanConfig+workerHTTPStateConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	variable := func(addr string) string {
		return "variable \"state_address\" {\n  type    = string\n  default = \"" + addr + "\"\n}\n"
	}
	git := testkit.GitIn(t, checkout)
	git("init", "-q", "-b", "main")
	testkit.WriteFile(t, filepath.Join(wd, "backend.tf"), "terraform {\n  backend \"http\" {\n    address = var.state_address\n  }\n}\n")
	testkit.WriteFile(t, filepath.Join(wd, "state_address.tf"), variable(legit.URL+"/state"))
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "redirect")
	testkit.WriteFile(t, filepath.Join(wd, "state_address.tf"), variable(evil.URL+"/state"))
	git("add", "-A")
	git("commit", "-q", "-m", "the same backend block, another host")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rprhttp", "--dry-run", "--ref", "redirect")
	if got := seen(); len(got) > 0 {
		t.Fatalf("a pull request's plan on the worker sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
	t.Logf("%s: %s", v.Status, v.Message)
}

// The override-file break of TestAPullRequestCannotRedirectTheBackendThroughAnOverrideLocal on
// a relay worker: the worker's export compares with the same scan.Backend,
// and its init and plan send the run's state credentials to the branch's
// host.
func TestAPullRequestOnAWorkerCannotRedirectTheBackendThroughAnOverrideLocal(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	h, keys, identity := relayHarness(t, relayScanConfig+workerHTTPStateConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	git := testkit.GitIn(t, checkout)
	git("init", "-q", "-b", "main")
	testkit.WriteFiles(t, wd, map[string]string{
		"backend.tf": httpBackend("local.state_address"),
		"locals.tf":  "locals {\n  state_address = \"" + legit.URL + "/state\"\n}\n",
	})
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "redirect")
	testkit.WriteFiles(t, wd, map[string]string{"a_override.tf": "locals {\n  state_address = \"" + evil.URL + "/state\"\n}\n"})
	git("add", "-A")
	git("commit", "-q", "-m", "an override file")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rprhttp", "--dry-run", "--ref", "redirect")
	if got := seen(); len(got) > 0 {
		t.Fatalf("a pull request's plan on the worker sent the run's state credentials to the host the branch's override file names (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
}

// The remote-state break of TestAPullRequestsRemoteStateNeverGetsTheStateCredentials
// on a relay worker: the worker's scan finds nothing in the branch, its
// export's sameBackend compares only the backend blocks, and its plan
// sends the run's TF_HTTP_USERNAME/PASSWORD to the branch's host.
func TestAPullRequestsRemoteStateOnAWorkerNeverGetsTheStateCredentials(t *testing.T) {
	t.Parallel()
	legit, _ := stateServer(t)
	evil, seen := stateServer(t)
	h, keys, identity := relayHarness(t, relayScanConfig+workerHTTPStateConfig)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	checkout := w1.Projects["infra"].Path
	wd := filepath.Join(checkout, "infra/data")
	git := testkit.GitIn(t, checkout)
	git("init", "-q", "-b", "main")
	testkit.WriteFiles(t, wd, map[string]string{"backend.tf": httpBackend(`"` + legit.URL + `/state"`)})
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("checkout", "-q", "-b", "peek")
	testkit.WriteFiles(t, wd, map[string]string{"peek.tf": testkit.HTTPRemoteState(evil.URL + "/other-state")})
	git("add", "-A")
	git("commit", "-q", "-m", "read another state")
	git("checkout", "-q", "main")
	startWorker(t, w1)

	v := h.launchWait("alice", "rprhttp", "--dry-run", "--ref", "peek")
	for _, req := range seen() {
		if strings.Contains(req, "state-password-13c") {
			t.Fatalf("a pull request's plan on worker w1 sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
				v.Status, v.Message, stepNames(v), seen())
		}
	}
	t.Logf("%s: %s; the branch's host saw %v", v.Status, v.Message, seen())
}

// workerHTTPStateConfig is a pull-request template on pool eu whose
// credential authenticates an http state backend.
const workerHTTPStateConfig = `
credential "state13c" {
  env = { TF_HTTP_USERNAME = "switchtender", TF_HTTP_PASSWORD = "state-password-13c" }
}
template "rprhttp" {
  project     = "infra"
  command     = "infra/data"
  queue       = "eu"
  credentials = ["state13c"]
}
`
