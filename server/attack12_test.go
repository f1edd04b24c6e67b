package server

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// h1Hash is OpenTofu's "h1:" package hash of a provider directory
// (golang.org/x/mod/sumdb/dirhash.HashDir(dir, "", Hash1)).
func h1Hash(t *testing.T, dir string) string {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256(b), f)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// writeFakeProvider writes, under base (a .terraform/providers directory or
// a terraform.d/plugins mirror), a "hashicorp/null" 3.2.2 provider that is a
// shell script touching marker, and returns its h1 hash.
func writeFakeProvider(t *testing.T, pkgDir, marker string) string {
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\ntouch %s\nexit 1\n", marker)
	if err := os.WriteFile(filepath.Join(pkgDir, "terraform-provider-null_v3.2.2_x5"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return h1Hash(t, pkgDir)
}

const nullProviderConfig = `terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "3.2.2"
    }
  }
}

resource "null_resource" "x" {}
`

func lockFor(hash string) string {
	return fmt.Sprintf("provider \"registry.opentofu.org/hashicorp/null\" {\n  version     = \"3.2.2\"\n  constraints = \"3.2.2\"\n  hashes = [\n    %q,\n  ]\n}\n", hash)
}

// Promise (README "The configuration scan" step 1 and issue 12 item 5)
// Break: a branch commits .terraform/providers/.../terraform-provider-null
// (a shell script) and a .terraform.lock.hcl with its h1 hash. The scan
// finds nothing (it only looks at configuration files and modules), the
// export keeps the committed .terraform, modulesStep replaces only
// .terraform/modules, and `tofu init -get=false` reuses the committed
// provider ("Using previously-installed"), so the plan executes the
// branch's program with the server's credentials. (init resolves the
// version first: online from the registry, here from a filesystem mirror in
// the server's CLI configuration; the package it then uses is the branch's.)
func TestAttack12CommittedProviderInPullRequestRuns(t *testing.T) {
	h := prHarness(t)
	marker := filepath.Join(h.dir, "provider-ran")
	h.git("checkout", "-q", "-b", "prov")
	wd := filepath.Join(h.project, "infra/data")
	pkg := filepath.Join(wd, ".terraform/providers/registry.opentofu.org/hashicorp/null/3.2.2/linux_amd64")
	hash := writeFakeProvider(t, pkg, marker)
	os.WriteFile(filepath.Join(wd, "prov.tf"), []byte(nullProviderConfig), 0o644)
	os.WriteFile(filepath.Join(wd, ".terraform.lock.hcl"), []byte(lockFor(hash)), 0o644)
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "prov")
	h.git("checkout", "-q", "main")
	os.RemoveAll(filepath.Join(wd, ".terraform"))

	// The server's own provider source: a filesystem mirror that has
	// hashicorp/null 3.2.2 (a team's mirror or cache), so init can resolve
	// the version offline, as it would online from the registry.
	mirror := filepath.Join(h.dir, "mirror")
	writeFakeProvider(t, filepath.Join(mirror, "registry.opentofu.org/hashicorp/null/3.2.2/linux_amd64"), filepath.Join(h.dir, "mirror-provider-ran"))
	cli := filepath.Join(h.dir, "tofurc")
	os.WriteFile(cli, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)), 0o644)
	h.srv.env = append(append([]string{}, h.srv.env...), "TF_CLI_CONFIG_FILE="+cli)

	v := h.launchWait("alice", "data", "--dry-run", "--ref", "prov")
	log := h.mustSSH("bob", "log", v.ID)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the pull request's committed provider ran during its plan: %s (%s), steps %v\n%s", v.Status, v.Message, stepNames(v), log)
	}
	t.Logf("%s (%s) steps %v\n%s", v.Status, v.Message, stepNames(v), log)
}

// Same as above with no .terraform at all: OpenTofu's implied local mirror
// terraform.d/plugins in the working directory. A pull request ships the
// provider binary and its plan runs it: "a plan that would run code" is
// planned without a person.
func TestAttack12PullRequestImpliedMirrorProviderRuns(t *testing.T) {
	h := prHarness(t)
	marker := filepath.Join(h.dir, "mirror-ran")
	h.git("checkout", "-q", "-b", "mirror")
	wd := filepath.Join(h.project, "infra/data")
	pkg := filepath.Join(wd, "terraform.d/plugins/registry.opentofu.org/hashicorp/null/3.2.2/linux_amd64")
	hash := writeFakeProvider(t, pkg, marker)
	os.WriteFile(filepath.Join(wd, "prov.tf"), []byte(nullProviderConfig), 0o644)
	os.WriteFile(filepath.Join(wd, ".terraform.lock.hcl"), []byte(lockFor(hash)), 0o644)
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

// Promise (README "The configuration scan" step 1): the scan's copy is
// private (DATA_DIR/runs/ID/scan) and "no .terraform" is copied; tofu get
// downloads "there". Break: copyConfiguration skips .terraform only when it
// is a directory (d.IsDir() in server/scancopy.go); a .terraform that is a
// symbolic link is copied as a link, so `tofu get` in the private copy
// writes its modules through it, wherever it points (outside the checkout
// and the data dir). modulesStep refuses the working directory's symlinked
// .terraform only afterwards.
func TestAttack12SymlinkedDotTerraformMakesGetWriteOutside(t *testing.T) {
	h := scanHarness(t, "")
	outside := filepath.Join(h.dir, "outside")
	os.MkdirAll(outside, 0o755)
	wd := filepath.Join(h.project, "infra/scan/clean")
	if err := os.Symlink(outside, filepath.Join(wd, ".terraform")); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	var written []string
	filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != outside {
			written = append(written, p)
		}
		return nil
	})
	if len(written) > 0 {
		t.Fatalf("the scan's tofu get wrote outside its private copy through a symlinked .terraform: %v (run %s: %s)", written, v.Status, v.Message)
	}
}

// The same through a pull request: the branch commits .terraform as a
// symbolic link to an absolute path; the export writes the link, the
// copy keeps it, and tofu get writes through it.
func TestAttack12PullRequestSymlinkedDotTerraformWritesOutside(t *testing.T) {
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

// Promise (README "The configuration scan"): "anything it cannot read" is a
// finding, and "verify modules: the tree the plan will read is read again;
// unless its digest is the scanned one, the run is refused". Break: a
// configuration file that is not a regular file (a FIFO named extra.tf) is
// not copied into the scan's copy (copyConfiguration keeps only regular
// files), so the scan finds nothing; verifyModulesStep reads the checkout
// again, gets a finding for it, but compares only digests (an unread file
// adds nothing to the digest) and lets the run plan. tofu then reads the
// FIFO: whatever a writer feeds it is planned unscanned (here a resource;
// it could as well be a data "external"), or with no writer the plan hangs.
func TestAttack12FifoConfigFilePlansUnscanned(t *testing.T) {
	h := scanHarness(t, "")
	fifo := filepath.Join(h.project, "infra/scan/clean/extra.tf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // feed every reader that opens the FIFO
		for {
			select {
			case <-stop:
				return
			default:
			}
			f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			f.Write([]byte("resource \"terraform_data\" \"from_fifo\" {\n  input = \"never scanned\"\n}\n"))
			f.Close()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	v := h.launchWait("alice", "scan-clean", "--dry-run")
	log := h.mustSSH("bob", "log", v.ID)
	if strings.Contains(log, "$ tofu plan") {
		t.Fatalf("a plan started over a configuration file the scan never read: %s (%s), scan %+v\n%s", v.Status, v.Message, v.Scan, log)
	}
}

// Promise (README "Pull-request plans"): a pull request's plan runs in a
// private tree, "the checkout's working tree, index and HEAD are never
// touched", against "a read-only copy" of a local state file. Break: the
// branch's own configuration names a local backend whose path is in the
// checkout (any path the server can write); the scan does not look at
// backends, and the plan's state lock creates that state file (and its
// directories) in the checkout, where it stays.
func TestAttack12PullRequestBackendPathWritesIntoCheckout(t *testing.T) {
	h := prHarness(t)
	target := filepath.Join(h.project, "pwned", "by-pr.tfstate")
	h.git("checkout", "-q", "-b", "backend")
	be := fmt.Sprintf("terraform {\n  backend \"local\" {\n    path = %q\n  }\n}\n", target)
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte(be), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "backend")
	h.git("checkout", "-q", "main")
	before := h.git("status", "--porcelain", "--ignored")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "backend")
	after := h.git("status", "--porcelain", "--ignored")
	t.Logf("%s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	if _, err := os.Stat(target); err == nil || after != before {
		t.Fatalf("a pull request's plan wrote into the checkout (%s: %s):\nbefore %q\nafter  %q\n%s", v.Status, v.Message, before, after, h.mustSSH("bob", "log", v.ID))
	}
}

// TF_ENCRYPTION in a credential's env: a finding holds the exempted dry
// run before anything plans (held: envValue reads the run's built env).
func TestAttack12EncryptionFromCredentialHeld(t *testing.T) {
	h := scanHarness(t, `
credential "enc" {
  env = { TF_ENCRYPTION = "key_provider \"external\" \"k\" {\n  command = [\"sh\", \"-c\", \"touch /tmp/x\"]\n}\n" }
}
template "enc-clean" {
  project = "infra"
  command = "infra/scan/clean"
  credentials = ["enc"]
}
`)
	v := h.launchWait("alice", "enc-clean", "--dry-run")
	if statusOf(v.Run) != StatusAwaitingApproval || v.Proposal == nil || Stage(v.Proposal.Stage) != StageScan {
		t.Fatalf("TF_ENCRYPTION with an external key provider in a credential: %s (%s) findings %+v", v.Status, v.Message, v.Findings)
	}
}

// Promise (issue 12 "Named by address" and the masking of credentials): a
// credential's value never shows in show, show --json or the audit trail.
// Break: a TF_ENCRYPTION credential the scan cannot parse (a passphrase
// left unquoted in its JSON) becomes a finding whose reason is the parser's
// message, which quotes the passphrase; the masker masks the credential's
// whole value, not the fragment, so the passphrase is shown to whoever may
// read the run (readEncryptionEnv in scan/encryption.go, Reason masked with
// x.masker.String in server/scan.go scanStep).
func TestAttack12EncryptionCredentialLeaksIntoFindings(t *testing.T) {
	const secret = "TroubadorHorseBatteryStaple"
	h := scanHarness(t, `
credential "enc" {
  env = { TF_ENCRYPTION = "{\"key_provider\": {\"pbkdf2\": {\"k\": {\"passphrase\": `+secret+`}}}}" }
}
template "enc-clean" {
  project = "infra"
  command = "infra/scan/clean"
  credentials = ["enc"]
}
`)
	v := h.launchWait("alice", "enc-clean", "--dry-run")
	show := h.mustSSH("carol", "show", v.ID)
	js := h.mustSSH("carol", "show", v.ID, "--json")
	audit := h.mustSSH("bob", "audit", "--json")
	t.Logf("%s: %s\n%s", v.Status, v.Message, show)
	for what, text := range map[string]string{"show": show, "show --json": js, "audit": audit, "message": v.Message} {
		if strings.Contains(text, secret) {
			t.Fatalf("the TF_ENCRYPTION passphrase leaks into %s (%s):\n%s", what, v.Status, text)
		}
	}
}

// Promise (README "Pull-request plans"): a pull request's plan never
// touches the checkout and plans "against the state the checkout's runs use
// (for a local state file, a read-only copy)". Break: when the checkout's
// local backend keeps its state outside the working directory
// (path = "../state/data.tfstate"), copyLocalState (server/pullrequest.go)
// puts the copy at the same relative path in the private tree and first
// runs os.Remove(dest); the branch commits infra/state as a symbolic link
// to the checkout's infra/state, so that Remove deletes the checkout's real
// state file through the link (and the copy then fails: its source is
// gone).
func TestAttack12PullRequestDeletesCheckoutStateThroughLink(t *testing.T) {
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

// An agent's pull-request plan still waits for a person before anything
// runs, clean or not (held).
func TestAttack12AgentPullRequestPlanWaits(t *testing.T) {
	h := prHarness(t)
	v := h.launchWait("deploy-bot", "data", "--dry-run", "--ref", "clean")
	if statusOf(v.Run) != StatusAwaitingApproval || len(v.Steps) != 0 {
		t.Fatalf("an agent's pull-request plan: %s (%s), steps %v", v.Status, v.Message, stepNames(v))
	}
}

// A drift check under exclude_dry_run with a finding is held at the scan
// stage before any plan (held).
func TestAttack12DriftCheckWithFindingHeld(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-deep", "--check")
	if statusOf(v.Run) != StatusAwaitingApproval || v.Proposal == nil || Stage(v.Proposal.Stage) != StageScan ||
		strings.Contains(h.mustSSH("bob", "log", v.ID), "$ tofu plan") {
		t.Fatalf("a drift check with an external data source: %s (%s)", v.Status, v.Message)
	}
}

// Refs: a tag and an abbreviated SHA plan the commit they name and record
// its full SHA; a tag on the evil commit is refused like the branch (held).
func TestAttack12PullRequestRefForms(t *testing.T) {
	h := prHarness(t)
	h.git("tag", "v-evil", "evil")
	h.git("tag", "-a", "-m", "annotated", "v-clean", "clean")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "v-evil")
	if statusOf(v.Run) != StatusRefused || len(v.Steps) != 0 {
		t.Fatalf("tag of the evil branch: %s (%s) steps %v", v.Status, v.Message, stepNames(v))
	}
	v = h.launchWait("alice", "data", "--dry-run", "--ref", "v-clean")
	if statusOf(v.Run) != StatusSucceeded || v.Commit == nil || v.Commit.SHA != h.git("rev-parse", "clean") {
		t.Fatalf("annotated tag: %s (%s) commit %+v", v.Status, v.Message, v.Commit)
	}
	short := h.git("rev-parse", "--short=8", "evil")
	v = h.launchWait("alice", "data", "--dry-run", "--ref", short)
	if statusOf(v.Run) != StatusRefused || v.Commit == nil || v.Commit.SHA != h.git("rev-parse", "evil") {
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
// rerunning a refused pull-request plan scans again (held).
func TestAttack12PullRequestRerunOfRefusedScansAgain(t *testing.T) {
	h := prHarness(t)
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "evil")
	if statusOf(v.Run) != StatusRefused {
		t.Fatalf("evil: %s", v.Status)
	}
	out, _, _ := h.ssh("alice", "rerun", v.ID, "--wait", "--json")
	if !strings.Contains(out, `"status": "refused"`) || strings.Contains(out, `"name": "plan"`) {
		t.Fatalf("rerun of a refused pull-request plan:\n%s", out)
	}
}

// Path escapes in the exempted path: a module directory that is a link out
// of the checkout, a ../ module source that leaves the checkout, and a
// working directory that is a link out of it. Each is held or refused, and
// no plan starts (held).
func TestAttack12PathEscapesHeld(t *testing.T) {
	h := scanHarness(t, `
template "esc-link" {
  project = "infra"
  command = "infra/esc/link"
}
template "esc-up" {
  project = "infra"
  command = "infra/esc/up"
}
template "esc-wd" {
  project = "infra"
  command = "infra/esc/wd"
}
`)
	outside := filepath.Join(h.dir, "outside-mod")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "main.tf"), []byte("data \"external\" \"o\" {\n  program = [\"sh\"]\n}\n"), 0o644)
	esc := filepath.Join(h.project, "infra/esc")
	os.MkdirAll(filepath.Join(esc, "link"), 0o755)
	os.WriteFile(filepath.Join(esc, "link/main.tf"), []byte("module \"o\" {\n  source = \"./o\"\n}\n"), 0o644)
	os.Symlink(outside, filepath.Join(esc, "link/o"))
	os.MkdirAll(filepath.Join(esc, "up"), 0o755)
	rel, _ := filepath.Rel(filepath.Join(esc, "up"), outside)
	os.WriteFile(filepath.Join(esc, "up/main.tf"), []byte(fmt.Sprintf("module \"o\" {\n  source = %q\n}\n", "./"+rel)), 0o644)
	os.Symlink(outside, filepath.Join(esc, "wd"))
	for _, tpl := range []string{"esc-link", "esc-up", "esc-wd"} {
		out, errOut, _ := h.ssh("alice", "launch", tpl, "--dry-run", "--wait", "--json")
		t.Logf("%s: %.300s %s", tpl, regexpStatus(out), errOut)
		if strings.Contains(out, `"status": "succeeded"`) || strings.Contains(out, `"name": "plan"`) {
			t.Fatalf("%s planned:\n%s%s", tpl, out, errOut)
		}
	}
}

func regexpStatus(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"message"`) {
			return l
		}
	}
	return out
}

// Promise (README "Pull-request plans"): the commit is written with `git
// archive`, which "reads the repository's objects only" (vcs.Export), and a
// pull request's plan runs no program its content names before the scan.
// Break: git archive applies the .gitattributes of the commit it archives,
// including filter drivers (smudge) and so runs, on the branch's content,
// whichever filter program the checkout's git configuration defines (git-lfs
// is the common one: its smudge fetches objects with the checkout's
// credentials and writes them into the checkout's .git/lfs). Here the
// checkout defines filter "lfs" with a program that records it ran; the
// branch marks *.tf with filter=lfs, and the export runs it.
func TestAttack12PullRequestExportRunsFilterDriversTheBranchNames(t *testing.T) {
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

// TF_ENCRYPTION from a credential's command (env_var) is scanned too: held.
func TestAttack12EncryptionFromCredentialCommandHeld(t *testing.T) {
	script := filepath.Join(t.TempDir(), "enc.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' 'key_provider \"external\" \"k\" { command = [\"true\"] }'\n"), 0o755)
	h := scanHarness(t, fmt.Sprintf(`
credential "enc" {
  command = [%q]
  env_var = "TF_ENCRYPTION"
}
template "enc-clean" {
  project = "infra"
  command = "infra/scan/clean"
  credentials = ["enc"]
}
`, script))
	v := h.launchWait("alice", "enc-clean", "--dry-run")
	if statusOf(v.Run) != StatusAwaitingApproval || v.Proposal == nil || Stage(v.Proposal.Stage) != StageScan {
		t.Fatalf("TF_ENCRYPTION from a credential command: %s (%s) findings %+v", v.Status, v.Message, v.Findings)
	}
}

// Promise (README "The configuration scan"): local modules are read from
// the copy of the repository as OpenTofu reads them; the plan runs exactly
// the modules scanned. Break: the scanner resolves a local source relative
// to the caller's directory with symbolic links resolved (child in
// scan/module.go: filepath.Join(dir, local) where dir is EvalSymlinks'd),
// while OpenTofu joins it lexically to the caller's manifest Dir
// (filepath.Join(parentRecord.Dir, source) in initwd's installLocalModule).
// With module "a" at ./link_a -> deep/x/a calling "../b", the scan reads
// deep/x/b (clean) while OpenTofu loads ./b. verifyModulesStep repeats the
// scanner's reading, so the digests match, and the plan evaluates ./b,
// which nobody scanned; the saved plan's snapshot check refuses the plan
// only after it ran (a data "external" in ./b would have run).
func TestAttack12SymlinkedCallerResolvesLocalSourceElsewhere(t *testing.T) {
	h := scanHarness(t, `
template "lex" {
  project = "infra"
  command = "infra/lex"
}
`)
	wd := filepath.Join(h.project, "infra/lex")
	for name, body := range map[string]string{
		"main.tf":          "module \"a\" {\n  source = \"./link_a\"\n}\n",
		"deep/x/a/main.tf": "module \"b\" {\n  source = \"../b\"\n}\n",
		"deep/x/b/main.tf": "resource \"terraform_data\" \"scanned\" {}\n",
		"b/main.tf":        "resource \"terraform_data\" \"never_scanned\" {\n  input = \"a data external here would run\"\n}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(wd, name)), 0o755)
		os.WriteFile(filepath.Join(wd, name), []byte(body), 0o644)
	}
	if err := os.Symlink("deep/x/a", filepath.Join(wd, "link_a")); err != nil {
		t.Fatal(err)
	}
	v := h.launchWait("alice", "lex", "--dry-run")
	log := h.mustSSH("bob", "log", v.ID)
	t.Logf("%s: %s\n%s", v.Status, v.Message, log)
	if strings.Contains(log, "never_scanned") {
		t.Fatalf("the plan evaluated a module the scan never read (%s: %s), scan %+v\n%s", v.Status, v.Message, v.Scan, log)
	}
}

// Promise (README "Releasing a scan-stage hold ... plans exactly the
// modules scanned, from the copy the gate kept"; step 4 "verify modules").
// Break: verifyModulesStep reads local modules from the filesystem by their
// source (package scan ignores the manifest for local sources), but OpenTofu
// loads every module, local ones included, from the Dir its modules.json
// records; modulesStep copies that manifest from the kept private copy. A
// kept copy whose modules.json was altered while the run waited (it lives
// under DATA_DIR/runs/ID/scan) sends module.a.module.b to another directory
// of the checkout: the digest still matches, and the plan loads a module
// nobody scanned or released.
func TestAttack12ReleasedRunWithTamperedCopyPlansOtherModule(t *testing.T) {
	h := scanHarness(t, "")
	wd := filepath.Join(h.project, "infra/scan/deep")
	os.MkdirAll(filepath.Join(wd, "other"), 0o755)
	os.WriteFile(filepath.Join(wd, "other/main.tf"), []byte("resource \"terraform_data\" \"tampered\" {}\n"), 0o644)
	v := h.launchWait("alice", "scan-deep", "--dry-run")
	if v.Proposal == nil || Stage(v.Proposal.Stage) != StageScan {
		t.Fatalf("deep: %s %+v", v.Status, v.Proposal)
	}
	manifest := filepath.Join(h.srv.runsDir, v.ID, scanCopyName, "infra/scan/deep/.terraform/modules/modules.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatalf("the kept copy has no manifest: %v", err)
	}
	tampered := strings.Replace(string(b), `"Dir":"a/b"`, `"Dir":"other"`, 1)
	if tampered == string(b) {
		t.Fatalf("manifest layout: %s", b)
	}
	os.WriteFile(manifest, []byte(tampered), 0o600)
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	log := h.mustSSH("bob", "log", v.ID)
	if strings.Contains(log, "tampered will be created") {
		t.Fatalf("a released run planned a module other than the scanned one after its kept copy changed:\n%s", log)
	}
}
