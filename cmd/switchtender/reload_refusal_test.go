package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// brokenRego does not compile (OPA names line 5); denyRego does.
const (
	brokenRego = "package switchtender.plan\n\ndeny contains msg if {\n  msg := \n}\n"
	denyRego   = "package switchtender.plan\n\ndeny contains msg if {\n  some rc in input.plan.resource_changes\n  \"delete\" in rc.change.actions\n  msg := \"no deletes\"\n}\n"
)

// On the real binary, a reload to a configuration check refuses is refused
// on both paths and says why: `switchtender reload` exits 1 naming the
// policy and sends nothing; a SIGHUP to serve is refused in the operator
// log and in the outcome file, and the old configuration stays (its users
// still get in); a good file then reloads and `reload` exits 0 saying so.
// The break it guards: reload sent SIGHUP and exited 0, and the server
// took the policy that did not compile, turning its deny into a hold.
func TestReloadAndSIGHUPRefuseAConfigurationCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	deny, broken := filepath.Join(dir, "deny.rego"), filepath.Join(dir, "broken.rego")
	os.WriteFile(deny, []byte(denyRego), 0o600)
	os.WriteFile(broken, []byte(brokenRego), 0o600)
	n := newNodeWith(t, nodeOptions{extra: "rule \"no-deletes\" {\n  plan_gate = \"" + deny + "\"\n}\n"})
	good, _ := os.ReadFile(n.cfgPath)
	os.WriteFile(n.cfgPath, []byte(strings.Replace(string(good), deny, broken, 1)), 0o600)

	if out, code := runBinary(t, "check", "--config", n.cfgPath); code != 1 || !strings.Contains(out, "error: ") || !strings.Contains(out, "broken.rego:5") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	out, code := runBinary(t, "reload", "--config", n.cfgPath)
	if code != 1 || !strings.Contains(out, "broken.rego:5") || !strings.Contains(out, "nothing was reloaded") {
		t.Errorf("reload: exit %d\n%s", code, out)
	}
	if _, err := readReloadOutcome(n.data); err == nil {
		t.Error("reload signalled the server for a configuration check refuses")
	}

	if err := n.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	n.waitServerLog("reload refused: the configuration has errors serve refuses")
	outcome := waitOutcome(t, n.data)
	if outcome.OK || !strings.Contains(outcome.Message, "broken.rego:5") {
		t.Errorf("outcome of the SIGHUP: %+v", outcome)
	}
	if _, errOut, code := n.ssh("bob", "runs"); code != 0 {
		t.Errorf("bob after the refused reload: exit %d %s", code, errOut)
	}

	os.WriteFile(n.cfgPath, good, 0o600)
	if out, code := runBinary(t, "reload", "--config", n.cfgPath); code != 0 || !strings.Contains(out, "reloaded") {
		t.Errorf("reload of the good file: exit %d\n%s", code, out)
	}
}

// waitOutcome waits for the outcome file in dataDir.
func waitOutcome(t *testing.T, dataDir string) reloadOutcome {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := readReloadOutcome(dataDir)
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reload outcome: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serve refuses to start, without --strict, on a configuration with a
// plan_gate that does not compile, naming the policy's file and line and
// listening on nothing; check reports a metrics_listen off loopback as a
// warning (exit 1, the sentence serve logs). The break it guards: serve
// started with a warning and the rule held what the policy meant to
// refuse; check passed a configuration serve warned about.
func TestServeRefusesAndCheckWarnsAsTheJudgementSays(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.rego"), []byte(brokenRego), 0o600)
	cfg := filepath.Join(dir, "st.hcl")
	os.WriteFile(cfg, []byte("server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \""+filepath.Join(dir, "data")+"\"\n}\n"+
		"rule \"policy\" {\n  plan_gate = \"plan.rego\"\n}\n"), 0o600)
	out, code := runBinary(t, "serve", "--config", cfg)
	if code != 1 || strings.Contains(out, "serving SSH") || !strings.Contains(out, "plan.rego:5") || !strings.Contains(out, "nothing was started") {
		t.Errorf("serve: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "switchtender.db")); err == nil {
		t.Error("serve opened a store for a configuration it refuses")
	}
	exposed := filepath.Join(dir, "exposed.hcl")
	os.WriteFile(exposed, []byte("server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \""+filepath.Join(dir, "data2")+"\"\n  metrics_listen = \"0.0.0.0:9464\"\n}\n"), 0o600)
	out, code = runBinary(t, "check", "--config", exposed)
	if code != 1 || !strings.Contains(out, "warning: metrics_listen = \"0.0.0.0:9464\" is not a loopback address") || !strings.Contains(out, "serve starts with it") {
		t.Errorf("check of metrics_listen off loopback: exit %d\n%s", code, out)
	}
}
