package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/logs"
	"github.com/switchtender/switchtender/server/metrics"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/server/schedule"
	"github.com/switchtender/switchtender/store"
)

// toolRunner starts tool processes. The server uses package exec; tests of
// failure paths give it a fake (the server declares what it needs).
type toolRunner interface {
	// Run runs inv to its end, its output in inv.Output.
	Run(ctx context.Context, inv exec.Invocation) (exec.Result, error)
	// Capture runs inv and returns its stdout; stderr goes to inv.Output.
	Capture(ctx context.Context, inv exec.Invocation) ([]byte, exec.Result, error)
}

type execRunner struct{}

func (execRunner) Run(ctx context.Context, inv exec.Invocation) (exec.Result, error) {
	return exec.Run(ctx, inv)
}

func (execRunner) Capture(ctx context.Context, inv exec.Invocation) ([]byte, exec.Result, error) {
	return exec.Capture(ctx, inv)
}

var _ toolRunner = execRunner{}

// step is one thing a run does ([runstep.Step]).
type step = runstep.Step[*execution]

// xstep is a step of the control node's own: do works on the execution
// runstep.Run runs it over.
func xstep(name string, do func(ctx context.Context, x *execution) error) step {
	return step{Name: name, Do: do}
}

// execution is one phase of one run being carried out: what its steps
// share.
type execution struct {
	s       *Server
	run     store.Run
	dir     string   // working directory inside the checkout, as resolved at launch
	dirFile *os.File // the working directory held open: processes start in it (see procDir)
	private string   // the run's private directory
	binary  string
	engine  exec.Engine
	env     []string
	masker  *mask.Masker
	sink    *logs.Sink
	out     *mask.Writer
	current string // the step executing, for messages

	planPath   string            // the saved plan's plaintext path while a tool reads it
	planText   string            // tofu's own rendering of the plan, as logged (masked)
	planJSON   []byte            // tofu show -json of the saved plan; cleared after the decision
	summary    *gate.Summary     // what the plan does, as the gate measured it
	digest     string            // the saved plan's digest
	basis      stateBasis        // the state the plan was made from
	approved   string            // the digest the apply carries out
	drift      *gate.Drift       // a check's drift and changes, per address and attribute
	decision   gate.Decision     // the rules' decision on a check's plan, as a reconcile would carry it
	scanned    *store.Scan       // the scan's evidence, for a scanned run: what the plan must read
	planned    *scan.Identity    // the configuration the released plan was made from (configStep)
	startFiles map[string]string // a relayed plan's files under its working directory, as its worker found them (newProposal)
	tree       string            // a pull request's exported commit, when the run plans one

	// changes is the plan's change set (masked), stored with its proposal;
	// nil when its rendering could not be read.
	changes *planview.ChangeSet
}

// execute is the scheduler's job function: it decides a queued run again
// under the rules now (holdAtStart), claims it, prepares it and runs the
// steps of its current phase, then ends it in one place.
func (s *Server) execute(ctx context.Context, j schedule.Job) {
	if s.holdAtStart(j.RunID) {
		return // the rules now hold it before anything of it runs
	}
	run, err := s.transition(j.RunID, StatusRunning, func(r *store.Run) error {
		if r.StartedAt.IsZero() {
			r.StartedAt = time.Now()
		}
		return nil
	})
	if err != nil {
		if ErrorCode(err) != ErrConflict {
			s.log.Error("claiming run", "run", j.RunID, "err", err)
		}
		return
	}
	x := s.newExecution(run)
	defer x.sink.Close()
	defer x.closeDir()
	defer wipe(s, filepath.Join(x.private, planFileName))
	if err := x.resolveRun(ctx); err != nil {
		x.recordEnd(ctx, err)
		return
	}
	if err := runstep.Run(ctx, x, s.stepsFor(run)); err != nil {
		x.recordEnd(ctx, err)
		return
	}
	x.recordEnd(ctx, errors.New("the run's steps ended without an outcome"))
}

// stepsFor lists what a run does in its current phase (spec "What runs", "A
// gated apply carries out the approved plan").
func (s *Server) stepsFor(r store.Run) []step {
	// The apply phase checks the configuration first (configStep), before
	// any of its processes, the state's own state pull included.
	apply := []step{xstep("configuration", configStep), xstep("verify", verifyStep), xstep("mask", maskStep), xstep("apply", applyPlanStep)}
	init := []step{xstep("init", initStep), runstep.StateSecretsStep[*execution]()}
	if why, _ := s.scanFor(r); why != "" && r.Phase == phasePlan {
		init = append(scanSteps(), runstep.StateSecretsStep[*execution]())
		if why == scanForPullRequest {
			init = append([]step{xstep("export", exportStep)}, init...)
		}
	}
	switch {
	case r.Phase == phaseApply:
		pre := []step{apply[0]}
		if s.plannedInCopy(r) {
			pre = append(pre, xstep("init", applyInitStep))
		}
		return append(append(pre, runstep.StateSecretsStep[*execution]()), apply[1:]...)
	case r.Kind == KindPlan:
		return append(init, dryRunSteps()...)
	case r.Kind == KindCheck:
		return append(init, checkSteps()...)
	case r.Kind == KindReconcile:
		return []step{xstep("plan", func(context.Context, *execution) error {
			return errors.New("a reconcile only applies the plan its check kept, once released; it never plans")
		})}
	case !gate.NeedsSavedPlan(s.currentRules(), s.gateRequest(r)):
		return append(init, xstep("apply", applyAutoStep))
	}
	gated := append(init, []step{xstep("plan", planStep), xstep("show", showStep), xstep("measure", measureStep),
		xstep("seal", sealStep), xstep("decide", decideStep)}...)
	return append(gated, apply...)
}

// checkBefore stops a run whose context ended, and checks its working
// directory again before each step (checkWorkdir).
func (x *execution) checkBefore(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return x.checkWorkdir()
}

// recordEnd records how the run ended, in one place: an *outcome as it says, a
// failed tool step as failed with its exit code, a context ended by a cancel
// as cancelled and by the server stopping as interrupted, anything else as
// failed with its message. The log gets the sentence first, so a follower
// that stops at the status change has the whole log.
func (x *execution) recordEnd(ctx context.Context, err error) {
	o := x.outcomeOf(ctx, err)
	if o.Status != StatusSucceeded {
		x.say("%s", o.Msg)
	}
	x.out.Flush()
	if err := x.sink.Flush(); err != nil {
		x.s.log.Error("storing the end of a run's log", "run", x.run.ID, "err", err)
	}
	// No plaintext plan outlives the run's end: wiped before the status
	// says it ended (the deferred wipe in execute stays as a backstop).
	if x.private != "" {
		wipe(x.s, filepath.Join(x.private, planFileName))
	}
	if o.Status != StatusAwaitingApproval {
		x.s.dropHeld(x.run.ID)
	}
	if o.Status != StatusInterrupted {
		// Before the run says it ended: whoever waits for it sees held
		// proposals its state change made stale already marked.
		x.s.recordWorkdirState(context.WithoutCancel(ctx), x)
	} else {
		x.s.staleAfterInterrupt(x.run)
	}
	ended := func(store.Run) store.AuditEvent { return auditEvent(x.run.ID, "switchtender", string(o.Status), o.Msg) }
	_, terr := x.s.transitionAudited(x.run.ID, o.Status, func(r *store.Run) error {
		if o.Status == StatusAwaitingApproval && r.CancelRequested != "" {
			return errCancelledWhileHeld
		}
		r.Message = o.Msg
		if o.Exit >= 0 {
			r.ExitCode = o.Exit
		}
		if o.Status == StatusStale && r.Proposal != nil {
			r.Proposal.Stale, r.Proposal.StaleReason = true, o.Msg
		}
		return nil
	}, ended)
	if errors.Is(terr, errCancelledWhileHeld) {
		x.s.dropHeld(x.run.ID)
		o = &outcome{Status: StatusCancelled, Msg: "Cancelled before its proposal was held; nothing was applied.", Exit: -1}
		_, terr = x.s.transitionAudited(x.run.ID, StatusCancelled, func(r *store.Run) error { r.Message = o.Msg; return nil }, ended)
	}
	if terr != nil {
		x.s.log.Error("recording how a run ended", "run", x.run.ID, "status", o.Status, "err", terr)
	}
}

var errCancelledWhileHeld = errors.New("cancelled while it was being held")

// outcomeOf maps what stopped the steps to a status and a sentence.
func (x *execution) outcomeOf(ctx context.Context, err error) *outcome {
	var o *outcome
	var sf *stepFailed
	var cc cancelCause
	switch {
	case errors.As(err, &o):
		return o
	case ctx.Err() != nil && errors.As(context.Cause(ctx), &cc):
		return &outcome{Status: StatusCancelled, Msg: fmt.Sprintf("Cancelled by %s during %s; the tool was sent an interrupt so it could release its state lock.", cc.by, x.current), Exit: -1}
	case ctx.Err() != nil:
		// Only Cancel ends a run's context with a cause of its own; any
		// other end is the server stopping (Close, or the signal that
		// stops serve, which may arrive before Close).
		return &outcome{Status: StatusInterrupted, Msg: fmt.Sprintf("The server stopped during %s; the tool was sent an interrupt so it could release its state lock. It was not re-run: check the state, then `rerun %s` if it should go on.", x.current, x.run.ID), Exit: -1}
	case errors.As(err, &sf):
		return &outcome{Status: StatusFailed, Msg: sf.Error(), Exit: sf.Exit}
	}
	return &outcome{Status: StatusFailed, Msg: err.Error(), Exit: -1}
}

// newExecution opens the run's log; prepare does the rest.
func (s *Server) newExecution(r store.Run) *execution {
	m := mask.New()
	s.maskOwnKeys(m)
	sink := logs.NewSink(r.ID, s.db, s.broker)
	return &execution{s: s, run: r, masker: m, sink: sink, out: m.NewWriter(metrics.CountingWriter{W: sink, C: s.metrics.MaskerBytes}),
		dir: r.Workdir, private: filepath.Join(s.runsDir, r.ID), current: "preparation"}
}

// resolveRun resolves everything a run's processes need before any starts: the
// template, the working directory (as at launch, refusing escapes), the
// private directory, the tool binary on the run's PATH, credentials
// (command-source ones run now), sealed answers, the masker and the
// environment.
func (x *execution) resolveRun(ctx context.Context) error {
	s, r := x.s, x.run
	t := s.config().Templates[r.Template]
	if t == nil {
		return fmt.Errorf("template %q is no longer configured; nothing ran", r.Template)
	}
	if x.dir == "" { // a run stored before launch recorded its directory
		wd, err := s.workdir(r)
		if err != nil {
			return fmt.Errorf("%v; nothing ran", err)
		}
		x.dir = wd
	}
	if err := x.checkBefore(ctx); err != nil {
		return err
	}
	if err := x.openDir(); err != nil {
		return err
	}
	x.recordCommit(ctx)
	if err := os.MkdirAll(x.private, 0o700); err != nil {
		return fmt.Errorf("creating the run's private directory: %w", err)
	}
	if err := os.Chmod(x.private, 0o700); err != nil {
		return fmt.Errorf("restricting the run's private directory: %w", err)
	}
	var err error
	if x.engine, err = exec.EngineFor(r.Tool); err != nil {
		return err
	}
	if x.binary, err = x.engine.Find(envValue(s.env, "PATH")); err != nil {
		return err
	}
	creds, err := s.credentials(ctx, t, r.ID, x.masker)
	if err != nil {
		return err
	}
	vars, secrets, err := s.runVars(r, x.masker)
	if err != nil {
		return err
	}
	if err := s.rememberSecrets(r.Project, secrets, x.masker); err != nil {
		return err
	}
	s.maskConfigSecrets(x.masker, r)
	creds[runMarkerVar] = s.runMarker(r.ID)
	x.env = exec.BuildEnv(exec.EnvSpec{Base: s.env, Vars: vars, Env: creds})
	return nil
}

// Step notes the step executing, for messages ([runstep.Env]).
func (x *execution) Step(name string) { x.current = name }

// Check stops a run whose context ended and checks its working directory
// again before each step ([runstep.Env]).
func (x *execution) Check(ctx context.Context) error { return x.checkBefore(ctx) }

// Tool runs one tool process of the run and records it ([runstep.Env]).
func (x *execution) Tool(ctx context.Context, name string, args []string) (exec.Result, error) {
	return x.tool(ctx, name, args)
}

// Capture runs one tool process whose stdout is returned, never logged
// ([runstep.Env]).
func (x *execution) Capture(ctx context.Context, name string, args []string) ([]byte, error) {
	return x.capture(ctx, name, args)
}

// Say writes a line of Switchtender's own into the run's log ([runstep.Env]).
func (x *execution) Say(format string, args ...any) { x.say(format, args...) }

// Dir is the working directory the run's processes start in ([runstep.Env]).
func (x *execution) Dir() string { return x.dir }

// Private is the run's private directory ([runstep.Env]).
func (x *execution) Private() string { return x.private }

// Masker is the run's masker ([runstep.Env]).
func (x *execution) Masker() *mask.Masker { return x.masker }

var _ runstep.Env = (*execution)(nil)

// say writes a line of Switchtender's own into the run's log, masked.
func (x *execution) say(format string, args ...any) {
	fmt.Fprintf(x.out, "switchtender: "+format+"\n", args...)
}

// invocation is a tool process of this run with args.
func (x *execution) invocation(args []string) exec.Invocation {
	return exec.Invocation{Binary: x.binary, Dir: x.procDir(), Env: x.env, Args: args, Output: x.out, Grace: x.s.config().Server.CancelGrace}
}

// tool runs one tool process, its output masked into the log, and records
// it as a step. A process that could not run or exited non-zero is an error.
func (x *execution) tool(ctx context.Context, name string, args []string) (exec.Result, error) {
	if err := x.checkProcess(); err != nil {
		return exec.Result{ExitCode: -1}, err
	}
	fmt.Fprintf(x.out, "$ %s %s\n", x.engine.Binary, strings.Join(args, " "))
	started := time.Now()
	res, err := x.s.runner.Run(ctx, x.invocation(args))
	x.out.Flush()
	x.recordStep(name, res.ExitCode, started)
	return res, x.toolErr(name, res, err)
}

// toolIn runs one tool process in dir, a directory of the run's own (the
// scan's private copy), its output masked into the log.
func (x *execution) toolIn(ctx context.Context, name, dir string, args []string) (exec.Result, error) {
	fmt.Fprintf(x.out, "$ %s %s\n", x.engine.Binary, strings.Join(args, " "))
	inv := x.invocation(args)
	inv.Dir = dir
	started := time.Now()
	res, err := x.s.runner.Run(ctx, inv)
	x.out.Flush()
	x.recordStep(name, res.ExitCode, started)
	return res, x.toolErr(name, res, err)
}

// capture runs one tool process whose stdout is returned, never logged.
func (x *execution) capture(ctx context.Context, name string, args []string) ([]byte, error) {
	if err := x.checkProcess(); err != nil {
		return nil, err
	}
	out, res, err := x.s.runner.Capture(ctx, x.invocation(args))
	x.out.Flush()
	if err := x.toolErr(name, res, err); err != nil {
		clear(out)
		return nil, err
	}
	return out, nil
}

// checkProcess is what is checked right before a tool process of the run
// starts in its working directory: the directory is still the one resolved
// at launch (checkWorkdir), and after a release it still holds the
// configuration the plan was made from (checkPlanned).
func (x *execution) checkProcess() error {
	if err := x.checkWorkdir(); err != nil {
		return err
	}
	return x.checkPlanned()
}

func (x *execution) toolErr(name string, res exec.Result, err error) error {
	switch {
	case err != nil && ctx0(err):
		return err
	case err != nil:
		return fmt.Errorf("%s could not run: %w", name, err)
	case res.ExitCode != 0:
		return &stepFailed{Step: name, Exit: res.ExitCode}
	}
	return nil
}

func (x *execution) recordStep(name string, code int, started time.Time) {
	if _, err := x.s.db.UpdateRun(x.run.ID, func(r *store.Run) error {
		r.Steps = append(r.Steps, store.Step{Name: name, ExitCode: code, Started: started, Finished: time.Now()})
		x.s.metrics.StepDuration.WithLabelValues(name).Observe(time.Since(started).Seconds())
		r.ExitCode = code
		return nil
	}); err != nil {
		x.s.log.Error("recording step", "run", x.run.ID, "err", err)
	}
}

// initStep runs tofu init; if it fails the run stops there with init's
// result (spec "What runs").
func initStep(ctx context.Context, x *execution) error {
	_, err := x.tool(ctx, "init", exec.InitArgs(true))
	return err
}

// dryRunStep runs a dry run's plan, saving the plan file into the private
// directory (wiped when the run ends); a scanned run's saved plan must
// embed the configuration the scan read. The steps after it measure the
// saved plan (dryRunSteps).
func dryRunStep(ctx context.Context, x *execution) error {
	x.planPath = filepath.Join(x.private, planFileName)
	if _, err := x.tool(ctx, "plan", exec.PlanArgs(x.planPath)); err != nil {
		return err
	}
	return x.checkPlanConfig(x.planPath)
}

// applyAutoStep is the apply no rule covers: apply -auto-approve, planning
// and applying in one step with nothing saved in between.
func applyAutoStep(ctx context.Context, x *execution) error {
	res, err := x.tool(ctx, "apply", exec.ApplyAutoArgs())
	if err != nil {
		return err
	}
	return end(StatusSucceeded, res.ExitCode, "Applied.")
}

// wipe removes a plaintext plan file, logging (not failing) on error.
func wipe(s *Server, path string) {
	if err := seal.Wipe(path); err != nil {
		s.log.Error("wiping plaintext plan", "path", path, "err", err)
	}
}
