package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

const networkTemplate = testkit.NetworkTemplate

// Credentials arrive in the environment and never reach the log: env
// credentials as given, a token as SWITCHTENDER_TOKEN, a command-source
// credential by running its command for every run. CHECKPOINT_DISABLE is
// set, and TF_CLI_ARGS from the server's environment is not passed on.
func TestCredentialsArriveMasked(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "count")
	h := newHarness(t, `
credential "cloud" {
  env = { CLOUD_KEY = "cloud-canary-7f3a9" }
}
credential "api" {
  token = "token-canary-51be2"
}
credential "vault" {
  command = ["sh", "-c", "echo x >> `+counter+`; echo vault-canary-$(wc -l < `+counter+` | tr -d ' ')x9"]
  env_var = "VAULT_TOKEN"
}
template "creds" {
  project = "infra"
  command = "infra/creds"
  credentials = ["cloud", "api", "vault"]
  survey "note" {
    type = "string"
    default = "one"
  }
}
`)
	h.srv.env = append(h.srv.env, "TF_CLI_ARGS=-lock=false-canary")
	out1 := h.mustSSH("alice", "launch", "creds", "--wait")
	out2 := h.mustSSH("alice", "launch", "creds", "--var", "note=two", "--wait")
	for i, out := range []string{out1, out2} {
		if !strings.Contains(out, "cloud=*** token=*** vault=*** checkpoint=1 args=\n") && !strings.Contains(out, "cloud=*** token=*** vault=*** checkpoint=1 args=") {
			t.Errorf("run %d: credentials not received masked:\n%s", i+1, out)
		}
	}
	data, _ := os.ReadFile(counter)
	if got := strings.Count(string(data), "x"); got != 2 {
		t.Errorf("command-source credential ran %d times for two runs, want 2", got)
	}
	for _, canary := range []string{"cloud-canary-7f3a9", "token-canary-51be2", "vault-canary-1x9", "vault-canary-2x9", "lock=false-canary"} {
		for _, out := range []string{out1, out2, h.mustSSH("bob", "log", "1"), h.mustSSH("bob", "log", "2")} {
			if strings.Contains(out, canary) {
				t.Errorf("canary %q reached a log:\n%s", canary, out)
			}
		}
		db, _ := os.ReadFile(filepath.Join(h.dir, "data", "switchtender.db"))
		if strings.Contains(string(db), canary) {
			t.Errorf("canary %q reached the database file", canary)
		}
	}
}

// Selecting terraform routes the same steps to the terraform binary, found
// on the PATH of the process executing runs; a missing binary fails the run
// with a sentence naming the tool and the binary, before anything runs.
func TestTerraformToolRouting(t *testing.T) {
	h := newHarness(t, `
template "tf" {
  project = "infra"
  tool    = "terraform"
  command = "infra/network"
  survey "region" {
    type = "string"
    default = "x"
  }
}
`)
	// A stand-in terraform that records how it was called: the real one is
	// not part of this machine's set-up, and routing is what is tested.
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\necho \"$@\" >> " + calls + "\necho terraform-stand-in \"$1\"\n"
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := h.runPath()
	h.setRunPath(bin + ":" + path)
	out := h.mustSSH("alice", "launch", "tf", "--dry-run", "--wait")
	if !strings.Contains(out, "$ terraform init -input=false -no-color") || !strings.Contains(out, "terraform-stand-in plan") {
		t.Fatalf("terraform run:\n%s", out)
	}
	got, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	// A dry run renders its saved plan (show -json) to record its digest
	// and change set, with the same tool.
	if len(lines) != 3 || lines[0] != "init -input=false -no-color" || !strings.HasPrefix(lines[1], "plan -input=false -no-color -out=") || !strings.HasPrefix(lines[2], "show -json -no-color ") {
		t.Fatalf("terraform was called with %q", lines)
	}

	h.setRunPath(t.TempDir())
	out, _, code := h.ssh("alice", "launch", "tf", "--dry-run", "--wait")
	if code == 0 || !strings.Contains(out, "terraform") || !strings.Contains(out, "PATH") || strings.Contains(out, "$ terraform") {
		t.Fatalf("missing terraform: exit %d\n%s", code, out)
	}
}

// What will make runs fail or hold is reported at start, before anything runs.
func TestProblemsAtStart(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "broken.rego")
	os.WriteFile(policy, []byte("package switchtender.plan\ndeny contains msg if {\n"), 0o644)
	h := newHarness(t, networkTemplate+`
template "gone" {
  project = "infra"
  command = "infra/missing"
}
template "tf" {
  project = "infra"
  tool    = "terraform"
  command = "infra/network"
}
rule "broken" {
  plan_gate = "`+policy+`"
}
`)
	h.srv.env = append(append([]string{}, h.srv.env...), "PATH="+t.TempDir())
	got := strings.Join(h.srv.Problems(), "\n")
	for _, want := range []string{"template gone", "infra/missing", "template tf", "terraform", "template network", "tofu", "rule broken", "does not compile"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}
