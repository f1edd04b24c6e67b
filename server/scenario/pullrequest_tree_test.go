package scenario

// A pull request's plan runs in a private tree: nothing in the branch (a
// link, a lock file, a filter driver) writes, deletes or runs anything
// outside it, and the checkout is never touched.

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The same through a pull request: the branch commits .terraform as a
// symbolic link to an absolute path; the export writes the link, the
// copy keeps it, and tofu get writes through it.
func TestAPullRequestNeverWritesThroughASymlinkedDotTerraform(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	outside := filepath.Join(h.dir, "outside-pr")
	os.MkdirAll(outside, 0o755)
	h.git("checkout", "-q", "-b", "link")
	wd := filepath.Join(h.project, "infra/data")
	os.MkdirAll(filepath.Join(wd, "m"), 0o755)
	os.WriteFile(filepath.Join(wd, "m/main.tf"), []byte("resource \"terraform_data\" \"m\" {}\n"), 0o644)
	os.WriteFile(filepath.Join(wd, "mod.tf"), []byte("module \"m\" {\n  source = \"./m\"\n}\n"), 0o644)
	os.Symlink(outside, filepath.Join(wd, ".terraform"))
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "link")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "link")
	var written []string
	filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != outside {
			written = append(written, p)
		}
		return nil
	})
	if len(written) > 0 {
		t.Fatalf("a pull request's plan wrote outside its private directory through a committed .terraform link: %v (run %s: %s)", written, v.Status, v.Message)
	}
}

// Promise (docs/pull-requests.md): a pull request's plan never touches
// the checkout and plans "against the state the checkout's runs use (for a
// local state file, a read-only copy)". Once, a branch that committed
// infra/state as a link to the checkout's state directory had the read-only
// state copy's os.Remove delete the checkout's real state file through the
// link.
func TestAPullRequestNeverDeletesTheCheckoutsStateThroughALink(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	stateDir := filepath.Join(h.project, "infra/state")
	backend := "terraform {\n  backend \"local\" {\n    path = \"../state/data.tfstate\"\n  }\n}\n"
	h.git("checkout", "-q", "-b", "rmstate")
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte(backend), 0o644)
	// infra/state -> <checkout>/infra/state (absolute): in the private tree
	// it leads back into the checkout.
	if err := os.Symlink(stateDir, stateDir); err != nil {
		t.Fatal(err)
	}
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "state link")
	h.git("checkout", "-q", "main")
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte(backend), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "state outside the working directory")
	os.MkdirAll(stateDir, 0o755)
	h.mustSSH("alice", "launch", "data", "--wait")
	state := filepath.Join(stateDir, "data.tfstate")
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("setup: no state at %s: %v", state, err)
	}
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "rmstate")
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("a pull request's plan deleted the checkout's state file (%v): %s: %s", err, v.Status, v.Message)
	}
}

// Promise (docs/pull-requests.md): the commit is written with `git
// archive`, which "reads the repository's objects only" (vcs.Export), and a
// pull request's plan runs no program its content names before the scan.
// Once, a branch that marked *.tf with a filter the checkout's git
// configuration defined had git archive run that filter program on the
// branch's content during the export.
func TestAPullRequestsExportRunsNoFilterDriver(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	marker := filepath.Join(h.dir, "smudge-ran")
	h.git("config", "filter.lfs.smudge", "touch "+marker+"; cat")
	h.git("checkout", "-q", "-b", "attrs")
	os.WriteFile(filepath.Join(h.project, ".gitattributes"), []byte("*.tf filter=lfs\n"), 0o644)
	os.WriteFile(filepath.Join(h.project, "infra/data/extra.tf"), []byte("# nothing\n"), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "attrs")
	h.git("checkout", "-q", "main")
	os.Remove(marker) // the checkout above smudged; only the run counts
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "attrs")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("exporting a pull request's commit ran a filter program its .gitattributes named: %s (%s)", v.Status, v.Message)
	}
}

// Promise (docs/pull-requests.md): the plan runs in a private tree and
// "the checkout's working tree, index and HEAD are never touched"; the
// branch's tree "is the branch's to shape", so no link in it may lead a write
// out (placeInTree). Once, a branch that committed
// .terraform.tfstate.lock.info as a link to a file outside had the local
// backend's state lock overwrite that file through the link.
func TestAPullRequestNeverWritesItsLockInfoThroughALink(t *testing.T) {
	t.Parallel()
	h := prHarness(t)
	victim := filepath.Join(h.dir, "victim.tfstate")
	os.WriteFile(victim, []byte("the real state\n"), 0o644)
	h.git("checkout", "-q", "-b", "lockinfo")
	os.Symlink(victim, filepath.Join(h.project, "infra/data/.terraform.tfstate.lock.info"))
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "lock info link")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "lockinfo")
	if b, _ := os.ReadFile(victim); string(b) != "the real state\n" {
		t.Fatalf("a pull request's plan overwrote a file outside its tree through a committed lock-info link (%s: %s): now %q", v.Status, v.Message, b)
	}
}
