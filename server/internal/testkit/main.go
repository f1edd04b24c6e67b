package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
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

// LockedBuffer is an io.Writer safe for a logger's concurrent use.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Records parses every line written as one JSON object (an operator log
// of slog's JSON handler), failing t on a line that is not one.
func (l *LockedBuffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("an operator log line is not JSON: %v\n%s", err, line)
		}
		out = append(out, rec)
	}
	return out
}

// WaitFor polls until what was written holds text, or fails t after 10 s.
func (l *LockedBuffer) WaitFor(t testing.TB, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(l.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the operator log never got %s:\n%s", text, l.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
