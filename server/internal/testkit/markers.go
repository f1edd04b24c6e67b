package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// MarkerProgram writes a shell script that leaves a marker file when it
// runs (a program nobody weighed), and returns the script's path and the
// marker's.
func MarkerProgram(t testing.TB) (script, marker string) {
	t.Helper()
	dir := t.TempDir()
	script, marker = filepath.Join(dir, "marker.sh"), filepath.Join(dir, "it-ran")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

// MarkerEncryption is a terraform block whose state encryption takes its
// key from OpenTofu's built-in external key provider running script: any
// OpenTofu process started where it is read runs script first.
func MarkerEncryption(script string) string {
	return fmt.Sprintf(`terraform {
  encryption {
    key_provider "external" "k" {
      command = [%q]
    }
    method "aes_gcm" "m" {
      keys = key_provider.external.k
    }
    state {
      method = method.aes_gcm.m
    }
  }
}
`, script)
}

// Tofu is the pinned OpenTofu the tests' runs find first on PATH.
func Tofu(t testing.TB) string {
	t.Helper()
	for _, dir := range filepath.SplitList(EnvPath()) {
		if fi, err := os.Stat(filepath.Join(dir, "tofu")); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(dir, "tofu")
		}
	}
	t.Fatal("no tofu on the tests' PATH")
	return ""
}

// AssertWouldRun fails the test unless OpenTofu started in dir with args
// runs the program the marker comes from: the change placed there does
// run it, so a test that it never ran can fail.
func AssertWouldRun(t testing.TB, dir, marker string, args ...string) {
	t.Helper()
	cmd := exec.Command(Tofu(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, Environ()...), "CHECKPOINT_DISABLE=1")
	out, _ := cmd.CombinedOutput()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the program placed in %s does not run when OpenTofu starts there, so this test proves nothing:\n%s", dir, out)
	}
	os.Remove(marker)
}

// AssertNeverRan fails the test if the marker exists.
func AssertNeverRan(t testing.TB, marker, when string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the program placed in the checkout %s ran", when)
	}
}

// EnvPath is the PATH of Environ: the pinned OpenTofu's directory first.
func EnvPath() string {
	path := ""
	for _, e := range environ {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	return path
}
