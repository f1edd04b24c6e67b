package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
)

// errHandedOff ends a gated plan's job on the worker: the saved plan went
// to the control node, which decides and ends the lease itself.
var errHandedOff = errors.New("the saved plan was handed to the control node")

// gatedPlanStep plans with -out into the private directory, refuses a
// plan file over the relay's limit (its size and the limit stated),
// renders it with show -json, and hands both to the control node; the file
// is wiped once sent. A drift check that finds no drift hands nothing over.
func gatedPlanStep(ctx context.Context, x *workerRun) error {
	path := filepath.Join(x.private, runstep.PlanFileName)
	defer wipeQuiet(path)
	x.out.Flush()
	_ = x.c.Send(relay.Msg{Type: relay.MsgPlanning, Run: x.job.Run, Token: x.job.Token})
	check := store.Kind(x.job.Kind) == store.KindCheck
	args := exec.PlanArgs(path)
	if check {
		args = exec.CheckArgs(path)
	}
	_, err := x.tool0(ctx, "plan", args)
	var sf *runstep.StepFailed
	switch {
	case check && err == nil:
		if err := x.checkPlanConfig(path); err != nil {
			return err
		}
		x.message = "No drift." // the control node records the finding
		return nil
	case check && errors.As(err, &sf) && sf.Exit == 2:
	case err != nil:
		return err
	}
	if err := x.checkPlanConfig(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("reading the saved plan: %w", err)
	}
	if fi.Size() > relay.PlanLimit {
		return errors.New(relay.PlanTooLarge(store.Kind(x.job.Kind), fi.Size()))
	}
	js, err := x.Capture(ctx, "show -json", exec.ShowJSONArgs(path))
	defer clear(js)
	if err != nil {
		return err
	}
	plan, err := os.ReadFile(path)
	defer clear(plan)
	if err != nil {
		return fmt.Errorf("reading the saved plan: %w", err)
	}
	return x.handOver(plan, js)
}

// handOver sends the plan and its JSON in chunks, then the end.
func (x *workerRun) handOver(plan, js []byte) error {
	msg := func(m relay.Msg) error { m.Run, m.Token = x.job.Run, x.job.Token; return x.c.Send(m) }
	id, err := scan.DirIdentity(x.dir)
	if err != nil {
		return fmt.Errorf("reading the files under the directory the plan was made in: %w", err)
	}
	commit := x.headCommit
	if x.pr != nil {
		commit = x.pr
	}
	if err := msg(relay.Msg{Type: relay.MsgPlanStart, Size: int64(len(plan)), JSONSize: int64(len(js)), StartFiles: id.StartFileSums(), Commit: commit}); err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		b    []byte
	}{{"plan", plan}, {"json", js}} {
		for off := 0; off < len(part.b); off += relay.Chunk {
			if err := msg(relay.Msg{Type: relay.MsgPlanChunk, Part: part.name, Blob: part.b[off:min(off+relay.Chunk, len(part.b))]}); err != nil {
				return err
			}
		}
	}
	if err := msg(relay.Msg{Type: relay.MsgPlanEnd}); err != nil {
		return err
	}
	return errHandedOff
}

// writePlanStep writes the released plan the job brought sealed to the
// pool's delivery key into the private directory only, and checks its
// digest against the release (wiped however the job ends).
func writePlanStep(ctx context.Context, x *workerRun) error {
	path, err := runstep.WritePlan(x, x.plan)
	clear(x.plan)
	if err != nil {
		return err
	}
	x.planPath = path
	return runstep.VerifyPlan(path, x.digest)
}

// maskPlanStep adds the saved plan's sensitive values to the masker.
func maskPlanStep(ctx context.Context, x *workerRun) error {
	return runstep.MaskPlan(ctx, x, x.planPath)
}

// applySavedStep carries out exactly the released plan: apply PLANFILE.
func applySavedStep(ctx context.Context, x *workerRun) error {
	if _, err := runstep.ApplyPlan(ctx, x, x.planPath, x.digest); err != nil {
		return err
	}
	x.message = fmt.Sprintf("Applied the released plan %s on worker %s.", x.digest, x.w.cfg.Name)
	return nil
}

// Capture runs one tool process whose stdout is returned, never logged
// ([runstep.Env]); it is reported to the control node as a quiet step.
func (x *workerRun) Capture(ctx context.Context, name string, args []string) ([]byte, error) {
	if err := x.checkPlanned(name); err != nil {
		return nil, err
	}
	started, err := x.begin(ctx, name, x.dir, true)
	if err != nil {
		return nil, err
	}
	out, res, err := exec.Capture(ctx, exec.Invocation{Binary: x.binary, Dir: x.dir, Env: x.env, Args: args, Output: x.out, Grace: x.job.Grace})
	x.out.Flush()
	x.finish(name, true, res.ExitCode, started)
	switch {
	case err != nil:
		clear(out)
		return nil, fmt.Errorf("%s could not run: %w", name, err)
	case res.ExitCode != 0:
		clear(out)
		return nil, &runstep.StepFailed{Step: name, Exit: res.ExitCode}
	}
	return out, nil
}
