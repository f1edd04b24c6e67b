package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A policy that does not compile: `check --json` exits 1 and names the
// rule's file:line and the policy file and line; a configuration that does
// not load is one problem per error, each with file:line; `serve --strict`
// on the policy refuses to start, exit 1, without listening.
func TestCheckJSONAndStrict(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.rego"), []byte("package switchtender\n\ndeny contains msg if {\n  msg := \n}\n"), 0o600)
	cfg := filepath.Join(dir, "st.hcl")
	os.WriteFile(cfg, []byte("server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \""+filepath.Join(dir, "data")+"\"\n}\n"+
		"rule \"policy\" {\n  plan_gate = \"plan.rego\"\n}\n"), 0o600)
	out, code := runBinary(t, "check", "--config", cfg, "--json")
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || len(rep.Problems) != 1 {
		t.Fatalf("check --json: exit %d, %v\n%s", code, err, out)
	}
	p := rep.Problems[0]
	if p.Where != cfg+":5" || !strings.Contains(p.What, "plan.rego:5") {
		t.Errorf("problem %+v, want it at %s:5 naming plan.rego:5", p, cfg)
	}
	broken := filepath.Join(dir, "broken.hcl")
	os.WriteFile(broken, []byte("server {\n  metrics_listen = \"x\"\n  max_parallel = 0\n}\n"), 0o600)
	out, code = runBinary(t, "check", "--config", broken, "--json")
	rep = checkReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || len(rep.Problems) != 2 ||
		rep.Problems[0].Where != broken+":2" || rep.Problems[1].Where != broken+":3" {
		t.Errorf("check --json of a config that does not load: exit %d %v\n%s", code, err, out)
	}
	out, code = runBinary(t, "serve", "--config", cfg, "--strict")
	if code != 1 || !strings.Contains(out, "nothing was started") || strings.Contains(out, "serving SSH") || !strings.Contains(out, "plan.rego:5") {
		t.Errorf("serve --strict: exit %d\n%s", code, out)
	}
}

// runBinary runs the built switchtender with args, bounded in time, and
// returns its output (stdout then stderr; stdout alone when the last
// argument is --json) and exit code.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = serverEnv
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if len(args) > 0 && args[len(args)-1] == "--json" {
		return out.String(), code
	}
	return out.String() + errOut.String(), code
}
