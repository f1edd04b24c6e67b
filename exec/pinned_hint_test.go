package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// A tofu missing from the PATH names the pinned OpenTofu the demo built,
// when that build exists, so the directory to add is known; terraform, and
// a cache without the build, get no such hint. It once said only "add its
// directory to that PATH", and a user who had just run the demo (which
// finds the pinned build by itself) did not know which directory that was.
func TestAMissingTofuNamesThePinnedBuild(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("SWITCHTENDER_CACHE", cache)
	empty := t.TempDir()
	tofu := Engine{Name: "opentofu", Binary: "tofu"}
	if _, err := tofu.Find(empty); err == nil || strings.Contains(err.Error(), "pinned") {
		t.Errorf("no pinned build: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(tofubin.CachedPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tofubin.CachedPath(), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := tofu.Find(empty)
	if err == nil || !strings.Contains(err.Error(), "add "+filepath.Dir(tofubin.CachedPath())+" to that PATH") {
		t.Errorf("with the pinned build: %v", err)
	}
	if _, err := (Engine{Name: "terraform", Binary: "terraform"}).Find(empty); err == nil || strings.Contains(err.Error(), "pinned") {
		t.Errorf("terraform: %v", err)
	}
}
