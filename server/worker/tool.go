package worker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
)

// Step notes the step executing, for messages ([runstep.Env]).
func (x *workerRun) Step(name string) { x.step = name }

// Check is nil: tool0 checks the working directory before each process
// ([runstep.Env]).
func (x *workerRun) Check(context.Context) error { return nil }

// Tool runs one listed tool process in the working directory, as tool0
// ([runstep.Env]).
func (x *workerRun) Tool(ctx context.Context, name string, args []string) (exec.Result, error) {
	return x.tool0(ctx, name, args)
}

// Dir is the working directory the job's processes start in ([runstep.Env]).
func (x *workerRun) Dir() string { return x.dir }

// Private is the job's private directory ([runstep.Env]).
func (x *workerRun) Private() string { return x.private }

// Masker is the job's masker ([runstep.Env]).
func (x *workerRun) Masker() *mask.Masker { return x.masker }

// sealOpen opens a payload sealed to the pool's delivery key for run id.
var sealOpen = seal.Open

// tool0 runs one tool process of the run in its working directory, its
// output masked on the worker and sent as log lines, and reports the step
// to the control node. The working directory is resolved again first: a
// directory swapped under the checkout stops the run.
func (x *workerRun) tool0(ctx context.Context, name string, args []string) (exec.Result, error) {
	x.step = name
	again, err := exec.ResolveWorkingDir(x.checkout, x.job.Command)
	if id, _ := runstep.DirIdentity(again); err != nil || again != x.dir || id != x.dirID {
		return exec.Result{ExitCode: -1}, fmt.Errorf("before %s: the working directory no longer resolves to %s inside the checkout, or it was replaced; nothing more ran. Check the checkout, then submit the run again", name, x.dir)
	}
	if err := x.checkPlanned(name); err != nil {
		return exec.Result{ExitCode: -1}, err
	}
	return x.toolIn(ctx, name, x.dir, args)
}

// toolIn runs one tool process of the run in dir (the working directory,
// or a directory of the run's own: the scan's private copy), as tool0
// does after its check.
func (x *workerRun) toolIn(ctx context.Context, name, dir string, args []string) (exec.Result, error) {
	fmt.Fprintf(x.out, "$ %s %s\n", x.tool, strings.Join(args, " "))
	x.out.Flush()
	started, err := x.begin(ctx, name, dir, false)
	if err != nil {
		return exec.Result{ExitCode: -1}, err
	}
	res, err := exec.Run(ctx, exec.Invocation{Binary: x.binary, Dir: dir, Env: x.env, Args: args, Output: x.out, Grace: x.job.Grace})
	x.out.Flush()
	x.finish(name, false, res.ExitCode, started)
	switch {
	case err != nil && runstep.IsContextEnd(err):
		return res, err
	case err != nil:
		return res, fmt.Errorf("%s could not run: %w", name, err)
	case res.ExitCode != 0:
		return res, &runstep.StepFailed{Step: name, Exit: res.ExitCode}
	}
	return res, nil
}

// begin tells the control node a tool process of the run starts in dir,
// before it starts: a worker lost during it is reported with that step,
// and as maybe holding a state lock when the step can take one (quiet: a
// process the run's steps do not list). A start that cannot be sent stops
// the run there, and so does a job whose context ended (a cancel landing
// between two processes starts, and reports, nothing later).
func (x *workerRun) begin(ctx context.Context, name, dir string, quiet bool) (time.Time, error) {
	started := time.Now()
	if err := ctx.Err(); err != nil {
		return started, fmt.Errorf("before %s: %w; nothing more ran", name, err)
	}
	x.step = name
	m := relay.Msg{Type: relay.MsgStep, Run: x.job.Run, Token: x.job.Token, Step: name, Started: started, Quiet: quiet}
	if name == "init" {
		m.NoLock = initTakesNoLock(dir)
	}
	if err := x.c.Send(m); err != nil {
		return started, fmt.Errorf("before %s: the control node could not be told it starts (%w); nothing more ran", name, err)
	}
	return started, nil
}

// finish tells the control node the step begin reported ended; a listed
// one's exit code is the job's from now.
func (x *workerRun) finish(name string, quiet bool, exit int, started time.Time) {
	if !quiet {
		x.exit = exit
	}
	_ = x.c.Send(relay.Msg{Type: relay.MsgStep, Run: x.job.Run, Token: x.job.Token, Step: name, Quiet: quiet, Exit: exit, Started: started, Finished: time.Now()})
}

// relayLogWriter sends a run's masked output to the control node as log
// messages of the lease.
type relayLogWriter struct {
	c     *relay.Conn
	run   string
	token uint64
}

func (l *relayLogWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += relay.LogChunk {
		end := min(off+relay.LogChunk, len(p))
		if err := l.c.Send(relay.Msg{Type: relay.MsgLog, Run: l.run, Token: l.token, Data: string(p[off:end])}); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// wipeQuiet wipes a plaintext plan file; a missing one is fine.
func wipeQuiet(path string) { _ = seal.Wipe(path) }
