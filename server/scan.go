package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchtender/switchtender/exec"
	"github.com/switchtender/switchtender/exec/mask"
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

// Why a run is scanned.
const (
	scanForExemption   = "exclude_dry_run"
	scanForPullRequest = "pull request"
)

// Names in a run's private directory.
const (
	scanCopyName = "scan" // the gate's private copy of the configuration
	treeName     = "tree" // a pull request's exported commit
)

// scanFor says whether run r is scanned before it plans, why, and which
// holds a finding makes, under the configuration now (liveConfig.scanFor).
func (s *Server) scanFor(r store.Run) (why string, holds []store.Hold) {
	return s.live.Load().scanFor(r)
}

// scanSteps are a scanned run's steps before its state secrets and plan.
func scanSteps() []step {
	return []step{{"scan", scanStep}, {"private copy", enterCopyStep},
		{"init", func(ctx context.Context, x *execution) error {
			args := exec.InitArgs(false)
			if x.pullRequest() {
				args = append(args, "-lockfile=readonly") // a pull request installs only the providers the checkout pins
			}
			_, err := x.tool(ctx, "init", args)
			return err
		}},
		{"verify modules", verifyModulesStep}}
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

// scanRecord is a scan's result as the run records it, each finding's
// reason masked.
func scanRecord(res *scan.Result, why string, m *mask.Masker) *store.Scan {
	sc := &store.Scan{Digest: res.Digest, Modules: res.Modules, Files: res.Files, Why: why, ScannedAt: time.Now(), Findings: []store.Finding{}}
	for _, f := range res.Findings {
		sc.Findings = append(sc.Findings, store.Finding{Address: f.Address, File: f.File, Line: f.Line, Reason: m.String(f.Reason)})
	}
	sc.Findings = boundFindings(sc.Findings)
	return sc
}

// Bounds on a scan's evidence as a run records it, shows and audits it.
const (
	maxFindings      = 100 // findings listed; one more says how many are not
	maxFindingReason = 512 // bytes of one finding's reason
)

// boundFindings cuts each reason to maxFindingReason bytes and, of more
// than maxFindings+1 findings, keeps the first maxFindings and says in one
// more how many it left out. Bounding a bounded list changes nothing, so
// evidence bounded on a worker and again on the control node, or scanned
// twice, compares equal. Reasons are cut after masking, never before.
func boundFindings(fs []store.Finding) []store.Finding {
	fs = capFindings(fs)
	out := make([]store.Finding, 0, len(fs))
	for _, f := range fs {
		if len(f.Reason) > maxFindingReason {
			f.Reason = strings.ToValidUTF8(f.Reason[:maxFindingReason], "") + "…"
		}
		out = append(out, f)
	}
	return out
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
	p := &store.Proposal{Stage: string(StageScan), Digest: scanStageDigest(run), Requested: requestedHow(run),
		Holds: holds, Findings: sc.Findings, CreatedAt: time.Now()}
	x.s.setProposal(run.ID, p)
	return end(StatusAwaitingApproval, -1, "Held before anything plans: the configuration scan found %s. A plan would run that with the run's credentials, so a person must weigh it; releasing it plans exactly the modules scanned: approve %s --digest %s", findingsPhrase(sc.Findings), run.ID, p.Digest)
}

// scanEnvRefused are environment entries that would make OpenTofu read
// modules, or init, otherwise than the scanned steps say: another data
// directory (a manifest the gate did not write), or arguments added to
// every command or to get and init.
var scanEnvRefused = []string{"TF_DATA_DIR", "TF_CLI_ARGS", "TF_CLI_ARGS_init", "TF_CLI_ARGS_get", "TF_CLI_ARGS_plan"}

// checkScanEnv refuses a scanned run whose environment (its credentials)
// sets one of scanEnvRefused.
func checkScanEnv(env []string) error {
	for _, k := range scanEnvRefused {
		if envValue(env, k) != "" {
			return end(StatusRefused, -1, "The run's environment sets %s, which would make OpenTofu read modules or arguments the scan did not; a scanned run is refused with it. Remove it from the template's credentials; nothing planned.", k)
		}
	}
	return nil
}

// recordScanPass records that the clean scan let the run through, with the
// digest of the modules it read.
func (x *execution) recordScanPass() error {
	run, err := x.s.db.UpdateRun(x.run.ID, func(r *store.Run) error {
		r.Approvals = append(r.Approvals, store.Approval{By: "rules", Stage: string(StageScan), Decision: string(DecisionPass),
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
		if Stage(a.Stage) == StageScan && Decision(a.Decision) == DecisionApprove && r.Scan != nil && a.Modules == r.Scan.Digest {
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
	return scanCopyOf(ctx, scanInput{root: root, rel: rel, dest: x.copyDir(), dataDir: x.s.config().Server.DataDir,
		pullRequest: x.pullRequest(), env: x.env, get: get, say: x.say})
}

// scanInput is what a scan of a run's configuration reads and uses: the
// tree (a checkout or a pull request's commit) and the working directory
// relative to it, the private copy to make, the run's environment, how to
// run `tofu get` in a directory, and how to say a line in the run's log.
type scanInput struct {
	root, rel, dest string
	dataDir         string // the data directory, left out of the copy when it lies in the checkout
	pullRequest     bool   // a pull request's plan: remote states are findings too (scan.Options)
	env             []string
	get             func(ctx context.Context, dir string) error
	say             func(format string, args ...any)
}

// scanCopyOf is the scan step wherever the plan runs (the control node or
// a relay worker): the configuration files under in.root are copied into
// in.dest, read, and when the configuration calls a module `tofu get`
// downloads the modules into the copy with the run's environment before it
// is read again through the manifest get wrote. A copy that cannot be made
// is an *outcome refusing the run; a get that fails leaves its modules
// unread, which are findings.
func scanCopyOf(ctx context.Context, in scanInput) (*scan.Result, error) {
	if err := os.RemoveAll(in.dest); err != nil {
		return nil, fmt.Errorf("clearing the scan's private copy: %w", err)
	}
	if err := copyConfiguration(in.root, in.dest, in.dataDir); err != nil {
		return nil, end(StatusRefused, -1, "The configuration cannot be copied for the scan: %v; nothing planned.", err)
	}
	dir := filepath.Join(in.dest, in.rel)
	opts := scan.Options{Root: in.dest, Dir: dir, Encryption: envValue(in.env, "TF_ENCRYPTION"), PullRequest: in.pullRequest}
	res, err := scan.Module(opts)
	if err != nil {
		return nil, fmt.Errorf("scanning the configuration: %w", err)
	}
	if res.Modules == 1 && !slices.ContainsFunc(res.Findings, func(f scan.Finding) bool { return isModuleAddress(f.Address) }) {
		return res, nil // no module call: nothing to download, no tofu process
	}
	in.say("scan: downloading the modules the configuration calls into a private copy (tofu get)")
	if err := in.get(ctx, dir); err != nil {
		var sf *stepFailed
		if !errors.As(err, &sf) {
			return nil, err
		}
		in.say("scan: tofu get failed (exit %d); a module it could not download is left unread, a finding", sf.exit)
	}
	opts.Manifest = manifestIn(dir)
	if res, err = scan.Module(opts); err != nil {
		return nil, fmt.Errorf("scanning the configuration: %w", err)
	}
	return res, nil
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

// relInside is dir relative to root, refusing a dir outside it.
func relInside(root, dir string) (string, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !exec.Inside(root, dir) {
		return "", fmt.Errorf("the working directory %s is not inside %s; nothing ran", dir, root)
	}
	return rel, nil
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

// verifyModules reads the configuration under root and the modules in
// dir's .terraform, as the plan will read them, and returns their digest;
// a digest or findings other than scanned's is an *outcome refusing the
// run.
func verifyModules(root, dir string, env []string, scanned *store.Scan, pullRequest bool) (string, error) {
	res, err := scan.Module(scan.Options{Root: root, Dir: dir, Manifest: manifestIn(dir),
		Encryption: envValue(env, "TF_ENCRYPTION"), PullRequest: pullRequest})
	if err != nil {
		return "", fmt.Errorf("reading the configuration again: %w", err)
	}
	if res.Digest != scanned.Digest || !sameFindings(scanRecord(res, "", mask.New()).Findings, scanned.Findings) {
		return "", end(StatusRefused, -1, "The configuration or its modules changed after the scan (they read as %s now, %s when scanned), so this run cannot plan the modules the gate read; nothing planned. Launch it again to scan what is there now.", res.Digest, scanned.Digest)
	}
	return res.Digest, nil
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

// planConfigIsScanned checks the saved plan at path against the scan: its
// embedded configuration must have the scanned digest, or (when released
// names who released the scan's hold) hold besides only modules the scan
// left unread. Anything else is an *outcome refusing the plan.
func planConfigIsScanned(path string, scanned *store.Scan, released string, say func(string, ...any)) error {
	got, err := scan.PlanDigest(path)
	if err != nil {
		return end(StatusRefused, -1, "The saved plan's configuration cannot be read to check it against the scan (%v); it is not kept.", err)
	}
	if got != scanned.Digest && released != "" && leftUnread(scanned.Findings) {
		// A module the scan could not read is in the plan's snapshot and not
		// in the digest; the person who released the run saw it named.
		say("scan: the saved plan also holds the modules the scan left unread, which %s released", released)
		return nil
	}
	if got != scanned.Digest {
		return end(StatusRefused, -1, "The saved plan was made from other modules than the scan read (%s, scanned %s); it is not kept.", got, scanned.Digest)
	}
	return nil
}

// leftUnread reports whether a finding is a module the scan left unread
// (its address is a module's: module.a or module.a.module.b).
func leftUnread(fs []store.Finding) bool {
	return slices.ContainsFunc(fs, func(f store.Finding) bool { return isModuleAddress(f.Address) })
}

// isModuleAddress reports whether addr is a module's address: module.a,
// module.a.module.b, ...
func isModuleAddress(addr string) bool {
	parts := strings.Split(addr, ".")
	if len(parts)%2 != 0 {
		return false
	}
	for i := 0; i < len(parts); i += 2 {
		if parts[i] != "module" {
			return false
		}
	}
	return true
}

// scanReleasers names who released a run's scan-stage hold.
func scanReleasers(r store.Run) string {
	var by []string
	for _, a := range r.Approvals {
		if Stage(a.Stage) == StageScan && Decision(a.Decision) == DecisionApprove {
			by = append(by, a.By)
		}
	}
	return strings.Join(by, ", ")
}

// capFindings keeps the first maxFindings of more than maxFindings+1
// findings and says in one more how many it left out.
func capFindings(fs []store.Finding) []store.Finding {
	if len(fs) <= maxFindings+1 {
		return fs
	}
	more := store.Finding{Reason: fmt.Sprintf("%d more findings are not listed; a configuration with this many weighs as a whole", len(fs)-maxFindings)}
	return append(slices.Clone(fs[:maxFindings]), more)
}

// sameFindings reports whether a scan of the tree the plan reads found
// what the scan that was weighed found (by address, file and line): a file
// it can read no longer (a FIFO swapped in, say) adds nothing to the digest
// but is a finding.
func sameFindings(now, scanned []store.Finding) bool {
	return slices.EqualFunc(now, scanned, func(f, g store.Finding) bool {
		return f.Address == g.Address && f.File == g.File && f.Line == g.Line
	})
}

// manifestIn is the module manifest in dir's .terraform, or "" when there
// is none (a get that failed or found no module to install).
func manifestIn(dir string) string {
	p := filepath.Join(dir, ".terraform", "modules", "modules.json")
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
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
