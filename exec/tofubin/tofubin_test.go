package tofubin

import (
	"bytes"
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEnsureFindsCachedAndRunsVersion hides tofu from the PATH, so Ensure
// must find the cached build (built once by an earlier Ensure, never skipped),
// and checks that it prints Version.
func TestEnsureFindsCachedAndRunsVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	t.Setenv("SWITCHTENDER_TOFU", "")
	goBin, err := osexec.LookPath("go")
	if err != nil {
		t.Fatalf("go command needed to build tofu: %v", err)
	}
	t.Setenv("PATH", filepath.Dir(goBin)) // go, but no tofu
	var progress bytes.Buffer
	bin, err := Ensure(ctx, &progress)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if bin != CachedPath() {
		t.Fatalf("Ensure = %s, want the cached build %s", bin, CachedPath())
	}
	t.Logf("progress: %q", progress.String())
	cmd := osexec.CommandContext(ctx, bin, "version")
	for _, kv := range os.Environ() { // this machine's TF_CLI_CONFIG_FILE names a missing file
		if !strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tofu version: %v\n%s", err, out)
	}
	// A build without the release ldflags (as an older Ensure or a manual
	// go build makes) calls itself Version-dev.
	if !regexp.MustCompile(`^OpenTofu ` + regexp.QuoteMeta(Version) + `(-dev)?\n`).Match(out) {
		t.Fatalf("tofu version printed %q, want it to start with %q", out, "OpenTofu "+Version)
	}
}

func TestEnsureHonoursSwitchtenderTofu(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "mytofu")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SWITCHTENDER_TOFU", fake)
	got, err := Ensure(context.Background(), nil)
	if err != nil || got != fake {
		t.Fatalf("Ensure = %q, %v; want %q", got, err, fake)
	}
	t.Setenv("SWITCHTENDER_TOFU", filepath.Join(dir, "missing"))
	if _, err := Ensure(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "SWITCHTENDER_TOFU") {
		t.Fatalf("Ensure with a missing SWITCHTENDER_TOFU: err = %v, want an error naming it", err)
	}
}

func TestEnsurePrefersPath(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "tofu")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SWITCHTENDER_TOFU", "")
	t.Setenv("PATH", dir)
	if got, err := Ensure(context.Background(), nil); err != nil || got != fake {
		t.Fatalf("Ensure = %q, %v; want the tofu on PATH %q", got, err, fake)
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv("SWITCHTENDER_CACHE", "/x/cache")
	if got := CachedPath(); got != "/x/cache/tofu/"+Version+"/tofu" {
		t.Fatalf("CachedPath = %s", got)
	}
	t.Setenv("SWITCHTENDER_CACHE", "")
	ucd, _ := os.UserCacheDir()
	if got := CacheDir(); got != filepath.Join(ucd, "switchtender") {
		t.Fatalf("CacheDir = %s, want %s", got, filepath.Join(ucd, "switchtender"))
	}
}

func TestPathWith(t *testing.T) {
	got := PathWith("/opt/tofu/bin/tofu", "/usr/bin:/opt/tofu/bin:/bin")
	if want := "/opt/tofu/bin:/usr/bin:/bin"; got != want {
		t.Fatalf("PathWith = %q, want %q", got, want)
	}
	if got := PathWith("/opt/t/tofu", ""); got != "/opt/t" {
		t.Fatalf("PathWith with empty PATH = %q", got)
	}
}

func TestLockIsExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	unlock, err := lock(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if _, err := lock(ctx, p); err == nil {
		t.Fatal("second lock taken while the first is held")
	}
	unlock()
	u2, err := lock(context.Background(), p)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	u2()
}
