package runstep

import (
	"context"
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

// Why a run is scanned.
const (
	ScanForExemption   = "exclude_dry_run"
	ScanForPullRequest = "pull request"
)

// Names in a run's private directory.
const (
	ScanCopyName = "scan" // the gate's private copy of the configuration
	TreeName     = "tree" // a pull request's exported commit
)

// ScanRecord is a scan's result as the run records it, each finding's
// reason masked.
func ScanRecord(res *scan.Result, why string, m *mask.Masker) *store.Scan {
	sc := &store.Scan{Digest: res.Digest, Modules: res.Modules, Files: res.Files, Why: why, ScannedAt: time.Now(), Findings: []store.Finding{}}
	for _, f := range res.Findings {
		sc.Findings = append(sc.Findings, store.Finding{Address: f.Address, File: f.File, Line: f.Line, Reason: m.String(f.Reason)})
	}
	sc.Findings = BoundFindings(sc.Findings)
	return sc
}

// Bounds on a scan's evidence as a run records it, shows and audits it.
const (
	MaxFindings      = 100 // findings listed; one more says how many are not
	MaxFindingReason = 512 // bytes of one finding's reason
)

// BoundFindings cuts each reason to MaxFindingReason bytes and, of more
// than MaxFindings+1 findings, keeps the first MaxFindings and says in one
// more how many it left out. Bounding a bounded list changes nothing, so
// evidence bounded on a worker and again on the control node, or scanned
// twice, compares equal. Reasons are cut after masking, never before.
func BoundFindings(fs []store.Finding) []store.Finding {
	fs = CapFindings(fs)
	out := make([]store.Finding, 0, len(fs))
	for _, f := range fs {
		if len(f.Reason) > MaxFindingReason {
			f.Reason = strings.ToValidUTF8(f.Reason[:MaxFindingReason], "") + "…"
		}
		out = append(out, f)
	}
	return out
}

// scanEnvRefused are environment entries that would make OpenTofu read
// modules, or init, otherwise than the scanned steps say: another data
// directory (a manifest the gate did not write), or arguments added to
// every command or to get and init.
var scanEnvRefused = []string{"TF_DATA_DIR", "TF_CLI_ARGS", "TF_CLI_ARGS_init", "TF_CLI_ARGS_get", "TF_CLI_ARGS_plan"}

// CheckScanEnv refuses a scanned run whose environment (its credentials)
// sets one of scanEnvRefused.
func CheckScanEnv(env []string) error {
	for _, k := range scanEnvRefused {
		if EnvValue(env, k) != "" {
			return End(store.StatusRefused, -1, "The run's environment sets %s, which would make OpenTofu read modules or arguments the scan did not; a scanned run is refused with it. Remove it from the template's credentials; nothing planned.", k)
		}
	}
	return nil
}

// ScanInput is what a scan of a run's configuration reads and uses: the
// tree (a checkout or a pull request's commit) and the working directory
// relative to it, the private copy to make, the run's environment, how to
// run `tofu get` in a directory, and how to say a line in the run's log.
type ScanInput struct {
	Root, Rel, Dest string
	DataDir         string // the data directory, left out of the copy when it lies in the checkout
	PullRequest     bool   // a pull request's plan: remote states are findings too (scan.Options)
	Env             []string
	Get             func(ctx context.Context, dir string) error
	Say             func(format string, args ...any)
}

// ScanCopy is the scan step wherever the plan runs (the control node or
// a relay worker): the configuration files under in.Root are copied into
// in.Dest, read, and when the configuration calls a module `tofu get`
// downloads the modules into the copy with the run's environment before it
// is read again through the manifest get wrote. A copy that cannot be made
// is an *Outcome refusing the run; a get that fails leaves its modules
// unread, which are findings.
func ScanCopy(ctx context.Context, in ScanInput) (*scan.Result, error) {
	if err := os.RemoveAll(in.Dest); err != nil {
		return nil, fmt.Errorf("clearing the scan's private copy: %w", err)
	}
	if err := CopyConfiguration(in.Root, in.Dest, in.DataDir); err != nil {
		return nil, End(store.StatusRefused, -1, "The configuration cannot be copied for the scan: %v; nothing planned.", err)
	}
	dir := filepath.Join(in.Dest, in.Rel)
	opts := scan.Options{Root: in.Dest, Dir: dir, Encryption: EnvValue(in.Env, "TF_ENCRYPTION"), PullRequest: in.PullRequest}
	res, err := scan.Module(opts)
	if err != nil {
		return nil, fmt.Errorf("scanning the configuration: %w", err)
	}
	if res.Modules == 1 && !slices.ContainsFunc(res.Findings, func(f scan.Finding) bool { return IsModuleAddress(f.Address) }) {
		return res, nil // no module call: nothing to download, no tofu process
	}
	in.Say("scan: downloading the modules the configuration calls into a private copy (tofu get)")
	if err := in.Get(ctx, dir); err != nil {
		var sf *StepFailed
		if !errors.As(err, &sf) {
			return nil, err
		}
		in.Say("scan: tofu get failed (exit %d); a module it could not download is left unread, a finding", sf.Exit)
	}
	opts.Manifest = ManifestIn(dir)
	if res, err = scan.Module(opts); err != nil {
		return nil, fmt.Errorf("scanning the configuration: %w", err)
	}
	return res, nil
}

// RelInside is dir relative to root, refusing a dir outside it.
func RelInside(root, dir string) (string, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !exec.Inside(root, dir) {
		return "", fmt.Errorf("the working directory %s is not inside %s; nothing ran", dir, root)
	}
	return rel, nil
}

// VerifyModules reads the configuration under root and the modules in
// dir's .terraform, as the plan will read them, and returns their digest;
// a digest or findings other than scanned's is an *Outcome refusing the
// run.
func VerifyModules(root, dir string, env []string, scanned *store.Scan, pullRequest bool) (string, error) {
	res, err := scan.Module(scan.Options{Root: root, Dir: dir, Manifest: ManifestIn(dir),
		Encryption: EnvValue(env, "TF_ENCRYPTION"), PullRequest: pullRequest})
	if err != nil {
		return "", fmt.Errorf("reading the configuration again: %w", err)
	}
	if res.Digest != scanned.Digest || !SameFindings(ScanRecord(res, "", mask.New()).Findings, scanned.Findings) {
		return "", End(store.StatusRefused, -1, "The configuration or its modules changed after the scan (they read as %s now, %s when scanned), so this run cannot plan the modules the gate read; nothing planned. Launch it again to scan what is there now.", res.Digest, scanned.Digest)
	}
	return res.Digest, nil
}

// PlanConfigIsScanned checks the saved plan at path against the scan: its
// embedded configuration must have the scanned digest, or (when released
// names who released the scan's hold) hold besides only modules the scan
// left unread. Anything else is an *Outcome refusing the plan.
func PlanConfigIsScanned(path string, scanned *store.Scan, released string, say func(string, ...any)) error {
	got, err := scan.PlanDigest(path)
	if err != nil {
		return End(store.StatusRefused, -1, "The saved plan's configuration cannot be read to check it against the scan (%v); it is not kept.", err)
	}
	if got != scanned.Digest && released != "" && leftUnread(scanned.Findings) {
		// A module the scan could not read is in the plan's snapshot and not
		// in the digest; the person who released the run saw it named.
		say("scan: the saved plan also holds the modules the scan left unread, which %s released", released)
		return nil
	}
	if got != scanned.Digest {
		return End(store.StatusRefused, -1, "The saved plan was made from other modules than the scan read (%s, scanned %s); it is not kept.", got, scanned.Digest)
	}
	return nil
}

// leftUnread reports whether a finding is a module the scan left unread
// (its address is a module's: module.a or module.a.module.b).
func leftUnread(fs []store.Finding) bool {
	return slices.ContainsFunc(fs, func(f store.Finding) bool { return IsModuleAddress(f.Address) })
}

// IsModuleAddress reports whether addr is a module's address: module.a,
// module.a.module.b, ...
func IsModuleAddress(addr string) bool {
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

// CapFindings keeps the first MaxFindings of more than MaxFindings+1
// findings and says in one more how many it left out.
func CapFindings(fs []store.Finding) []store.Finding {
	if len(fs) <= MaxFindings+1 {
		return fs
	}
	more := store.Finding{Reason: fmt.Sprintf("%d more findings are not listed; a configuration with this many weighs as a whole", len(fs)-MaxFindings)}
	return append(slices.Clone(fs[:MaxFindings]), more)
}

// SameFindings reports whether a scan of the tree the plan reads found
// what the scan that was weighed found (by address, file and line): a file
// it can read no longer (a FIFO swapped in, say) adds nothing to the digest
// but is a finding.
func SameFindings(now, scanned []store.Finding) bool {
	return slices.EqualFunc(now, scanned, func(f, g store.Finding) bool {
		return f.Address == g.Address && f.File == g.File && f.Line == g.Line
	})
}

// ManifestIn is the module manifest in dir's .terraform, or "" when there
// is none (a get that failed or found no module to install).
func ManifestIn(dir string) string {
	p := filepath.Join(dir, ".terraform", "modules", "modules.json")
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}
