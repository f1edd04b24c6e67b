package server

// A pull request's plan is scanned first: whatever in the branch would run a
// program (a provider it ships, a kubeconfig exec, a module reading remote
// state) is refused before any tofu plan starts.

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Promise (README "The configuration scan" step 1) Once, a branch that
// committed a provider under .terraform with a matching lock file had its
// plan run that provider, the branch's own program, with the server's
// credentials.
func TestAPullRequestNeverRunsACommittedProvider(t *testing.T) {
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
func TestAPullRequestNeverRunsAProviderFromItsImpliedMirror(t *testing.T) {
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

// Promise (README "Pull-request plans"): a pull request's plan is scanned
// first, and a plan "that would run code" is refused, no tofu plan starts.
// Once, a branch's terraform_remote_state with backend "kubernetes" and a
// committed kubeconfig ran the kubeconfig's exec plugin during the plan,
// unheld, because the scan did not know that data source could run a program.
func TestAPullRequestNeverRunsARemoteStatesKubeconfigExec(t *testing.T) {
	h := prHarness(t)
	marker := filepath.Join(h.dir, "kube-exec-ran")
	h.git("checkout", "-q", "-b", "kube")
	os.WriteFile(filepath.Join(h.project, "infra/data/kc.yaml"), []byte(kubeconfigExec(marker)), 0o644)
	os.WriteFile(filepath.Join(h.project, "infra/data/remote.tf"), []byte(remoteStateKube), 0o644)
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
	h := prHarness(t)
	marker := filepath.Join(h.dir, "kube-backend-ran")
	h.git("checkout", "-q", "-b", "kubebe")
	os.WriteFile(filepath.Join(h.project, "infra/data/kc.yaml"), []byte(kubeconfigExec(marker)), 0o644)
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
	var repo string
	_, v := planBranchOf(t, func(h *harness) map[string]string {
		repo = filepath.Join(h.dir, "modrepo")
		writeFiles(t, repo, map[string]string{"main.tf": httpRemoteState("http://127.0.0.1:1/state")})
		git := gitIn(t, repo)
		git("init", "-q", "-b", "main")
		git("add", "-A")
		git("commit", "-q", "-m", "module")
		return map[string]string{"mod.tf": "module \"m\" {\n  source = \"git::file://" + repo + "\"\n}\n"}
	})
	t.Logf("%s: %s; steps %v; findings %+v", v.Status, v.Message, stepNames(v), v.Findings)
	if v.Run.Status != StatusRefused || !strings.Contains(v.Message, "terraform_remote_state") || slices.Contains(stepNames(v), "plan") {
		t.Fatalf("a branch's git module reading a remote state: %s: %s", v.Status, v.Message)
	}
}

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
