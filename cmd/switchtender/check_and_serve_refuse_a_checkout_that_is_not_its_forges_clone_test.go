package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A project with a forge whose checkout is a clone of another repository:
// check names the project block's file:line and exits 1, and serve (not
// only serve --strict) refuses to start with the same problem, since the
// forge side would fetch another repository's pull requests.
func TestCheckAndServeRefuseACheckoutThatIsNotItsForgesClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on the PATH")
	}
	cfg, dir := checkFixtureConfig(t, "")
	checkout := t.TempDir()
	for _, args := range [][]string{{"init", "--quiet"}, {"remote", "add", "origin", "https://git.example.com/platform/other.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", checkout}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	src, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, []byte(`forge "corp" {
  type           = "gitea"
  url            = "https://git.example.com"
  token          = "tok-forge-3Kd8Vq2M"
  webhook_secret = "whsec-forge-9Pz4Lx7Tb"
}
project "web" {
  path       = "`+checkout+`"
  forge      = "corp"
  repository = "platform/web"
}
`)...)
	if err := os.WriteFile(cfg, src, 0o600); err != nil {
		t.Fatal(err)
	}
	line := cfg + ":11"
	out, code := runBinary(t, "check", "--config", cfg)
	if code != 1 || !strings.Contains(out, "error: project \"web\" ("+line+")") || !strings.Contains(out, "another repository") {
		t.Fatalf("check: exit %d, want 1 with the project's error at %s:\n%s", code, line, out)
	}
	serveOut, serveCode := runBinary(t, "serve", "--config", cfg)
	if serveCode == 0 || strings.Contains(serveOut, "serving") || !strings.Contains(serveOut, "another repository") {
		t.Fatalf("serve started, or refused for another reason, with a checkout of another repository: exit %d\n%s", serveCode, serveOut)
	}
	for _, secret := range []string{"tok-forge-3Kd8Vq2M", "whsec-forge-9Pz4Lx7Tb"} {
		if strings.Contains(out+serveOut, secret) {
			t.Errorf("check or serve printed the forge's secret %q", secret)
		}
	}
	if _, err := os.Stat(dir + "/data/switchtender.pid"); err == nil {
		t.Errorf("serve wrote a pid file: it started")
	}
}
