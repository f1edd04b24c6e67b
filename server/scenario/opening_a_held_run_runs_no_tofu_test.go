package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/internal/testkit"
)

// countingTofu puts, first on the PATH of h's runs, a tofu that appends a
// line to the returned file each time it starts and then runs the pinned
// OpenTofu.
func countingTofu(h *harness) string {
	h.t.Helper()
	dir := filepath.Join(h.dir, "counting-tofu")
	count := filepath.Join(dir, "starts")
	script := fmt.Sprintf("#!/bin/sh\necho start >> %q\nexec %q \"$@\"\n", count, testkit.Tofu(h.t))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tofu"), []byte(script), 0o755); err != nil {
		h.t.Fatal(err)
	}
	h.tune = func(o *server.Options) {
		for i, e := range o.Environ {
			if path, ok := strings.CutPrefix(e, "PATH="); ok {
				o.Environ[i] = "PATH=" + dir + string(filepath.ListSeparator) + path
			}
		}
	}
	return count
}

// tofuStarts is how many times the counting tofu started.
func tofuStarts(t *testing.T, count string) int {
	t.Helper()
	b, err := os.ReadFile(count)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start")
}

// Opening a held run, by every door and again after a restart (the change
// set then comes from the store, not memory), starts no tofu process and
// adds nothing to the run's steps or log: the change set was computed once,
// when the plan was measured.
func TestOpeningAHeldRunRunsNoTofu(t *testing.T) {
	t.Parallel()
	var count string
	h, _ := heldCanary(t, func(h *harness) { count = countingTofu(h) })
	before := tofuStarts(t, count)
	if before == 0 {
		t.Fatal("the counting tofu never started, so this test proves nothing")
	}
	run, err := h.db().GetRun("2")
	if err != nil {
		t.Fatal(err)
	}
	logSize, _ := h.db().LogSize("2")
	open := func() {
		for _, words := range [][]string{{"show", "2"}, {"show", "2", "--json"}, {"show", "2", "--changes"}, {"show", "2", "--changes", "--json"}} {
			h.mustSSH("bob", words...)
		}
		for what, out := range doorOutputs(t, h, "2") {
			if out == "" {
				t.Errorf("%s showed nothing of run 2", what)
			}
		}
	}
	open()
	h.restart()
	open()
	if n := tofuStarts(t, count); n != before {
		t.Errorf("opening the held run started tofu %d times", n-before)
	}
	again, err := h.db().GetRun("2")
	if err != nil {
		t.Fatal(err)
	}
	size, _ := h.db().LogSize("2")
	if len(again.Steps) != len(run.Steps) || size != logSize || again.Status != run.Status {
		t.Errorf("opening the held run changed it: %d steps (was %d), log %d bytes (was %d), %s (was %s)",
			len(again.Steps), len(run.Steps), size, logSize, again.Status, run.Status)
	}
}
