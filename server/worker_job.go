package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchtender/switchtender/server/relay"
	"os"
	"path/filepath"
	"regexp"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// workerRun is one run on a worker: the same steps the control node runs
// (init, the state's sensitive values into the masker, then a dry run's
// plan or an ungated apply), masked on the worker before a line leaves it.
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
	plan       []byte            // an apply phase's released plan, from the sealed payload
	digest     string            // its digest
	startFiles map[string]string // the files under its plan's working directory (relay.Payload.StartFiles)
	planned    *scan.Identity    // the configuration the released plan was made from (weighPlanned)
	dirID      string            // the working directory's device and inode when the run started

	verdict  <-chan relay.Msg // the control node's decision on a scanned job's evidence
	scanned  *store.Scan      // a scanned job's evidence, once the control node let it plan
	released string           // who released the run's scan hold ("" for the rules' pass)
	pr       *store.Commit    // a pull request's commit, once exported
}

// runJob carries out job and returns how it ended.
func (w *worker) runJob(ctx context.Context, c *relay.Conn, job relay.Msg, verdict <-chan relay.Msg) jobEnd {
	x := &workerRun{w: w, c: c, job: job, masker: mask.New(), step: "preparation", verdict: verdict}
	maskKeyFiles(x.masker, w.cfg.Key, w.cfg.DeliveryIdentity)
	x.out = x.masker.NewWriter(&relayLogWriter{c: c, run: job.Run, token: job.Token})
	res := relay.Msg{Type: relay.MsgResult, Run: job.Run, Token: job.Token, Exit: -1}
	defer func() { _ = os.RemoveAll(x.private) }() // x.private is set by prepare: read it when the run ends
	err := x.prepare(ctx)
	if err == nil {
		if x.job.Ref == "" {
			res.Commit = x.commit(ctx)
		}
		res.Exit, res.Message, err = x.steps(ctx)
		if x.pr != nil {
			res.Commit = x.pr
		}
	}
	var o *outcome
	switch {
	case err == nil:
		res.Status = StatusSucceeded
	case errors.Is(err, errHandedOff), errors.Is(err, errScanDecided):
		x.out.Flush()
		return jobEnd{handedOff: true}
	case errors.Is(err, errStalePlan):
		res.Status, res.Message = StatusStale, "Saved plan is stale."
	case errors.Is(context.Cause(ctx), errJobCancelled):
		res.Status, res.Message = StatusCancelled, "Cancelled during "+x.step+"."
	case errors.Is(context.Cause(ctx), errLeaseLost):
		res.Status, res.Message = StatusFailed, "The worker lost its lease during "+x.step+"; the tool was interrupted."
	case ctx.Err() != nil:
		res.Status, res.Message = StatusInterrupted, fmt.Sprintf("Worker %s was stopped during %s; the tool was sent an interrupt so it could release its state lock. It was not re-run: check the state, then `rerun %s` if it should go on.", x.w.cfg.Name, x.step, x.job.Run)
	case errors.As(err, &o) && o.status == StatusRefused:
		res.Status, res.Message = StatusRefused, x.masker.String(o.msg)
	default:
		res.Status, res.Message = StatusFailed, x.masker.String(err.Error())
	}
	x.out.Flush()
	return jobEnd{result: res}
}

// prepare resolves the working directory inside the worker's checkout
// (refusing escapes), the private directory, the tool, and opens the
// payload with the pool's delivery identity.
func (x *workerRun) prepare(ctx context.Context) error {
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
	if x.dirID, err = dirIdentity(dir); err != nil {
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
	if x.binary, err = eng.Find(envValue(w.opts.Environ, "PATH")); err != nil {
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
	payload.Env[runMarkerVar] = workerMarker(w.cfg.DataDir, job.Run) // found at the worker's next start if it dies
	x.env = exec.BuildEnv(exec.EnvSpec{Base: w.opts.Environ, Vars: payload.Vars, Env: payload.Env})
	return nil
}

// runIDRE is what a run ID the worker uses in a path may be: one plain
// path element (the control node numbers its runs).
var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// open reads the job's payload: sealed to the pool's delivery key, or in
// clear when it holds no secret.
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

// steps runs the job's steps; it returns the last exit code and the
// sentence for a run that succeeded.
func (x *workerRun) steps(ctx context.Context) (int, string, error) {
	if Phase(x.job.Phase) == phaseApply {
		if err := x.weighPlanned(); err != nil {
			return -1, "", err
		}
	}
	if x.job.ScanWhy != "" && Phase(x.job.Phase) != phaseApply {
		if err := x.scanSteps(ctx); err != nil {
			return x.exitOf(err), "", err
		}
	} else if _, err := x.tool0(ctx, "init", x.initArgs()); err != nil {
		return x.exitOf(err), "", err
	}
	x.step = "state secrets"
	if err := x.stateSecrets(ctx); err != nil {
		return -1, "", err
	}
	switch {
	case Phase(x.job.Phase) == phaseApply:
		return x.applySaved(ctx)
	case x.job.Gated || Kind(x.job.Kind) == KindCheck:
		return x.gatedPlan(ctx)
	}
	switch Kind(x.job.Kind) {
	case KindPlan:
		plan := filepath.Join(x.private, planFileName)
		defer wipeQuiet(plan)
		res, err := x.tool0(ctx, "plan", exec.PlanArgs(plan))
		if err == nil {
			err = x.checkPlanConfig(plan)
		}
		return res.ExitCode, fmt.Sprintf("Dry run complete on worker %s: its log (`log %s`) shows the plan; nothing was applied.", x.w.cfg.Name, x.job.Run), err
	case KindApply:
		res, err := x.tool0(ctx, "apply", exec.ApplyAutoArgs())
		return res.ExitCode, fmt.Sprintf("Applied on worker %s.", x.w.cfg.Name), err
	}
	return -1, "", fmt.Errorf("a worker runs dry runs and ungated applies; a %q run is not relayed in this version", x.job.Kind)
}

func (x *workerRun) exitOf(err error) int {
	var sf *stepFailed
	var o *outcome
	switch {
	case errors.As(err, &sf):
		return sf.exit
	case errors.As(err, &o):
		return o.exit
	}
	return -1
}

// weighPlanned reads the identity of the configuration the released plan
// was made from out of the plan the job brought, and checks the working
// directory against it before any process of the apply phase starts (the
// control node's configStep; docs/configuration-identity.md).
func (x *workerRun) weighPlanned() error {
	x.step = "configuration"
	want, err := scan.PlanIdentity(x.plan)
	if err != nil {
		return end(StatusFailed, -1, "Refused to apply: the saved plan's configuration snapshot cannot be read (%v), so the working directory cannot be checked against it; nothing ran and nothing was applied.", err)
	}
	if want, err = want.WithStartFiles(x.startFiles); err != nil {
		return end(StatusFailed, -1, "Refused to apply: %v, so the working directory cannot be checked against the plan; nothing ran and nothing was applied.", err)
	}
	x.planned = &want
	return x.checkPlanned("init")
}

// checkPlanned checks, before process name of the apply phase starts,
// that the working directory holds the configuration the plan was made
// from; jobs with nothing planned pass.
func (x *workerRun) checkPlanned(name string) error {
	if x.planned == nil {
		return nil
	}
	got, err := scan.DirIdentity(x.dir)
	if err != nil {
		return end(StatusFailed, -1, "Refused before %s on worker %s: the configuration in %s cannot be read to check it against the one the plan was made from (%v); nothing more ran and nothing was applied. Fix the worker's checkout, then submit the run again.", name, x.w.cfg.Name, x.job.Command, err)
	}
	return changedSince(x.planned, got, name+" on worker "+x.w.cfg.Name, x.job.Command)
}

// initArgs are init's arguments for an unscanned job: an apply phase keeps
// the lock file the plan was made with (-lockfile=readonly), which
// weighPlanned found in the checkout.
func (x *workerRun) initArgs() []string {
	if Phase(x.job.Phase) == phaseApply {
		return append(exec.InitArgs(true), "-lockfile=readonly")
	}
	return exec.InitArgs(true)
}
