package main

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// version names the module version and the commit from the build info,
// falls back to -ldflags' values, and the real binary prints one line.
func TestVersion(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3b58d101e4d2"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "switchtender v1.2.3 (commit 3b58d101e4d2, 2026-12-01T10:00:00Z, with uncommitted changes, go1.26.8)"
	if got := formatVersion(info, "dev", ""); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bare := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	if got := formatVersion(bare, "v2.0.0", "abc123"); got != "switchtender v2.0.0 (commit abc123)" {
		t.Errorf("with ldflags: %s", got)
	}
	if got := formatVersion(bare, "dev", ""); !strings.Contains(got, "commit unknown") {
		t.Errorf("without VCS: %s", got)
	}
	out, err := exec.Command(binary, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "switchtender ") || !strings.Contains(string(out), "commit ") || strings.Count(string(out), "\n") != 1 {
		t.Errorf("switchtender version: %v %q", err, out)
	}
}
