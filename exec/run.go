package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	osexec "os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is the time between SIGINT and SIGKILL when Invocation.Grace
// is zero.
const DefaultGrace = 10 * time.Second

// Invocation is one process of a run: a step such as init, plan or apply.
type Invocation struct {
	Binary string   // absolute path of tofu or terraform (Engine.Find)
	Dir    string   // working directory (ResolveWorkingDir)
	Env    []string // complete environment (BuildEnv); nil means empty, never the server's
	Args   []string // arguments after the binary (InitArgs, PlanArgs, ...)
	// Output receives stdout and stderr combined, as they arrive, one Write
	// at a time. The caller wraps it in a masker. Nil discards the output.
	Output io.Writer
	// Grace is how long a cancelled process has between SIGINT and SIGKILL;
	// zero means DefaultGrace.
	Grace time.Duration
}

// Result is how a process ended.
type Result struct {
	// ExitCode is the process's exit status, or -1 when a signal ended it
	// (a SIGKILL after Grace, for example).
	ExitCode int
	// Stale is true when the output had OpenTofu's error line "Error: Saved
	// plan is stale" or "Error: Saved plan does not match the given state"
	// (at the start of a line): the apply of a saved plan was
	// refused because the state changed after the plan was made (spec "A
	// gated apply carries out the approved plan"), and the proposal has to
	// be made again.
	Stale    bool
	Duration time.Duration // from start to exit
}

// Known output of a saved plan that no longer applies: OpenTofu's own error
// lines, at the start of a line. What a provisioner prints reaches the
// output prefixed with its resource's address, so it cannot pass for them.
var stalePhrases = [][]byte{
	[]byte("\nError: Saved plan is stale"),
	[]byte("\nError: Saved plan does not match the given state"),
}

// stalePhraseMax is the length of the longest of stalePhrases.
var stalePhraseMax = func() int {
	n := 0
	for _, p := range stalePhrases {
		n = max(n, len(p))
	}
	return n
}()

// Run starts inv.Binary in its own process group and waits for it. Output
// is written to inv.Output as it arrives. When ctx is cancelled, the whole
// process group receives SIGINT first, so tofu stops and releases its state
// lock, and SIGKILL if it is still running inv.Grace later.
//
// A process that ran to an exit status, zero or not, gives (Result, nil).
// A cancelled one gives its Result (ExitCode set) and an error wrapping
// ctx.Err(). A process that could not start gives an error wrapping the
// cause. When inv.Output fails, the process is not stopped: its remaining
// output is discarded and the error is returned with the Result.
func Run(ctx context.Context, inv Invocation) (Result, error) {
	out := newOutput(inv.Output)
	return run(ctx, inv, out, out, out)
}

// Capture is Run for a command whose stdout must not be logged, such as
// tofu show -json, whose output holds sensitive values in clear text: stdout
// is returned in memory and never written to inv.Output; stderr goes to
// inv.Output.
func Capture(ctx context.Context, inv Invocation) ([]byte, Result, error) {
	var stdout bytes.Buffer
	errOut := newOutput(inv.Output)
	res, err := run(ctx, inv, &stdout, errOut, errOut)
	return stdout.Bytes(), res, err
}

func run(ctx context.Context, inv Invocation, stdout, stderr io.Writer, out *output) (Result, error) {
	grace := inv.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	cmd := osexec.Command(inv.Binary, inv.Args...)
	cmd.Dir = inv.Dir
	cmd.Env = inv.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never the server's environment by accident
	}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = sysProcAttr()
	// After the process exits, wait at most grace for descendants that
	// still hold its output pipe open.
	cmd.WaitDelay = grace

	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("running %s %s: not started: %w", inv.Binary, firstArg(inv.Args), err)
	}
	start := time.Now()
	// The parent-death signal is tied to the thread that starts the child:
	// keep this goroutine on one thread while it does.
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("starting %s %s: %w", inv.Binary, firstArg(inv.Args), err)
	}
	pgid := cmd.Process.Pid

	var (
		mu          sync.Mutex
		exited      bool // set once Wait has reaped the process
		interrupted bool // SIGINT was sent
	)
	signal := func(sig syscall.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if !exited {
			_ = syscall.Kill(-pgid, sig)
			if sig == syscall.SIGINT {
				interrupted = true
			}
		}
	}
	done := make(chan struct{})
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		signal(syscall.SIGINT)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			signal(syscall.SIGKILL)
		}
	}()

	waitErr := cmd.Wait()
	mu.Lock()
	exited = true
	mu.Unlock()
	close(done)
	<-watcherDone

	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Duration: time.Since(start)}
	res.Stale = out.stale()
	var exitErr *osexec.ExitError
	switch {
	case interrupted:
		return res, fmt.Errorf("running %s %s: cancelled: %w", inv.Binary, firstArg(inv.Args), ctx.Err())
	case waitErr == nil, errors.As(waitErr, &exitErr), errors.Is(waitErr, osexec.ErrWaitDelay):
		// An exit status, or descendants holding the output open after the
		// process exited: the result stands.
	default:
		return res, fmt.Errorf("running %s %s: %w", inv.Binary, firstArg(inv.Args), waitErr)
	}
	if err := out.err(); err != nil {
		return res, fmt.Errorf("running %s %s: writing output: %w", inv.Binary, firstArg(inv.Args), err)
	}
	return res, nil
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// output passes process output to the caller's writer as it arrives,
// watching it for the stale-plan errors across write boundaries. A failing
// writer does not stop the process: its first error is kept and later
// output discarded.
type output struct {
	dst      io.Writer
	tail     []byte // the last bytes seen, shorter than the longest phrase
	isStale  bool
	writeErr error
	mu       sync.Mutex
}

func newOutput(dst io.Writer) *output {
	if dst == nil {
		dst = io.Discard
	}
	// The start of the output counts as the start of a line.
	return &output{dst: dst, tail: []byte("\n")}
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.isStale {
		// A phrase lies within p, or across the tail kept from earlier
		// writes and the start of p.
		junction := append(o.tail, p[:min(len(p), stalePhraseMax-1)]...)
		for _, ph := range stalePhrases {
			if bytes.Contains(p, ph) || bytes.Contains(junction, ph) {
				o.isStale = true
			}
		}
		if len(p) >= stalePhraseMax-1 {
			o.tail = append(o.tail[:0], p[len(p)-(stalePhraseMax-1):]...)
		} else {
			o.tail = append(o.tail[:0], junction[max(0, len(junction)-(stalePhraseMax-1)):]...)
		}
	}
	if o.writeErr == nil {
		if _, err := o.dst.Write(p); err != nil {
			o.writeErr = err
		}
	}
	return len(p), nil
}

func (o *output) stale() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.isStale
}

func (o *output) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writeErr
}
