package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/server/runstep"
	"github.com/switchtender/switchtender/store"
	"github.com/switchtender/switchtender/vcs"
)

// A scanned job on a relay worker (spec "What a plan runs, and what the
// gate reads": a plan's scan runs where the plan runs) runs
// the control node's scan steps in the worker's own checkout and private
// directory: a pull request's commit is exported there, the configuration
// is copied, its modules downloaded with tofu get and the copy scanned.
// The evidence goes to the control node, which decides on it as it
// decides on its own scans (pass, hold at the scan stage, refuse); only
// after its pass does the worker move the run into the scan's private copy
// (the checkout must still hold what the copy holds), run init -get=false
// there, verify the modules and plan, and the saved plan must embed the
// scanned configuration. A hold keeps nothing on the worker:
// once released, the worker that takes the run scans again and must read
// exactly the released evidence.

// errScanDecided ends a scanned job whose run the control node ended on
// the scan's evidence (held or refused); the worker sends no result.
var errScanDecided = errors.New("the control node ended the run on the scan's evidence")

// scanSteps are a scanned job's steps before its state secrets and plan,
// as the control node's: a pull request's export, the scan, the move into
// its private copy, init there and the check that the modules in place are
// the ones scanned.
func (x *workerRun) scanSteps() []runstep.Step[*workerRun] {
	var steps []runstep.Step[*workerRun]
	if x.job.ScanWhy == runstep.ScanForPullRequest {
		steps = append(steps, wstep("export", exportStep))
	}
	return append(steps, wstep("scan", scanStep), wstep("private copy", enterCopyStep), wstep("init", scannedInitStep),
		wstep("verify modules", verifyModulesStep))
}

// scanStep copies the configuration into the private directory, downloads
// its modules there, scans the copy and waits for the control node's
// decision on the evidence.
func scanStep(ctx context.Context, x *workerRun) error {
	if err := runstep.CheckScanEnv(x.env); err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(x.checkout)
	if err != nil {
		return fmt.Errorf("resolving the checkout %s: %w", x.checkout, err)
	}
	rel, err := runstep.RelInside(root, x.dir)
	if err != nil {
		return err
	}
	x.copyRoot, x.copyRel = root, rel
	get := func(ctx context.Context, dir string) error {
		_, err := x.toolIn(ctx, "get", dir, exec.GetArgs())
		x.step = "scan"
		return err
	}
	res, err := runstep.ScanCopy(ctx, runstep.ScanInput{Root: root, Rel: rel, Dest: x.copyDir(), DataDir: x.w.cfg.DataDir,
		PullRequest: x.pr != nil, Env: x.env, Get: get, Say: x.Say})
	if err != nil {
		return err
	}
	sc := runstep.ScanRecord(res, x.job.ScanWhy, x.masker)
	if x.released, err = x.awaitScanVerdict(ctx, sc); err != nil {
		return err
	}
	x.scanned = sc
	return nil
}

// copyDir is the scan's private copy of the configuration.
func (x *workerRun) copyDir() string { return filepath.Join(x.private, runstep.ScanCopyName) }

// scannedInitStep runs init -get=false in the scan's private copy: a pull
// request installs only the providers the checkout pins.
func scannedInitStep(ctx context.Context, x *workerRun) error {
	args := exec.InitArgs(false)
	if x.pr != nil {
		args = append(args, "-lockfile=readonly")
	}
	_, err := x.tool0(ctx, "init", args)
	return err
}

// verifyModulesStep reads the configuration and modules the plan will
// read and refuses the job unless their digest is the scanned one.
func verifyModulesStep(ctx context.Context, x *workerRun) error {
	digest, err := runstep.VerifyModules(x.checkout, x.dir, x.env, x.scanned, x.pr != nil)
	if err != nil {
		return err
	}
	x.Say("scan: the modules in place are the ones scanned (%s)", digest)
	return nil
}

// awaitScanVerdict sends the scan's evidence to the control node and waits
// for its decision: the name of whoever released the run's scan hold ("" for
// the rules' pass) when the run may plan, errScanDecided when the control
// node ended the run.
func (x *workerRun) awaitScanVerdict(ctx context.Context, sc *store.Scan) (string, error) {
	x.out.Flush()
	if err := ctx.Err(); err != nil {
		return "", err // cancelled while it scanned: the control node decides nothing
	}
	if err := x.c.Send(relay.Msg{Type: relay.MsgScanned, Run: x.job.Run, Token: x.job.Token, Scan: sc, Commit: x.pr}); err != nil {
		return "", err
	}
	var m relay.Msg
	select {
	case m = <-x.verdict:
	case <-ctx.Done():
		select {
		case m = <-x.verdict: // the decision came with the cancel: it ended the run
		default:
			return "", ctx.Err()
		}
	}
	if m.Type == relay.MsgScanPass && ctx.Err() == nil {
		return m.Released, nil
	}
	if m.Type == relay.MsgScanPass {
		return "", ctx.Err()
	}
	return "", errScanDecided
}

// exportStep writes the pull request's commit into the run's private
// directory from the worker's own checkout, as the control node's export
// step does, and moves the run's working directory there. The commit is
// the one the control node resolved the ref to, when it has a checkout;
// otherwise the worker resolves the ref in its own and reports the commit.
func exportStep(ctx context.Context, x *workerRun) error {
	if err := runstep.CheckScanEnv(x.env); err != nil {
		return err
	}
	c := store.Commit{Ref: x.job.Ref, SHA: x.job.SHA}
	what := "ref " + c.Ref
	if c.SHA != "" {
		what = fmt.Sprintf("commit %s (ref %s, as the control node's checkout resolved it)", c.SHA, c.Ref)
	}
	x.pr = &c // the run keeps its ref whatever happens next
	sha, err := vcs.Resolve(ctx, x.checkout, cmp.Or(c.SHA, c.Ref))
	switch {
	case errors.Is(err, vcs.ErrNotRepository):
		return runstep.End(store.StatusFailed, -1, "Worker %s's checkout %s is not a git repository, so it holds no %s; nothing planned. Make the pool's checkouts clones of the repository.", x.w.cfg.Name, x.checkout, what)
	case err != nil:
		return runstep.End(store.StatusFailed, -1, "Worker %s's checkout %s does not hold %s; nothing planned. Fetch it into the checkout of every worker of the pool (a remote's branch is origin/NAME until a local branch tracks it), then launch again.", x.w.cfg.Name, x.checkout, what)
	}
	c.SHA = sha
	project, wd, err := runstep.ExportCommit(ctx, x.checkout, x.dir, x.job.Command, c, filepath.Join(x.private, runstep.TreeName))
	if err != nil {
		return err
	}
	x.Say("planning commit %s (%s) in a private tree on worker %s; the checkout is not touched", c.SHA, c.Ref, x.w.cfg.Name)
	id, err := runstep.DirIdentity(wd)
	if err != nil {
		return fmt.Errorf("reading the private tree's working directory: %w", err)
	}
	x.checkout, x.dir, x.dirID = project, wd, id
	return nil
}

// enterCopyStep moves the job into the scan's private copy (the control
// node's enterCopyStep): the checkout must still hold what the copy holds,
// the worker's local state is copied in, and every later process starts
// in the copy.
func enterCopyStep(ctx context.Context, x *workerRun) error {
	root, copyDir, rel := x.copyRoot, x.copyDir(), x.copyRel
	p := x.w.cfg.Projects[x.job.Project]
	live, err := exec.ResolveWorkingDir(p.Path, x.job.Command)
	if err != nil {
		return fmt.Errorf("refusing working directory: %w; nothing planned", err)
	}
	wd, err := runstep.EnterCopy(runstep.CopyEntry{Root: root, CopyRoot: copyDir, Rel: rel, LiveDir: live, Checkout: p.Path,
		DataDir: x.w.cfg.DataDir, Env: x.env})
	if err != nil {
		return err
	}
	copyRoot, err := filepath.EvalSymlinks(copyDir)
	if err != nil {
		return fmt.Errorf("resolving the scan's private copy: %w", err)
	}
	if wd, err = filepath.EvalSymlinks(wd); err != nil {
		return fmt.Errorf("resolving the scan's private copy: %w", err)
	}
	id, err := runstep.DirIdentity(wd)
	if err != nil {
		return fmt.Errorf("reading the scan's private copy: %w", err)
	}
	x.Say("scan: the checkout holds what the scan read; every process of this run runs in the scan's private copy on worker %s", x.w.cfg.Name)
	x.checkout, x.dir, x.dirID = copyRoot, wd, id
	return nil
}

// checkPlanConfig checks a scanned job's saved plan at path against the
// scan, as the control node's checkPlanConfig does; other jobs pass.
func (x *workerRun) checkPlanConfig(path string) error {
	if x.scanned == nil {
		return nil
	}
	return runstep.PlanConfigIsScanned(path, x.scanned, x.released, x.Say)
}

// Say writes a line of Switchtender's own into the run's log, masked
// ([runstep.Env]).
func (x *workerRun) Say(format string, args ...any) {
	fmt.Fprintf(x.out, "switchtender: "+format+"\n", args...)
}
