package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/scan"
	"github.com/switchtender/switchtender/store"
)

// The configuration scan (spec "What a plan runs, and what the gate
// reads"). A dry run or drift check that a rule would hold but for its
// exclude_dry_run, and every pull request's plan, is scanned before any
// tofu process of its own starts:
//
//  1. scan: the checkout's files are copied into the run's private
//     directory (no .git, no .terraform, no local state), `tofu get`
//     downloads the modules there with the run's environment, and package
//     scan reads the root module and every module it calls, through the
//     manifest that get wrote. A finding holds the run at the scan stage (a
//     pull request's plan is refused); a clean scan is recorded as the
//     rules' pass.
//  2. private copy: once the scan passes or a person releases its hold,
//     the checkout must still hold what the copy holds (a configuration
//     file, lock file or link changed since is named and ends the run), the
//     run's current local state is copied in, and every later process of
//     the run starts in the copy, never in the checkout.
//  3. init -get=false in the copy: no version is resolved again.
//  4. verify modules: the tree the plan will read is read again and its
//     digest must be the scanned one; any change is refused.
//  5. after the plan, the configuration the saved plan embeds must have the
//     scanned digest too.

// scanFor says whether run r is scanned before it plans, why, and which
// holds a finding makes, under the configuration now (liveConfig.scanFor).
func (s *Server) scanFor(r store.Run) (why string, holds []store.Hold) {
	return s.live.Load().scanFor(r)
}

// scanSteps are a scanned run's steps before its state secrets and plan.
func scanSteps() []step {
	return []step{xstep("scan", scanStep), xstep("private copy", enterCopyStep),
		xstep("init", func(ctx context.Context, x *execution) error {
			args := exec.InitArgs(false)
			if x.pullRequest() {
				args = append(args, "-lockfile=readonly") // a pull request installs only the providers the checkout pins
			}
			_, err := x.tool(ctx, "init", args)
			return err
		}),
		xstep("verify modules", verifyModulesStep)}
}

// scanStep scans the configuration in a private copy, or takes up the
// evidence a person released (the copy the gate read is still there).
func scanStep(ctx context.Context, x *execution) error {
	why, holds := x.s.scanFor(x.run)
	if err := checkScanEnv(x.env); err != nil {
		return err
	}
	if sc := x.run.Scan; sc != nil && scanReleased(x.run) {
		if _, err := os.Stat(x.copyDir()); err != nil {
			return end(StatusFailed, -1, "The private copy of the configuration the scan read is gone (%v), so the released modules cannot be put in place; nothing planned. Launch the run again to scan what is there now.", err)
		}
		x.scanned = sc
		x.say("scan: released by a person; planning the %d modules scanned (digest %s)", sc.Modules, sc.Digest)
		return nil
	}
	res, err := x.scanCopy(ctx)
	if err != nil {
		return err
	}
	return x.decideScan(scanRecord(res, why, x.masker), why, holds)
}

// decideScan records a scan's evidence on the run and decides on it, the
// same for a scan the control node ran and one a relay worker ran: a clean
// scan is the rules' pass (nil); a finding refuses a pull request's plan
// and holds any other run at the scan stage for the exempting rules'
// approvers (an *outcome either way).
func (x *execution) decideScan(sc *store.Scan, why string, holds []store.Hold) error {
	var run store.Run
	err := x.s.db.Update(func(tx *store.Tx) error { // the evidence and its entry, together
		var err error
		if run, err = tx.UpdateRun(x.run.ID, func(r *store.Run) error { r.Scan = sc; return nil }); err != nil {
			return err
		}
		return tx.Audit(auditEvent(run.ID, "switchtender", "scan", scanSummary(sc)))
	})
	if err != nil {
		return fmt.Errorf("recording the scan: %w", err)
	}
	x.run, x.scanned = run, sc
	x.say("scan: %s", scanSummary(sc))
	if len(sc.Findings) == 0 {
		return x.recordScanPass()
	}
	if why == scanForPullRequest {
		return end(StatusRefused, -1, "A pull request's plan that would run more than a read is refused rather than run; no tofu plan started. The scan of %s found: %s.", x.run.Commit.Ref, findingsPhrase(sc.Findings))
	}
	p := &store.Proposal{Stage: StageScan, Digest: scanStageDigest(run), Requested: requestedHow(run),
		Holds: holds, Findings: sc.Findings, CreatedAt: time.Now()}
	x.s.setProposal(run.ID, p, nil)
	return end(StatusAwaitingApproval, -1, "Held before anything plans: the configuration scan found %s. A plan would run that with the run's credentials, so a person must weigh it; releasing it plans exactly the modules scanned: approve %s --digest %s", findingsPhrase(sc.Findings), run.ID, p.Digest)
}

// recordScanPass records that the clean scan let the run through, with the
// digest of the modules it read.
func (x *execution) recordScanPass() error {
	run, err := x.s.db.UpdateRun(x.run.ID, func(r *store.Run) error {
		r.Approvals = append(r.Approvals, store.Approval{By: "rules", Stage: StageScan, Decision: DecisionPass,
			Digest: scanStageDigest(*r), Modules: r.Scan.Digest, At: time.Now()})
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording the scan's pass: %w", err)
	}
	x.run = run
	return nil
}

// scanReleased reports whether a person released r's scan-stage hold of its
// current evidence.
func scanReleased(r store.Run) bool {
	for _, a := range r.Approvals {
		if a.Stage == StageScan && a.Decision == DecisionApprove && r.Scan != nil && a.Modules == r.Scan.Digest {
			return true
		}
	}
	return false
}

// scanCopy copies the configuration into the private directory, downloads
// its modules there with tofu get, and scans the copy.
func (x *execution) scanCopy(ctx context.Context) (*scan.Result, error) {
	root, rel, err := x.scanRoot()
	if err != nil {
		return nil, err
	}
	get := func(ctx context.Context, dir string) error {
		_, err := x.toolIn(ctx, "get", dir, exec.GetArgs())
		return err
	}
	return scanCopyOf(ctx, scanInput{Root: root, Rel: rel, Dest: x.copyDir(), DataDir: x.s.config().Server.DataDir,
		PullRequest: x.pullRequest(), Env: x.env, Get: get, Say: x.say})
}

// copyDir is the gate's private copy of the configuration.
func (x *execution) copyDir() string { return filepath.Join(x.private, scanCopyName) }

// scanRoot is the tree the run's configuration lives in (the checkout, or
// a pull request's exported commit) and the working directory relative to
// it.
func (x *execution) scanRoot() (root, rel string, err error) {
	root = x.tree
	if root == "" {
		p, ok := x.s.config().Projects[x.run.Project]
		if !ok {
			return "", "", fmt.Errorf("project %q is no longer configured", x.run.Project)
		}
		if root, err = filepath.EvalSymlinks(p.Path); err != nil {
			return "", "", fmt.Errorf("resolving the checkout %s: %w", p.Path, err)
		}
	}
	rel, err = relInside(root, x.dir)
	return root, rel, err
}

// pullRequest reports whether the run plans a pull request's commit.
func (x *execution) pullRequest() bool { return x.run.Commit != nil && x.run.Commit.Ref != "" }

// verifyModulesStep reads the configuration and modules the plan will read
// and refuses the run unless their digest is the scanned one.
func verifyModulesStep(ctx context.Context, x *execution) error {
	root, _, err := x.scanRoot()
	if err != nil {
		return err
	}
	digest, err := verifyModules(root, x.dir, x.env, x.scanned, x.pullRequest())
	if err != nil {
		return err
	}
	x.say("scan: the modules in place are the ones scanned (%s)", digest)
	return nil
}

// checkPlanConfig checks that the saved plan at path embeds the
// configuration the scan read (its tfconfig/ snapshot has the scanned
// digest). Runs that were not scanned pass.
func (x *execution) checkPlanConfig(path string) error {
	if x.scanned == nil {
		return nil
	}
	released := ""
	if scanReleased(x.run) {
		released = scanReleasers(x.run)
	}
	return planConfigIsScanned(path, x.scanned, released, x.say)
}

// scanReleasers names who released a run's scan-stage hold.
func scanReleasers(r store.Run) string {
	var by []string
	for _, a := range r.Approvals {
		if a.Stage == StageScan && a.Decision == DecisionApprove {
			by = append(by, a.By)
		}
	}
	return strings.Join(by, ", ")
}

// scanStageDigest binds a scan-stage hold to the run's request and the
// scan's evidence: releasing it releases exactly those modules.
func scanStageDigest(r store.Run) string {
	b, _ := json.Marshal(struct {
		Request, Modules string
		Findings         []store.Finding
	}{requestDigest(r), r.Scan.Digest, r.Scan.Findings})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// scanSummary is one line on a scan: what it read and found.
func scanSummary(sc *store.Scan) string {
	s := fmt.Sprintf("read %d %s and %d %s (digest %s)", sc.Modules, plural(sc.Modules, "module", "modules"), sc.Files, plural(sc.Files, "file", "files"), sc.Digest)
	if len(sc.Findings) == 0 {
		return s + "; no finding"
	}
	return fmt.Sprintf("%s; %d %s: %s", s, len(sc.Findings), plural(len(sc.Findings), "finding", "findings"), findingsPhrase(sc.Findings))
}

// findingsPhrase names every finding: address (file:line): reason.
func findingsPhrase(fs []store.Finding) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, findingText(f))
	}
	return strings.Join(parts, "; ")
}
