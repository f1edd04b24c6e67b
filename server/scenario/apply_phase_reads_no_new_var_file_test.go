package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/internal/testkit"
	"github.com/switchtender/switchtender/store"
)

// keyProgram writes an external key provider that answers OpenTofu's
// protocol with a fixed key (the one OpenTofu's own test provider uses),
// and returns its path: the program a configuration's author weighed.
func keyProgram(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.sh")
	testkit.WriteFile(t, p, `#!/bin/sh
echo '{"magic":"OpenTofu-External-Key-Provider","version":1}'
INPUT=$(cat)
if [ "$INPUT" = "null" ]; then
  echo '{"keys":{"encryption_key":"AQIDBAUGBwgJCgsMDQ4PEA=="},"meta":{"external_data":{}}}'
else
  echo '{"keys":{"encryption_key":"AQIDBAUGBwgJCgsMDQ4PEA==","decryption_key":"AQIDBAUGBwgJCgsMDQ4PEA=="},"meta":{"external_data":{}}}'
fi
`)
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeKeyVarDir writes, in dir, a root module whose state encryption
// takes its key from an external key provider whose command is a variable,
// or when it is not set the JSON list conf/keycmd.json holds (key, the
// weighed program), read with file(); and a terraform_data resource whose
// input is variable n.
func writeKeyVarDir(t *testing.T, dir, key string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(dir, "conf", "keycmd.json"), fmt.Sprintf("[%q]\n", key))
	testkit.WriteFile(t, filepath.Join(dir, "main.tf"), `variable "key_command" {
  type    = list(string)
  default = null
}
variable "n" {
  type    = string
  default = "1"
}
terraform {
  encryption {
    key_provider "external" "k" {
      command = var.key_command != null ? var.key_command : jsondecode(file("${path.module}/conf/keycmd.json"))
    }
    method "aes_gcm" "m" {
      keys = key_provider.external.k
    }
    state {
      method = method.aes_gcm.m
    }
  }
}
resource "terraform_data" "x" { input = var.n }
`)
}

// A variable file OpenTofu loads by itself (terraform.tfvars, *.auto.tfvars
// and their .json spellings) placed in the working directory after a gated
// apply's plan was held never reaches a process of the apply phase: the run
// fails before any process starts, naming the file. OpenTofu evaluates the
// root module's encryption block with the variables of those files in every
// process (state pull and apply PLANFILE included, whatever the plan
// recorded), so before this check a key provider whose command is a
// variable ran the command an .auto.tfvars dropped after the approval named,
// though every .tf file was the one planned; so did the command a JSON file
// the encryption block reads with file() named, edited after the approval.
// Every file under the working directory is therefore compared. Its neighbours: a var file that
// was there at the plan and is unchanged applies; one edited is refused.
func TestAReleasedApplyRunsNoVariableFilePlacedAfterItsPlan(t *testing.T) {
	t.Parallel()
	h := writeHarness(t, "", `
template "keyvar" {
  project = "infra"
  command = "infra/keyvar"
}
rule "everything" {
  templates        = ["keyvar"]
  require_approval = true
}
`)
	key := keyProgram(t)
	script, marker := testkit.MarkerProgram(t)
	dir := filepath.Join(h.project, "infra", "keyvar")
	writeKeyVarDir(t, dir, key)
	h.start()
	hostile := fmt.Sprintf("key_command = [%q]\n", script)
	cases := []struct {
		name, file, content string
	}{
		{"an .auto.tfvars", "evil.auto.tfvars", hostile},
		{"terraform.tfvars", "terraform.tfvars", hostile},
		{"an .auto.tfvars.json", "evil.auto.tfvars.json", fmt.Sprintf(`{"key_command": [%q]}`, script)},
		{"the file the encryption block reads with file()", filepath.Join("conf", "keycmd.json"), fmt.Sprintf("[%q]\n", script)},
	}
	for _, c := range cases {
		id := runIDOf(t, h.mustSSH("carol", "launch", "keyvar", "--json"))
		h.waitStatus(id, store.StatusAwaitingApproval, store.StatusFailed)
		v := h.show("bob", id)
		if v.Run.Status != store.StatusAwaitingApproval {
			t.Fatalf("%s: the plan was not held: %s: %s\n%s", c.name, v.Status, v.Message, h.mustSSH("bob", "log", id))
		}
		testkit.WriteFile(t, filepath.Join(dir, c.file), c.content)
		testkit.AssertWouldRun(t, dir, marker, "state", "pull", "-no-color")
		h.mustSSH("bob", "approve", id, "--digest", v.Proposal.Digest)
		h.waitStatus(id, store.StatusFailed, store.StatusSucceeded, store.StatusStale)
		v = h.show("bob", id)
		log := h.mustSSH("bob", "log", id)
		testkit.AssertNeverRan(t, marker, "after the plan was held ("+c.name+")")
		if v.Run.Status != store.StatusFailed || !strings.Contains(v.Message, c.file) {
			t.Fatalf("%s: run %s is %s: %s", c.name, id, v.Status, v.Message)
		}
		if strings.Contains(log, "$ tofu apply") || slices.Contains(stepNames(v), "apply") {
			t.Fatalf("%s: a process of the apply phase started:\n%s", c.name, log)
		}
		os.Remove(filepath.Join(dir, c.file))
		testkit.WriteFile(t, filepath.Join(dir, "conf", "keycmd.json"), fmt.Sprintf("[%q]\n", key))
	}

	// The neighbours: a var file there at the plan, unchanged, applies; the
	// same file edited after the hold is refused by name.
	testkit.WriteFile(t, filepath.Join(dir, "n.auto.tfvars"), "n = \"2\"\n")
	id := runIDOf(t, h.mustSSH("carol", "launch", "keyvar", "--json"))
	h.waitStatus(id, store.StatusAwaitingApproval)
	h.mustSSH("bob", "approve", id, "--digest", h.show("bob", id).Proposal.Digest)
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusStale)
	if v := h.show("bob", id); v.Run.Status != store.StatusSucceeded {
		t.Fatalf("an apply with its var file unchanged: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", id))
	}
	testkit.WriteFile(t, filepath.Join(dir, "n.auto.tfvars"), "n = \"3\"\n")
	id = runIDOf(t, h.mustSSH("carol", "launch", "keyvar", "--json"))
	h.waitStatus(id, store.StatusAwaitingApproval)
	digest := h.show("bob", id).Proposal.Digest
	testkit.WriteFile(t, filepath.Join(dir, "n.auto.tfvars"), fmt.Sprintf("n = \"3\"\nkey_command = [%q]\n", script))
	h.mustSSH("bob", "approve", id, "--digest", digest)
	h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusStale)
	testkit.AssertNeverRan(t, marker, "after the var file was edited")
	if v := h.show("bob", id); v.Run.Status != store.StatusFailed || !strings.Contains(v.Message, "n.auto.tfvars changed") {
		t.Fatalf("an apply whose var file was edited after the hold: %s: %s", v.Status, v.Message)
	}
}

// On a relay worker, the same: an .auto.tfvars placed in the worker's
// working directory after the gated apply's plan was held fails the run on
// the worker before init, naming the file, and the command it names never
// runs; the worker that planned reports the variable files it planned with
// and the apply phase's job carries them. Its neighbour, nothing changed,
// applies on the worker.
func TestARelayedReleasedApplyRunsNoVariableFilePlacedAfterItsPlan(t *testing.T) {
	t.Parallel()
	h, keys, identity := relayHarness(t, `
template "rkeyvar" {
  project = "infra"
  command = "infra/keyvar"
  queue   = "eu"
}
rule "hold-rkeyvar" {
  templates        = ["rkeyvar"]
  require_approval = true
}
`)
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	key := keyProgram(t)
	dir := filepath.Join(w1.Projects["infra"].Path, "infra", "keyvar")
	writeKeyVarDir(t, dir, key)
	writeKeyVarDir(t, filepath.Join(h.project, "infra", "keyvar"), key)
	startWorker(t, w1)
	script, marker := testkit.MarkerProgram(t)
	for _, changed := range []bool{true, false} {
		id := runIDOf(t, h.mustSSH("alice", "launch", "rkeyvar", "--json"))
		h.waitStatus(id, store.StatusAwaitingApproval, store.StatusFailed)
		held, _ := h.db().GetRun(id)
		if held.Proposal == nil {
			t.Fatalf("not held: %s: %s\n%s", held.Status, held.Message, h.mustSSH("alice", "log", id))
		}
		if changed {
			testkit.WriteFile(t, filepath.Join(dir, "evil.auto.tfvars"), fmt.Sprintf("key_command = [%q]\n", script))
			testkit.AssertWouldRun(t, dir, marker, "state", "pull", "-no-color")
		}
		h.mustSSH("bob", "approve", id, "--digest", held.Proposal.Digest)
		h.waitStatus(id, store.StatusSucceeded, store.StatusFailed, store.StatusStale)
		done, _ := h.db().GetRun(id)
		log := h.mustSSH("alice", "log", id)
		testkit.AssertNeverRan(t, marker, "on the worker after the plan was held")
		if !changed {
			if done.Status != store.StatusSucceeded || !strings.Contains(log, "Apply complete!") {
				t.Fatalf("an apply with nothing changed: %s: %s\n%s", done.Status, done.Message, log)
			}
			continue
		}
		if done.Status != store.StatusFailed || !strings.Contains(done.Message, "evil.auto.tfvars is new") || !strings.Contains(done.Message, "on worker w1") {
			t.Fatalf("released after the change: %s: %s\n%s", done.Status, done.Message, log)
		}
		os.Remove(filepath.Join(dir, "evil.auto.tfvars"))
	}
}

// The workspace selected in the working directory's .terraform/environment
// after a gated apply's plan was held fails the run before any process of
// its apply phase starts, naming the file: the encryption block may choose
// its key provider's command by terraform.workspace, and a process started
// in another workspace ran the other branch's program.
func TestAReleasedApplyRunsInNoWorkspaceSelectedAfterItsPlan(t *testing.T) {
	t.Parallel()
	h := writeHarness(t, "", `
template "wsenc" {
  project = "infra"
  command = "infra/wsenc"
}
rule "everything" {
  templates        = ["wsenc"]
  require_approval = true
}
`)
	key := keyProgram(t)
	script, marker := testkit.MarkerProgram(t)
	dir := filepath.Join(h.project, "infra", "wsenc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(dir, "main.tf"), fmt.Sprintf(`terraform {
  encryption {
    key_provider "external" "k" {
      command = terraform.workspace == "default" ? [%q] : [%q]
    }
    method "aes_gcm" "m" {
      keys = key_provider.external.k
    }
    state {
      method = method.aes_gcm.m
    }
  }
}
resource "terraform_data" "x" { input = "x" }
`, key, script))
	h.start()
	id := runIDOf(t, h.mustSSH("carol", "launch", "wsenc", "--json"))
	h.waitStatus(id, store.StatusAwaitingApproval, store.StatusFailed)
	v := h.show("bob", id)
	if v.Run.Status != store.StatusAwaitingApproval {
		t.Fatalf("the plan was not held: %s: %s\n%s", v.Status, v.Message, h.mustSSH("bob", "log", id))
	}
	if err := os.MkdirAll(filepath.Join(dir, ".terraform"), 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(dir, ".terraform", "environment"), "other")
	testkit.AssertWouldRun(t, dir, marker, "state", "pull", "-no-color")
	h.mustSSH("bob", "approve", id, "--digest", v.Proposal.Digest)
	h.waitStatus(id, store.StatusFailed, store.StatusSucceeded, store.StatusStale)
	v = h.show("bob", id)
	testkit.AssertNeverRan(t, marker, "after another workspace was selected")
	if v.Run.Status != store.StatusFailed || !strings.Contains(v.Message, filepath.Join(".terraform", "environment")+" is new") {
		t.Fatalf("run %s is %s: %s", id, v.Status, v.Message)
	}
}
