package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// workerRun is one run on a worker: the same steps the control node runs
// (init, the state's sensitive values into the masker, then a dry run's
// plan, an ungated apply, a gated plan handed over or a released plan
// applied), carried out by runstep.Run over the worker's own environment
// and masked on the worker before a line leaves it.
type workerRun struct {
	w          *worker
	c          *relay.Conn
	job        relay.Msg
	checkout   string
	dir        string
	private    string
	binary     string
	tool       string
	env        []string
	masker     *mask.Masker
	out        *mask.Writer
	step       string
	exit       int               // the last listed process's exit code, -1 before one ends
	message    string            // the sentence for a run that succeeded
	plan       []byte            // an apply phase's released plan, from the sealed payload
	planPath   string            // its plaintext in the private directory while the tool reads it
	digest     string            // its digest
	startFiles map[string]string // the files under its plan's working directory (relay.Payload.StartFiles)
	planned    *scan.Identity    // the configuration the released plan was made from (weighPlanned)
	dirID      string            // the working directory's device and inode when the run started

	verdict    <-chan relay.Msg // the control node's decision on a scanned job's evidence
	scanned    *store.Scan      // a scanned job's evidence, once the control node let it plan
	released   string           // who released the run's scan hold ("" for the rules' pass)
	pr         *store.Commit    // a pull request's commit, once exported
	headCommit *store.Commit    // the checkout's commit when the job started (nil outside git, or for a pull request)
	copyRoot   string           // the checkout's tree a scanned job's scan copied (enterCopy)
	copyRel    string           // the working directory relative to it
}

var _ runstep.Env = (*workerRun)(nil)

// runJob carries out job and returns how it ended.
func (w *worker) runJob(ctx context.Context, c *relay.Conn, job relay.Msg, verdict <-chan relay.Msg) jobEnd {
	x := &workerRun{w: w, c: c, job: job, masker: mask.New(), step: "preparation", verdict: verdict, exit: -1}
	runstep.MaskKeyFiles(x.masker, w.cfg.Key, w.cfg.DeliveryIdentity)
	x.out = x.masker.NewWriter(&relayLogWriter{c: c, run: job.Run, token: job.Token})
	res := relay.Msg{Type: relay.MsgResult, Run: job.Run, Token: job.Token, Exit: -1}
	defer func() { _ = os.RemoveAll(x.private) }() // x.private is set by prepare: read it when the run ends
	defer func() { wipeQuiet(filepath.Join(x.private, runstep.PlanFileName)) }()
	err := x.resolveJob(ctx)
	if err == nil {
		if x.job.Ref == "" {
			res.Commit = x.commit(ctx)
			x.headCommit = res.Commit
		}
		err = runstep.Run(ctx, x, x.steps())
		res.Exit, res.Message = x.exit, x.message
		if e := runstep.ExitOf(err); e >= 0 {
			res.Exit = e
		}
		if x.pr != nil {
			res.Commit = x.pr
		}
	}
	if errors.Is(err, errHandedOff) || errors.Is(err, errScanDecided) {
		x.out.Flush()
		return jobEnd{handedOff: true}
	}
	res.Status, res.Message = x.ended(ctx, err, res.Message)
	x.out.Flush()
	return jobEnd{result: res}
}

// ended is the status and sentence a job that stopped with err (nil: it
// succeeded with the sentence done) reports.
func (x *workerRun) ended(ctx context.Context, err error, done string) (store.Status, string) {
	var o *runstep.Outcome
	switch {
	case err == nil:
		return store.StatusSucceeded, done
	case errors.Is(err, runstep.ErrStale):
		return store.StatusStale, "Saved plan is stale."
	case errors.Is(context.Cause(ctx), errJobCancelled):
		return store.StatusCancelled, "Cancelled during " + x.step + "."
	case errors.Is(context.Cause(ctx), errLeaseLost):
		return store.StatusFailed, "The worker lost its lease during " + x.step + "; the tool was interrupted."
	case ctx.Err() != nil:
		return store.StatusInterrupted, fmt.Sprintf("Worker %s was stopped during %s; the tool was sent an interrupt so it could release its state lock. It was not re-run: check the state, then `rerun %s` if it should go on.", x.w.cfg.Name, x.step, x.job.Run)
	case errors.As(err, &o) && o.Status == store.StatusRefused:
		return store.StatusRefused, x.masker.String(o.Msg)
	}
	return store.StatusFailed, x.masker.String(err.Error())
}

// resolveJob resolves the working directory inside the worker's checkout
// (refusing escapes), the private directory, the tool, and opens the
// payload with the pool's delivery identity.
func (x *workerRun) resolveJob(ctx context.Context) error {
	job, w := x.job, x.w
	if !runIDRE.MatchString(job.Run) {
		return fmt.Errorf("the control node sent a job for run %q, which is not a run ID; nothing ran", job.Run)
	}
	p := w.cfg.Projects[job.Project]
	if p == nil {
		return fmt.Errorf("worker %s has no project %q: add a project block for its checkout to the worker's file; nothing ran", w.cfg.Name, job.Project)
	}
	dir, err := exec.ResolveWorkingDir(p.Path, job.Command)
	if err != nil {
		return fmt.Errorf("refusing working directory: %w; nothing ran", err)
	}
	x.checkout, x.dir = p.Path, dir
	if x.dirID, err = runstep.DirIdentity(dir); err != nil {
		return fmt.Errorf("reading the working directory %s: %w; nothing ran", dir, err)
	}
	x.private = filepath.Join(w.cfg.DataDir, "runs", job.Run)
	if err := os.MkdirAll(x.private, 0o700); err != nil {
		return fmt.Errorf("creating the run's private directory: %w", err)
	}
	eng, err := exec.EngineFor(job.Tool)
	if err != nil {
		return err
	}
	x.tool = eng.Binary
	if x.binary, err = eng.Find(runstep.EnvValue(w.opts.Environ, "PATH")); err != nil {
		return err
	}
	payload, err := x.open()
	if err != nil {
		return err
	}
	x.masker.Add(payload.Secrets...)
	x.plan, x.digest, x.startFiles = payload.Plan, payload.Digest, payload.StartFiles
	if payload.Env == nil {
		payload.Env = map[string]string{}
	}
	payload.Env[runstep.RunMarkerVar] = Marker(w.cfg.DataDir, job.Run) // found at the worker's next start if it dies
	x.env = exec.BuildEnv(exec.EnvSpec{Base: w.opts.Environ, Vars: payload.Vars, Env: payload.Env})
	return nil
}

// runIDRE is what a run ID the worker uses in a path may be: one plain
// path element (the control node numbers its runs).
var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// open reads the job's payload: sealed to the pool's delivery key, or in
// clear when it holds no secret. A payload in clear that carries secrets
// to mask or a saved plan is refused: those only ever come sealed.
func (x *workerRun) open() (relay.Payload, error) {
	var p relay.Payload
	plain := x.job.Payload
	if !x.job.Clear {
		if x.w.delivery == nil {
			return p, fmt.Errorf("the run's credentials are sealed to the pool's delivery key, and worker %s has no delivery_identity; nothing ran", x.w.cfg.Name)
		}
		opened, _, err := sealOpen(x.w.delivery, x.job.Run, x.job.Payload)
		if err != nil {
			return p, fmt.Errorf("opening the run's sealed payload with this worker's delivery_identity (is it the pool's?): %w; nothing ran", err)
		}
		defer clear(opened)
		plain = opened
	}
	if err := json.Unmarshal(plain, &p); err != nil {
		return p, fmt.Errorf("reading the run's payload: %w", err)
	}
	if x.job.Clear && (len(p.Secrets) > 0 || p.Plan != nil || p.Digest != "") {
		return relay.Payload{}, fmt.Errorf("the control node sent run %s's payload in clear, yet it carries secrets or a saved plan, which only ever come sealed to the pool's delivery key; nothing ran", x.job.Run)
	}
	return p, nil
}

// commit is the checkout's commit the run ran, nil outside git.
func (x *workerRun) commit(ctx context.Context) *store.Commit {
	c, err := vcs.Head(ctx, x.dir)
	if err != nil {
		return nil
	}
	return &store.Commit{SHA: c.SHA, Dirty: c.Dirty}
}

// wstep is a step of the worker's own: do works on the job runstep.Run
// runs it over.
func wstep(name string, do func(ctx context.Context, x *workerRun) error) runstep.Step[*workerRun] {
	return runstep.Step[*workerRun]{Name: name, Do: do}
}

// steps lists what the job does, as the control node's stepsFor lists a
// run's: an apply phase checks the configuration first; a scanned job
// scans before init; the state's sensitive values join the masker before
// anything prints a diff.
func (x *workerRun) steps() []runstep.Step[*workerRun] {
	apply := store.Phase(x.job.Phase) == store.PhaseApply
	var steps []runstep.Step[*workerRun]
	switch {
	case apply:
		steps = append(steps, wstep("configuration", weighPlanned), wstep("init", initStep))
	case x.job.ScanWhy != "":
		steps = append(steps, x.scanSteps()...)
	default:
		steps = append(steps, wstep("init", initStep))
	}
	steps = append(steps, runstep.StateSecretsStep[*workerRun]())
	kind := store.Kind(x.job.Kind)
	switch {
	case apply:
		return append(steps, wstep("verify", writePlanStep), wstep("mask", maskPlanStep), wstep("apply", applySavedStep))
	case x.job.Gated || kind == store.KindCheck:
		return append(steps, wstep("plan", gatedPlanStep))
	case kind == store.KindPlan:
		return append(steps, wstep("plan", dryRunStep))
	case kind == store.KindApply:
		return append(steps, wstep("apply", applyAutoStep))
	}
	return append(steps, wstep("plan", func(context.Context, *workerRun) error {
		return fmt.Errorf("a worker runs dry runs and ungated applies; a %q run is not relayed in this version", x.job.Kind)
	}))
}

// initStep runs init for an unscanned job: an apply phase keeps the lock
// file the plan was made with (-lockfile=readonly), which weighPlanned
// found in the checkout.
func initStep(ctx context.Context, x *workerRun) error {
	args := exec.InitArgs(true)
	if store.Phase(x.job.Phase) == store.PhaseApply {
		args = append(args, "-lockfile=readonly")
	}
	_, err := x.tool0(ctx, "init", args)
	return err
}

// dryRunStep runs a dry run's plan, its saved plan in the private
// directory; a scanned job's must embed the scanned configuration.
func dryRunStep(ctx context.Context, x *workerRun) error {
	plan := filepath.Join(x.private, runstep.PlanFileName)
	defer wipeQuiet(plan)
	if _, err := x.tool0(ctx, "plan", exec.PlanArgs(plan)); err != nil {
		return err
	}
	if err := x.checkPlanConfig(plan); err != nil {
		return err
	}
	x.message = fmt.Sprintf("Dry run complete on worker %s: its log (`log %s`) shows the plan; nothing was applied.", x.w.cfg.Name, x.job.Run)
	return nil
}

// applyAutoStep is the apply no rule covers: apply -auto-approve.
func applyAutoStep(ctx context.Context, x *workerRun) error {
	if _, err := x.tool0(ctx, "apply", exec.ApplyAutoArgs()); err != nil {
		return err
	}
	x.message = fmt.Sprintf("Applied on worker %s.", x.w.cfg.Name)
	return nil
}

// weighPlanned reads the identity of the configuration the released plan
// was made from out of the plan the job brought, and checks the working
// directory against it before any process of the apply phase starts (the
// control node's configStep; docs/configuration-identity.md).
func weighPlanned(ctx context.Context, x *workerRun) error {
	planned, err := runstep.Weigh(x.plan, x.startFiles)
	if err != nil {
		return err
	}
	x.planned = planned
	return x.checkPlanned("init")
}

// checkPlanned checks, before process name of the apply phase starts,
// that the working directory holds the configuration the plan was made
// from; jobs with nothing planned pass.
func (x *workerRun) checkPlanned(name string) error {
	return runstep.CheckPlanned(x.planned, x.dir, name+" on worker "+x.w.cfg.Name, x.job.Command)
}
