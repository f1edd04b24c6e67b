package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchtender/switchtender/server/relay"
	"os"
	"path/filepath"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/seal"
)

// errHandedOff ends a gated plan's job on the worker: the saved plan went
// to the control node, which decides and ends the lease itself.
var errHandedOff = errors.New("the saved plan was handed to the control node")

// errStalePlan is OpenTofu's refusal of a saved plan whose state changed.
var errStalePlan = errors.New("saved plan is stale")

// gatedPlan plans with -out into the private directory, refuses a plan
// file over the relay's limit (its size and the limit stated), renders it
// with show -json, and hands both to the control node; the file is wiped
// once sent.
func (x *workerRun) gatedPlan(ctx context.Context) (int, string, error) {
	path := filepath.Join(x.private, planFileName)
	defer wipeQuiet(path)
	x.out.Flush()
	_ = x.c.Send(relay.Msg{Type: relay.MsgPlanning, Run: x.job.Run, Token: x.job.Token})
	args := exec.PlanArgs(path)
	if Kind(x.job.Kind) == KindCheck {
		args = exec.CheckArgs(path)
	}
	res, err := x.tool0(ctx, "plan", args)
	var sf *stepFailed
	switch {
	case Kind(x.job.Kind) == KindCheck && err == nil:
		if err := x.checkPlanConfig(path); err != nil {
			return -1, "", err
		}
		return 0, "No drift.", nil // the control node records the finding
	case Kind(x.job.Kind) == KindCheck && errors.As(err, &sf) && sf.exit == 2:
	case err != nil:
		return res.ExitCode, "", err
	}
	if err := x.checkPlanConfig(path); err != nil {
		return -1, "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return -1, "", fmt.Errorf("reading the saved plan: %w", err)
	}
	if fi.Size() > relay.PlanLimit {
		return -1, "", errors.New(planTooLarge(Kind(x.job.Kind), fi.Size()))
	}
	js, err := x.capture(ctx, "show -json", exec.ShowJSONArgs(path))
	defer clear(js)
	if err != nil {
		return -1, "", err
	}
	plan, err := os.ReadFile(path)
	defer clear(plan)
	if err != nil {
		return -1, "", fmt.Errorf("reading the saved plan: %w", err)
	}
	return res.ExitCode, "", x.handOver(plan, js)
}

// handOver sends the plan and its JSON in chunks, then the end.
func (x *workerRun) handOver(plan, js []byte) error {
	msg := func(m relay.Msg) error { m.Run, m.Token = x.job.Run, x.job.Token; return x.c.Send(m) }
	id, err := scan.DirIdentity(x.dir)
	if err != nil {
		return fmt.Errorf("reading the files under the directory the plan was made in: %w", err)
	}
	if err := msg(relay.Msg{Type: relay.MsgPlanStart, Size: int64(len(plan)), JSONSize: int64(len(js)), StartFiles: id.StartFileSums()}); err != nil {
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

// applySaved carries out the released plan the job brought sealed to the
// pool's delivery key: written only into the private directory, its
// digest checked against the release, its sensitive values masked, then
// apply PLANFILE; wiped however it ends.
func (x *workerRun) applySaved(ctx context.Context) (int, string, error) {
	path, err := seal.WriteFile(x.private, planFileName, x.plan)
	clear(x.plan)
	if err != nil {
		return -1, "", fmt.Errorf("writing the saved plan into the run's private directory: %w", err)
	}
	defer wipeQuiet(path)
	if d, err := seal.FileDigest(path); err != nil || d != x.digest {
		return -1, "", refusedf("Refused to apply: the plan that arrived is not the released %s; nothing was applied", x.digest)
	}
	js, err := x.capture(ctx, "show -json", exec.ShowJSONArgs(path))
	if err != nil {
		return -1, "", err
	}
	sens, err := gate.SensitiveValues(js)
	clear(js)
	if err != nil {
		return -1, "", refusedf("Refused to apply: the saved plan's sensitive values could not be read (%v), so they could not be masked; nothing was applied", err)
	}
	x.masker.Add(sens...)
	res, err := x.tool0(ctx, "apply", exec.ApplyPlanArgs(path))
	if err != nil && res.Stale && ctx.Err() == nil {
		return res.ExitCode, "", errStalePlan
	}
	return res.ExitCode, fmt.Sprintf("Applied the released plan %s on worker %s.", x.digest, x.w.cfg.Name), err
}

// capture runs one tool process whose stdout is returned, never logged.
func (x *workerRun) capture(ctx context.Context, name string, args []string) ([]byte, error) {
	if err := x.checkPlanned(name); err != nil {
		return nil, err
	}
	started, err := x.begin(name, x.dir, true)
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
		return nil, &stepFailed{step: name, exit: res.ExitCode}
	}
	return out, nil
}
