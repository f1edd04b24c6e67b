package server

// Hostile tests of DESIGN invariant 3: each puts a canary
// secret where the README says it is masked and looks for it in the stored
// log, show --json, runs --json, the console and every file of the data
// directory. A failing test is a leak.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attackSinks gathers what a viewer and the data directory hold for runs
// ids: log, show --json, runs --json, the console, and (server stopped)
// every file under the data directory.
func attackSinks(t *testing.T, h *harness, ids ...string) map[string][]byte {
	t.Helper()
	sinks := map[string][]byte{}
	for _, id := range ids {
		sinks["log "+id] = []byte(h.mustSSH("bob", "log", id))
		sinks["show "+id+" --json"] = []byte(h.mustSSH("bob", "show", id, "--json"))
		sinks["show "+id] = []byte(h.mustSSH("bob", "show", id))
		sinks["the console's view of run "+id] = consoleText(t, h, id)
	}
	sinks["runs --json"] = []byte(h.mustSSH("bob", "runs", "--json"))
	sinks["audit --json"] = []byte(h.mustSSH("bob", "audit", "--json"))
	h.stop()
	for _, f := range h.dataFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sinks[f] = b
	}
	return sinks
}

// findRaw reports every sink holding any of the exact strings.
func findRaw(sinks map[string][]byte, strs ...string) []string {
	var found []string
	for where, b := range sinks {
		for _, s := range strs {
			if strings.Contains(string(b), s) {
				found = append(found, fmt.Sprintf("%s holds %q", where, s))
			}
		}
	}
	return found
}

func reportLeaks(t *testing.T, found []string, sinks map[string][]byte, show string) {
	t.Helper()
	for _, f := range found {
		t.Error(f)
	}
	if len(found) > 0 {
		t.Logf("%s:\n%s", show, sinks[show])
	}
}

// A sensitive number answer (a card number, 17 digits) that a validation rule
// rejects: OpenTofu's diagnostic prints the value in Go's %g with 10
// significant digits ("var.pin is 4.111111111e+16"), a rendering the masker
// registers too. Once, it did not, and the digits showed.
func TestASensitiveNumberIsMaskedInADiagnostic(t *testing.T) {
	h := newHarness(t, `
template "atk-num" {
  project = "infra"
  command = "infra/atk-num"
  survey "pin" {
    type      = "number"
    sensitive = true
  }
}
`)
	const pin = "41111111111111117"
	out, _, _ := h.ssh("alice", "launch", "atk-num", "--dry-run", "--var", "pin="+pin, "--wait")
	if !strings.Contains(out, "run 1: failed") {
		t.Fatalf("the dry run did not fail on the validation rule:\n%s", out)
	}
	sinks := attackSinks(t, h, "1")
	sinks["launch --wait"] = []byte(out)
	reportLeaks(t, append(leaks("any sink", []byte(out), []string{pin}),
		findRaw(sinks, "4.111111111e+16", "4111111111")...), sinks, "log 1")
}

// A value only the prior state marks sensitive, nested in an object whose
// keys are "value" and "type": it is masked. Once, gate.StateSensitiveValues
// took any such object for a dynamic-type wrapper, so the canary under "type"
// was never registered and the dry run's plan printed it.
func TestAStateSensitiveValueNestedUnderTypeIsMasked(t *testing.T) {
	h := newHarness(t, `
template "atk-nest" {
  project = "infra"
  command = "infra/atk-nest"
  survey "generation" {
    type    = "string"
    default = "1"
  }
}
`)
	h.mustSSH("alice", "launch", "atk-nest", "--wait")
	out := h.mustSSH("alice", "launch", "atk-nest", "--dry-run", "--var", "generation=2", "--wait")
	if !strings.Contains(out, "must be replaced") {
		t.Fatalf("the dry run planned no replacement:\n%s", out)
	}
	sinks := attackSinks(t, h, "1", "2")
	sinks["launch --wait"] = []byte(out)
	reportLeaks(t, findRaw(sinks, "nested-canary-5a5a9b9b"), sinks, "log 2")
}

// A local backend with workspace_dir, in a workspace the team selected by
// hand: the values its state marks sensitive are masked. Once, localStatePath
// ignored workspace_dir and read a state that did not exist, so those values
// were never registered and the dry run's plan printed them.
func TestStateSensitiveValuesOfAWorkspaceDirAreMasked(t *testing.T) {
	h := newHarness(t, `
template "atk-ws" {
  project = "infra"
  command = "infra/atk-ws"
  survey "generation" {
    type    = "string"
    default = "1"
  }
}
`)
	h.tofuByHand("infra/atk-ws", "init", "-input=false", "-no-color")
	h.tofuByHand("infra/atk-ws", "workspace", "new", "-no-color", "blue")
	h.mustSSH("alice", "launch", "atk-ws", "--wait")
	if _, err := os.Stat(filepath.Join(h.project, "infra/atk-ws/envs/blue/terraform.tfstate")); err != nil {
		t.Fatalf("the run did not write the workspace's state: %v", err)
	}
	out := h.mustSSH("alice", "launch", "atk-ws", "--dry-run", "--var", "generation=2", "--wait")
	sinks := attackSinks(t, h, "1", "2")
	sinks["launch --wait"] = []byte(out)
	reportLeaks(t, findRaw(sinks, "ws-canary-0d0e0a0f"), sinks, "log 2")
}

const atkProvTemplate = `
template "atk-prov" {
  project = "infra"
  command = "infra/atk-prov"
  survey "slow" {
    type      = "string"
    sensitive = true
    default   = "none"
  }
  survey "trail" {
    type      = "string"
    sensitive = true
    default   = "none"
  }
  survey "cr" {
    type      = "string"
    sensitive = true
    default   = "none"
  }
}
`

// A secret answer ending in a space (legal in a password): OpenTofu's UI
// trims trailing white space from every provisioner output line, so the
// provisioner's output holds the secret without its last byte, a form the
// masker registers too. Once, it did not (it trimmed lines only of multi-line
// values), and that form showed.
func TestASecretEndingInASpaceIsMaskedWhenTofuTrimsIt(t *testing.T) {
	h := newHarness(t, atkProvTemplate)
	const secret = "trail-canary-6d6d2e2e "
	h.mustSSH("alice", "launch", "atk-prov", "--var", "trail="+secret, "--wait")
	sinks := attackSinks(t, h, "1")
	reportLeaks(t, findRaw(sinks, strings.TrimSpace(secret)), sinks, "log 1")
}

// A secret answer holding a carriage return: OpenTofu's UI splits provisioner
// output at "\r" as at "\n" (hook_ui.go scanLines), and the masker makes line
// forms for both. Once, it made them only for "\n".
func TestASecretHoldingACarriageReturnIsMaskedWhenTofuSplitsIt(t *testing.T) {
	h := newHarness(t, atkProvTemplate)
	const secret = "cr-canary-left-3f3f\rcr-canary-right-4a4a"
	_, errOut, code := h.sshStdin("alice", `{"cr":"cr-canary-left-3f3f\rcr-canary-right-4a4a"}`, "launch", "atk-prov", "--answers", "-", "--wait")
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	_ = secret
	sinks := attackSinks(t, h, "1")
	reportLeaks(t, findRaw(sinks, "cr-canary-left-3f3f", "cr-canary-right-4a4a"), sinks, "log 1")
}

// A sensitive map answer whose keys are the secret part (user names or
// hostnames mapped to roles): the plan prints the map key by key and its keys
// are masked as well as its values. Once, only the values were (`+
// mapkey-canary-… = "***"`), a limit the README never stated. The same run
// checks that a JSON document answer's string and number are masked too.
func TestASensitiveMapsKeysAreMasked(t *testing.T) {
	h := newHarness(t, `
template "atk-json" {
  project = "infra"
  command = "infra/atk-json"
  survey "doc" {
    type      = "string"
    sensitive = true
  }
  survey "keyed" {
    type      = "map"
    sensitive = true
  }
}
`)
	doc := `{"client_secret":"json-canary-3c3c4d4d","account_pin":98765432101}`
	keyed := `{"mapkey-canary-7f7f8e8e":"admin"}`
	body := fmt.Sprintf(`{"doc":%q,"keyed":%s}`, doc, keyed)
	out, errOut, code := h.sshStdin("alice", body, "launch", "atk-json", "--dry-run", "--answers", "-", "--wait")
	if code != 0 {
		t.Fatalf("launch: exit %d\n%s\n%s", code, out, errOut)
	}
	sinks := attackSinks(t, h, "1")
	sinks["launch --wait"] = []byte(out)
	reportLeaks(t, findRaw(sinks, "json-canary-3c3c4d4d", "98765432101", "mapkey-canary-7f7f8e8e"), sinks, "log 1")
}

// Two working directories share one state (backend "local" with a path
// outside each, as two directories using one remote backend key would). A
// sensitive answer given to a run of the first directory is the "before" side
// of the next plan in the second: it is masked there too. Once, it showed,
// because the remembered answers were keyed by working directory and the
// state does not mark the plain variable sensitive.
func TestASecretIsMaskedInAnotherDirectoryThatSharesItsState(t *testing.T) {
	h := newHarness(t, `
template "atk-share-a" {
  project = "infra"
  command = "infra/atk-shareA"
  survey "pw" {
    type      = "string"
    sensitive = true
  }
}
template "atk-share-b" {
  project = "infra"
  command = "infra/atk-shareB"
  survey "pw" {
    type      = "string"
    sensitive = true
  }
}
`)
	h.mustSSH("alice", "launch", "atk-share-a", "--var", "pw=share-canary-old-1a2b3c4d", "--wait")
	out := h.mustSSH("alice", "launch", "atk-share-b", "--dry-run", "--var", "pw=share-canary-new-5e6f7a8b", "--wait")
	sinks := attackSinks(t, h, "1", "2")
	sinks["launch --wait"] = []byte(out)
	reportLeaks(t, findRaw(sinks, "share-canary-old-1a2b3c4d", "share-canary-new-5e6f7a8b"), sinks, "log 2")
}

// plan_gate policies see the plan's values in clear (tofu show -json holds
// sensitive ones unredacted), and what a policy says goes to the proposal's
// hold reasons, the run's message, show, the console and the store only after
// passing the masker: a hold message that quotes an attribute, a built-in
// error (evaluated strictly) that quotes its argument, and a hold set holding
// a non-string, which messages() quotes with %v, each carrying a secret
// answer the masker knows. Once, they went there without passing it.
func TestPolicyMessagesAreMasked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("package switchtender.plan\n\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	quote := write("quote.rego", `hold contains msg if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
	msg := sprintf("review %s (input %v)", [rc.address, rc.change.after.input])
}
`)
	builtin := write("builtin.rego", `hold contains "too large" if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
	to_number(rc.change.after.input) > 10
}
`)
	nonString := write("nonstring.rego", `hold contains rc.change.after if {
	some rc in input.plan.resource_changes
	rc.type == "terraform_data"
}
`)
	h := newHarness(t, `
template "atk-share-a" {
  project = "infra"
  command = "infra/atk-shareA"
  survey "pw" {
    type      = "string"
    sensitive = true
  }
}
rule "quote" {
  plan_gate = "`+quote+`"
}
rule "builtin" {
  plan_gate = "`+builtin+`"
}
rule "nonstring" {
  plan_gate = "`+nonString+`"
}
`)
	const secret = "policy-canary-9e9e1010"
	out := h.mustSSH("alice", "launch", "atk-share-a", "--var", "pw="+secret, "--wait")
	if !strings.Contains(out, "awaiting_approval") {
		t.Fatalf("not held:\n%s", out)
	}
	for _, hold := range h.show("bob", "1").Proposal.Holds {
		if strings.Contains(hold.Reason, secret) {
			t.Errorf("rule %s's hold reason quotes the secret: %q", hold.Rule, hold.Reason)
		}
	}
	sinks := attackSinks(t, h, "1")
	sinks["launch --wait"] = []byte(out)
	reportLeaks(t, findRaw(sinks, secret), sinks, "show 1")
}
