package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// commit may be set at build time with -ldflags "-X main.commit=SHA" when
// the build info has no VCS stamp (GOFLAGS=-buildvcs=false, or a build in a
// git worktree, which the go command does not stamp).
var commit = ""

// versionLine is `switchtender version`'s output, from this binary's build
// info (see formatVersion).
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{}
	}
	return formatVersion(info, version, commit)
}

// formatVersion renders info as one line: the module version (or
// override when it is not "dev", as -ldflags' main.version sets it), the
// VCS commit and its time (or fallbackCommit, or a note that the build
// has none), whether the tree had uncommitted changes, and the Go version.
func formatVersion(info *debug.BuildInfo, override, fallbackCommit string) string {
	v := info.Main.Version
	if override != "dev" || v == "" {
		v = override
	}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	var parts []string
	switch {
	case vcs["vcs.revision"] != "":
		parts = append(parts, "commit "+vcs["vcs.revision"])
	case fallbackCommit != "":
		parts = append(parts, "commit "+fallbackCommit)
	default:
		parts = append(parts, "commit unknown: built without VCS information (-buildvcs=false, or in a git worktree)")
	}
	if t := vcs["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	if vcs["vcs.modified"] == "true" {
		parts = append(parts, "with uncommitted changes")
	}
	if info.GoVersion != "" {
		parts = append(parts, info.GoVersion)
	}
	return fmt.Sprintf("switchtender %s (%s)", v, strings.Join(parts, ", "))
}
