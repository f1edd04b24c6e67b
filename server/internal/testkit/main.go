package testkit

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// environ is the environment runs inherit in tests, set by Main.
var environ []string

// Environ is the environment runs inherit in tests: the machine's, with the
// pinned OpenTofu first on PATH. It is empty before Main has run.
func Environ() []string { return append([]string(nil), environ...) }

// Main is a test binary's TestMain: it makes sure the pinned OpenTofu is
// installed (waiting up to 45 minutes for a download), sets Environ, calls
// ready with it (when ready is not nil), runs the tests and exits with
// their status. It exits with 1 when OpenTofu cannot be had.
func Main(m *testing.M, ready func(environ []string)) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	tofu, err := tofubin.Ensure(ctx, os.Stderr)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "the server tests need OpenTofu: %v\n", err)
		os.Exit(1)
	}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PATH=") {
			environ = append(environ, e)
		}
	}
	environ = append(environ, "PATH="+tofubin.PathWith(tofu, os.Getenv("PATH")))
	if ready != nil {
		ready(Environ())
	}
	os.Exit(m.Run())
}

// WaitFor polls cond every 50 ms until it holds, or fails t when d has
// passed, naming what it waited for.
func WaitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
