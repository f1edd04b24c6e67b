package exec

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is an Output the test can read while the process writes, with
// a channel closed when a given text first appears.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   string
	seen   chan struct{}
	closed bool
}

func newSyncBuffer(want string) *syncBuffer {
	return &syncBuffer{want: want, seen: make(chan struct{})}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if !b.closed && b.want != "" && strings.Contains(b.buf.String(), b.want) {
		b.closed = true
		close(b.seen)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func helperInv(mode string, out *syncBuffer, extraEnv ...string) Invocation {
	return Invocation{
		Binary: os.Args[0],
		Env:    append([]string{helperEnv + "=" + mode}, extraEnv...),
		Output: out,
	}
}

func waitSeen(t *testing.T, b *syncBuffer) {
	t.Helper()
	select {
	case <-b.seen:
	case <-time.After(20 * time.Second):
		t.Fatalf("the process never printed %q; output so far: %q", b.want, b.String())
	}
}

func TestRunCancelSendsSIGINTFirst(t *testing.T) {
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := helperInv("sigint-exit", out)
	inv.Grace = 10 * time.Second
	type ret struct {
		res Result
		err error
	}
	done := make(chan ret, 1)
	go func() { r, err := Run(ctx, inv); done <- ret{r, err} }()
	waitSeen(t, out)
	cancel()
	r := <-done
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Run error = %v, want one wrapping context.Canceled", r.err)
	}
	if !strings.Contains(out.String(), "got interrupt") {
		t.Fatalf("the process did not report SIGINT; output %q", out.String())
	}
	if r.res.ExitCode != 3 {
		t.Fatalf("ExitCode = %d, want 3 (the process exited on its own after SIGINT)", r.res.ExitCode)
	}
	if r.res.Duration >= inv.Grace {
		t.Fatalf("Duration = %v: the process was not given the chance to exit on SIGINT", r.res.Duration)
	}
}

func TestRunCancelKillsAfterGrace(t *testing.T) {
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := helperInv("ignore-sigint", out)
	inv.Grace = 700 * time.Millisecond
	var res Result
	var err error
	done := make(chan struct{})
	go func() { res, err = Run(ctx, inv); close(done) }()
	waitSeen(t, out)
	cancelled := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a process ignoring SIGINT was never killed")
	}
	waited := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want one wrapping context.Canceled", err)
	}
	if !strings.Contains(out.String(), "ignoring interrupt") {
		t.Fatalf("SIGINT was not sent before SIGKILL; output %q", out.String())
	}
	if res.ExitCode != -1 {
		t.Fatalf("ExitCode = %d, want -1 (killed by a signal)", res.ExitCode)
	}
	if waited < inv.Grace {
		t.Fatalf("killed %v after cancel, before the %v grace", waited, inv.Grace)
	}
}

func TestRunCancelSignalsWholeProcessGroup(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "child-got-signal")
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	inv := helperInv("group", out, "HELPER_MARK="+mark)
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, inv); done <- err }()
	waitSeen(t, out)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	b, err := os.ReadFile(mark)
	if err != nil || string(b) != "interrupt" {
		t.Fatalf("the child process did not receive SIGINT through the group: %q, %v", b, err)
	}
}

func TestRunStreamsOutputAsItArrives(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "answer")
	out := newSyncBuffer("first line")
	done := make(chan error, 1)
	var res Result
	go func() {
		var err error
		res, err = Run(context.Background(), helperInv("stream", out, "HELPER_MARK="+mark))
		done <- err
	}()
	waitSeen(t, out) // arrives while the process still runs, waiting for mark
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || out.String() != "first line\nsecond line\n" {
		t.Fatalf("ExitCode %d, output %q", res.ExitCode, out.String())
	}
}

func TestRunNonZeroExitIsAResult(t *testing.T) {
	out := newSyncBuffer("")
	res, err := Run(context.Background(), helperInv("exit7", out))
	if err != nil {
		t.Fatalf("Run error = %v, want nil for a process that exited", err)
	}
	if res.ExitCode != 7 || res.Stale {
		t.Fatalf("Result = %+v, want ExitCode 7, not stale", res)
	}
	if got := out.String(); !strings.Contains(got, "out line\n") || !strings.Contains(got, "err line\n") {
		t.Fatalf("output %q lacks stdout or stderr", got)
	}
}

func TestRunDetectsStaleAcrossWrites(t *testing.T) {
	out := newSyncBuffer("")
	res, err := Run(context.Background(), helperInv("stale", out))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stale || res.ExitCode != 1 {
		t.Fatalf("Result = %+v, want Stale and ExitCode 1; output %q", res, out.String())
	}
}

func TestStaleDetectionEveryBoundary(t *testing.T) {
	for _, text := range []string{
		"x\nError: Saved plan is stale\n",
		"Error: Saved plan does not match the given state\n",
	} {
		for size := 1; size <= len(text); size++ {
			o := newOutput(nil)
			for i := 0; i < len(text); i += size {
				o.Write([]byte(text[i:min(i+size, len(text))]))
			}
			if !o.stale() {
				t.Fatalf("%q in writes of %d bytes: not detected", text, size)
			}
		}
	}
	o := newOutput(nil)
	o.Write([]byte("Saved plan is "))
	o.Write([]byte("fresh. Saved plan is st"))
	o.Write([]byte("ill fine"))
	if o.stale() {
		t.Fatal("detected a stale plan in output that does not say so")
	}
	// A provisioner's line carries its resource's address before it, so it
	// cannot pass for OpenTofu's own refusal.
	o = newOutput(nil)
	o.Write([]byte("terraform_data.x (local-exec): Error: Saved plan is stale\n"))
	if o.stale() {
		t.Fatal("a provisioner's output passed for OpenTofu's stale-plan error")
	}
}

func TestCaptureKeepsStdoutOutOfOutput(t *testing.T) {
	out := newSyncBuffer("")
	stdout, res, err := Capture(context.Background(), helperInv("capture", out))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Capture: %+v, %v", res, err)
	}
	if string(stdout) != "{\"sensitive\":\"hunter2-secret\"}\n" {
		t.Fatalf("stdout = %q", stdout)
	}
	if got := out.String(); got != "a warning\n" {
		t.Fatalf("Output = %q, want only stderr", got)
	}
}

func TestRunStartError(t *testing.T) {
	_, err := Run(context.Background(), Invocation{Binary: filepath.Join(t.TempDir(), "missing"), Args: []string{"plan"}})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Run of a missing binary: err = %v, want a start error wrapping ErrNotExist", err)
	}
}

func TestRunGetsOnlyTheGivenEnvironmentAndDir(t *testing.T) {
	dir := t.TempDir()
	out := newSyncBuffer("")
	inv := helperInv("env", out, "ONLY=this")
	inv.Dir = dir
	t.Setenv("SERVER_SECRET", "must-not-leak")
	if _, err := Run(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "SERVER_SECRET") || !strings.Contains(got, "ONLY=this\n") {
		t.Fatalf("environment seen by the process: %q", got)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if !strings.Contains(got, "PWD="+real+"\n") && !strings.Contains(got, "PWD="+dir+"\n") {
		t.Fatalf("working directory not %s: %q", dir, got)
	}
}

type failingWriter struct{ calls int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.calls++
	return 0, syscall.EPIPE
}

func TestRunOutputFailureDoesNotStopProcess(t *testing.T) {
	fw := &failingWriter{}
	inv := Invocation{Binary: os.Args[0], Env: []string{helperEnv + "=exit7"}, Output: fw}
	res, err := Run(context.Background(), inv)
	if res.ExitCode != 7 {
		t.Fatalf("ExitCode = %d, want 7: the process must run to its end", res.ExitCode)
	}
	if !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("err = %v, want the output error reported", err)
	}
}
