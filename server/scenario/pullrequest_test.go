package scenario

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// git runs git in the harness's project, as its checkout's owner would.
func (h *harness) git(args ...string) string {
	h.t.Helper()
	cmd := osexec.Command("git", append([]string{"-C", h.project, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// prHarness is a server whose checkout is a git repository with a branch
// "evil" that adds an external data source to infra/data and a branch
// "clean" that adds a resource.
func prHarness(t *testing.T) *harness {
	h := newHarness(t, dataTemplates)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "evil")
	evil := fmt.Sprintf("data \"external\" \"steal\" {\n  program = [\"sh\", \"-c\", \"env > %s; echo {}\"]\n}\n", filepath.Join(h.dir, "stolen"))
	os.WriteFile(filepath.Join(h.project, "infra/data/evil.tf"), []byte(evil), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "evil")
	h.git("checkout", "-q", "main")
	h.git("checkout", "-q", "-b", "clean")
	os.WriteFile(filepath.Join(h.project, "infra/data/extra.tf"), []byte("resource \"terraform_data\" \"extra\" {\n  input = \"from the branch\"\n}\n"), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "one more")
	h.git("checkout", "-q", "main")
	return h
}

// A pull request's plan of a branch that adds an external data source is
// refused with the finding named; no tofu process starts and the checkout
// is untouched.
func TestPullRequestPlanWithFindingIsRefused(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	before := h.git("status", "--porcelain", "--ignored")
	head := h.git("rev-parse", "HEAD")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "evil")
	if v.Run.Status != store.StatusRefused || !strings.Contains(v.Message, "data.external.steal") || !strings.Contains(v.Message, "no tofu plan started") {
		t.Fatalf("a pull request's plan with an external data source: %s: %s", v.Status, v.Message)
	}
	if len(v.Steps) != 0 {
		t.Fatalf("tofu processes started: %v", stepNames(v))
	}
	if v.Commit == nil || v.Commit.Ref != "evil" || v.Commit.SHA != h.git("rev-parse", "evil") {
		t.Fatalf("commit = %+v", v.Commit)
	}
	if v.Scan == nil || v.Scan.Why != runstep.ScanForPullRequest || len(v.Findings) != 1 || v.Findings[0].File != "infra/data/evil.tf" {
		t.Fatalf("scan = %+v, findings %+v", v.Scan, v.Findings)
	}
	if after := h.git("status", "--porcelain", "--ignored"); after != before || h.git("rev-parse", "HEAD") != head {
		t.Fatalf("the checkout changed:\nbefore %q\nafter  %q", before, after)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "stolen")); err == nil {
		t.Fatal("the external program ran")
	}
	if _, err := os.Stat(filepath.Join(h.srv.Config().Server.DataDir, "runs", v.ID, runstep.TreeName)); err == nil {
		t.Fatal("the private tree was left behind")
	}
}

func readFile(t *testing.T, p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// A clean branch plans in a private tree against the checkout's state (a
// read-only copy of the local state file), and its record carries the
// branch's SHA; the checkout's files and state are untouched.
func TestPullRequestPlanOfACleanBranch(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	h.mustSSH("alice", "launch", "data", "--wait") // state with three instances
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "state")
	state := readFile(t, filepath.Join(h.project, "infra/data/terraform.tfstate"))
	before := h.git("status", "--porcelain", "--ignored")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "clean")
	if v.Run.Status != store.StatusSucceeded {
		t.Fatalf("a clean branch: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	}
	if v.Commit == nil || v.Commit.SHA != h.git("rev-parse", "clean") || v.Commit.Ref != "clean" {
		t.Fatalf("commit = %+v, want clean at %s", v.Commit, h.git("rev-parse", "clean"))
	}
	log := h.mustSSH("bob", "log", v.ID)
	if !strings.Contains(log, "Plan: 1 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the branch was not planned against the checkout's state:\n%s", log)
	}
	if !slices.Equal(stepNames(v), []string{"init", "plan"}) {
		t.Fatalf("steps = %v", stepNames(v))
	}
	if got := readFile(t, filepath.Join(h.project, "infra/data/terraform.tfstate")); got != state {
		t.Fatal("the checkout's state changed")
	}
	if after := h.git("status", "--porcelain", "--ignored"); after != before {
		t.Fatalf("the checkout changed:\nbefore %q\nafter  %q", before, after)
	}
}

// Every run in a git checkout records the commit it ran and whether the
// working tree was dirty.
func TestRunsRecordTheirCommit(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	v := h.launchWait("alice", "data", "--dry-run")
	if v.Commit == nil || v.Commit.SHA != h.git("rev-parse", "HEAD") || v.Commit.Dirty || v.Commit.Ref != "" {
		t.Fatalf("commit of a clean checkout = %+v", v.Commit)
	}
	os.WriteFile(filepath.Join(h.project, "infra/data/notes.txt"), []byte("not committed"), 0o644)
	v = h.launchWait("alice", "data", "--dry-run")
	if v.Commit == nil || !v.Commit.Dirty {
		t.Fatalf("commit of a dirty checkout = %+v", v.Commit)
	}
	if !strings.Contains(h.mustSSH("bob", "show", v.ID), "commit "+v.Commit.SHA+", with changes not committed") {
		t.Fatal("show does not say which commit ran")
	}
}

// Hostile refs and misuse are refused before anything is queued.
func TestPullRequestRefsRefused(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "--ref", "clean"}, "add --dry-run"},
		{[]string{"data", "--dry-run", "--ref", "--upload-pack=touch /tmp/x"}, "starts with '-'"},
		{[]string{"data", "--dry-run", "--ref", "nosuch"}, "names no commit"},
		{[]string{"data", "--dry-run", "--ref", "main..clean"}, "names no commit"},
		{[]string{"data", "--check", "--ref", "clean"}, "--dry-run"},
	} {
		_, errOut, code := h.ssh("alice", append([]string{"launch"}, c.args...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("launch %v: exit %d, %q; want a refusal saying %q", c.args, code, errOut, c.want)
		}
	}
	if out := h.mustSSH("alice", "runs"); strings.Contains(out, "run 1") {
		t.Fatalf("a refused launch queued a run:\n%s", out)
	}
	os.RemoveAll(filepath.Join(h.project, ".git"))
	if _, errOut, _ := h.ssh("alice", "launch", "data", "--dry-run", "--ref", "main"); !strings.Contains(errOut, "not a git repository") {
		t.Fatalf("--ref outside a git checkout: %q", errOut)
	}
}

// A project whose checkout is a directory inside a larger repository: a
// pull request's plan finds the working directory at the project's place
// in the commit, not at the commit's top.
func TestPullRequestPlanOfAProjectInsideARepository(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates)
	top := func(args ...string) string {
		t.Helper()
		cmd := osexec.Command("git", append([]string{"-C", h.dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.WriteFile(filepath.Join(h.dir, ".gitignore"), []byte("/data/\n*.hcl\n"), 0o644)
	top("init", "-q", "-b", "main")
	top("add", "-A")
	top("commit", "-q", "-m", "main")
	top("checkout", "-q", "-b", "more")
	os.WriteFile(filepath.Join(h.project, "infra/data/more.tf"), []byte("resource \"terraform_data\" \"more\" {}\n"), 0o644)
	top("add", "-A")
	top("commit", "-q", "-m", "more")
	top("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "more")
	if v.Run.Status != store.StatusSucceeded || v.Commit == nil || v.Commit.SHA != top("rev-parse", "more") {
		t.Fatalf("a project inside a repository: %s: %s (commit %+v)", v.Status, v.Message, v.Commit)
	}
	if log := h.mustSSH("bob", "log", v.ID); !strings.Contains(log, "terraform_data.more will be created") {
		t.Fatalf("the branch's working directory was not planned:\n%s", log)
	}
}

// An agent's pull-request plan still waits for a person before anything runs,
// clean or not.
func TestAnAgentsPullRequestPlanWaitsForAPerson(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	v := h.launchWait("deploy-bot", "data", "--dry-run", "--ref", "clean")
	if v.Run.Status != store.StatusAwaitingApproval || len(v.Steps) != 0 {
		t.Fatalf("an agent's pull-request plan: %s (%s), steps %v", v.Status, v.Message, stepNames(v))
	}
}

// Refs: a tag and an abbreviated SHA plan the commit they name and record its
// full SHA; a tag on the evil commit is refused like the branch.
func TestAPullRequestPlansTheCommitItsRefNames(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	h.git("tag", "v-evil", "evil")
	h.git("tag", "-a", "-m", "annotated", "v-clean", "clean")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "v-evil")
	if v.Run.Status != store.StatusRefused || len(v.Steps) != 0 {
		t.Fatalf("tag of the evil branch: %s (%s) steps %v", v.Status, v.Message, stepNames(v))
	}
	v = h.launchWait("alice", "data", "--dry-run", "--ref", "v-clean")
	if v.Run.Status != store.StatusSucceeded || v.Commit == nil || v.Commit.SHA != h.git("rev-parse", "clean") {
		t.Fatalf("annotated tag: %s (%s) commit %+v", v.Status, v.Message, v.Commit)
	}
	short := h.git("rev-parse", "--short=8", "evil")
	v = h.launchWait("alice", "data", "--dry-run", "--ref", short)
	if v.Run.Status != store.StatusRefused || v.Commit == nil || v.Commit.SHA != h.git("rev-parse", "evil") {
		t.Fatalf("abbreviated SHA: %s (%s) commit %+v", v.Status, v.Message, v.Commit)
	}
	// A commit message search and a reflog form name commits too; a ref
	// naming a tree or blob is refused before anything queues.
	for _, ref := range []string{"evil:infra", "evil:infra/data/evil.tf"} {
		if _, _, code := h.ssh("alice", "launch", "data", "--dry-run", "--ref", ref); code == 0 {
			t.Fatalf("ref %q naming a tree or blob was queued", ref)
		}
	}
	out, errOut, _ := h.ssh("alice", "launch", "data", "--dry-run", "--ref", ":/evil", "--wait", "--json")
	if strings.Contains(out, "\"succeeded\"") || strings.Contains(out, "$ tofu plan") {
		t.Fatalf("ref :/evil (the evil commit by its message):\n%s%s", out, errOut)
	}
}

// The ref moves after launch: the run plans the SHA recorded at launch, and
// rerunning a refused pull-request plan scans again.
func TestARerunOfARefusedPullRequestScansAgain(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "evil")
	if v.Run.Status != store.StatusRefused {
		t.Fatalf("evil: %s", v.Status)
	}
	out, _, _ := h.ssh("alice", "rerun", v.ID, "--wait", "--json")
	if !strings.Contains(out, `"status": "refused"`) || strings.Contains(out, `"name": "plan"`) {
		t.Fatalf("rerun of a refused pull-request plan:\n%s", out)
	}
}
