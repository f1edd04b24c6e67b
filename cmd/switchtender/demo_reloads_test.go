package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `switchtender reload` on the demo's own file reloads the running demo.
// The demo once ignored SIGHUP ("not started from a configuration file"),
// so reload waited a minute and said no outcome was written, while the
// demo's file invited editing it.
func TestTheDemoReloadsItsConfigurationFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command(binary, "demo", "--data", dir, "--listen", "127.0.0.1:0")
	cmd.Env = append(append([]string{}, serverEnv...), "HOME="+t.TempDir())
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGINT); _ = cmd.Wait() }()
	pid := filepath.Join(dir, "data", pidFileName)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(pid); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo wrote no pid file:\n%s", out.String())
		}
	}
	got, code := runBinary(t, "reload", "--config", filepath.Join(dir, "switchtender.hcl"))
	if code != 0 || !strings.Contains(got, "the configuration was replaced") {
		t.Fatalf("reload of the demo: exit %d\n%s\ndemo:\n%s", code, got, out.String())
	}
}

// A clean `check --json` lists its problems as [], never null, as its
// schema says. It once printed "problems": null.
func TestCheckJSONListsNoProblemsAsAnEmptyList(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "st.hcl")
	os.WriteFile(cfg, []byte("server {\n  ssh_listen = \"127.0.0.1:0\"\n  data_dir = \""+filepath.Join(dir, "data")+"\"\n}\n"), 0o600)
	got, code := runBinary(t, "check", "--config", cfg, "--json")
	var report map[string]any
	if err := json.Unmarshal([]byte(got), &report); err != nil || code != 0 {
		t.Fatalf("check --json: exit %d, %v\n%s", code, err, got)
	}
	if list, ok := report["problems"].([]any); !ok || len(list) != 0 {
		t.Errorf("problems = %#v, want []", report["problems"])
	}
}
