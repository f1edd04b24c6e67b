package scan

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"

	"github.com/switchtender/switchtender/gate"
)

// report collects findings.
type report struct {
	findings     []Finding
	remoteStates []Finding // every data "terraform_remote_state", found or not (Options.PullRequest)
	prBackends   []Finding // the root backend's credentials files (Options.PullRequest)
}

func (r *report) find(addr, file string, line int, reason string) {
	r.findings = append(r.findings, Finding{Address: addr, File: file, Line: line, Reason: reason})
}

// fileResult is what readFile makes of one configuration file.
type fileResult struct {
	report
	calls []call   // its module blocks
	read  bool     // whether it was read (and sum is its digest)
	sum   [32]byte // the sha256 of its contents
}

// readFile reads the configuration file name in dir, the directory of the
// module at path, root being the scan's root (link: the file is a
// symlink, which is read only if it leads to a file inside root): it records a finding for
// each block that acts when the plan reads it, and returns the module
// blocks. A file it cannot read or parse is a finding. It touches no
// shared state, so files are read in parallel.
func readFile(root string, path []string, dir, name string, link bool) *fileResult {
	out := &fileResult{}
	full := filepath.Join(dir, name)
	rel := relTo(root, full)
	addr := ModuleAddress(path)
	if link {
		real, err := filepath.EvalSymlinks(full)
		if err != nil || !within(root, real) {
			out.find(addr, rel, 0, "configuration file is a symlink that leads outside the configuration's root (or nowhere); left unread")
			return out
		}
	}
	src, err := gate.ReadConfigFile(full)
	if err != nil {
		out.find(addr, rel, 0, fmt.Sprintf("configuration file could not be read: %v; left unread", err))
		return out
	}
	out.read, out.sum = true, sha256.Sum256(src)
	f, diags := parseConfig(src, rel, isJSONFile(name))
	if diags.HasErrors() {
		out.find(addr, rel, diagLine(diags), fmt.Sprintf("configuration file does not parse: %s", diags.Error()))
		return out
	}
	content, _, diags := f.Body.PartialContent(fileSchema)
	if diags.HasErrors() {
		out.find(addr, rel, diagLine(diags), fmt.Sprintf("configuration file could not be read: %s", diags.Error()))
	}
	if content == nil {
		return out
	}
	for _, b := range content.Blocks {
		switch b.Type {
		case "data", "ephemeral":
			out.dataFinding(path, b.Type, "", b, src, rel)
		case "check":
			out.check(path, b, src, rel)
		case "terraform":
			out.terraform(path, b, rel)
		case "module":
			out.calls = append(out.calls, moduleCall(b, src, rel, b.DefRange.Start.Line))
		}
	}
	return out
}

// parseConfig parses a configuration file in the native or JSON syntax.
func parseConfig(src []byte, name string, json bool) (*hcl.File, hcl.Diagnostics) {
	if json {
		return hcljson.Parse(src, name)
	}
	return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
}

// diagLine returns the line of the first error among diags, 0 if none says.
func diagLine(diags hcl.Diagnostics) int {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			return d.Subject.Start.Line
		}
	}
	return 0
}

// dataFinding records a finding for a data or ephemeral block (kind) that
// acts when the plan reads it; check names the check block it is in.
func (r *report) dataFinding(path []string, kind, check string, b *hcl.Block, src []byte, rel string) {
	if kind == "data" && b.Labels[0] == "terraform_remote_state" {
		r.remoteStates = append(r.remoteStates, Finding{Address: Address(path, "data.terraform_remote_state."+b.Labels[1]),
			File: rel, Line: b.DefRange.Start.Line, Reason: remoteStateInPullRequest})
	}
	reason := dataBlock(kind, check, b, src)
	if reason == "" {
		return
	}
	local := kind + "." + b.Labels[0] + "." + b.Labels[1]
	if kind == "data" {
		local = "data." + b.Labels[0] + "." + b.Labels[1]
	}
	r.find(Address(path, local), rel, b.DefRange.Start.Line, reason)
}

// check reads the data blocks nested in a check block: OpenTofu addresses
// them as the module's own data.TYPE.NAME.
func (r *report) check(path []string, b *hcl.Block, src []byte, rel string) {
	content, _, diags := b.Body.PartialContent(checkSchema)
	if diags.HasErrors() {
		r.find(Address(path, "check."+b.Labels[0]), rel, diagLine(diags), fmt.Sprintf("check block could not be read: %s", diags.Error()))
	}
	if content == nil {
		return
	}
	for _, d := range content.Blocks {
		r.dataFinding(path, "data", b.Labels[0], d, src, rel)
	}
}

// terraform reads the encryption blocks of a terraform block, and the root
// module's backend block for the credentials files it names.
func (r *report) terraform(path []string, b *hcl.Block, rel string) {
	content, _, diags := b.Body.PartialContent(terraformSchema)
	if diags.HasErrors() {
		r.find(ModuleAddress(path), rel, diagLine(diags), fmt.Sprintf("terraform block could not be read: %s", diags.Error()))
	}
	if content == nil {
		return
	}
	for _, e := range content.Blocks {
		if e.Type == "backend" {
			r.backend(path, e, rel)
			continue
		}
		ec, _, diags := e.Body.PartialContent(encryptionSchema)
		if diags.HasErrors() {
			r.find(ModuleAddress(path), rel, diagLine(diags), fmt.Sprintf("encryption block could not be read: %s", diags.Error()))
		}
		if ec != nil {
			r.encryptionBlocks(path, ec.Blocks, rel)
		}
	}
}

// backend records the credentials files a backend block of the root
// module names (backendFileReason), for a pull request; OpenTofu reads no
// other module's backend.
func (r *report) backend(path []string, b *hcl.Block, rel string) {
	if len(path) != 0 {
		return
	}
	if reason := backendFileReason(b); reason != "" {
		r.prBackends = append(r.prBackends, Finding{Address: "terraform.backend." + b.Labels[0], File: rel,
			Line: b.DefRange.Start.Line, Reason: reason})
	}
}

// encryptionBlocks records a finding for each key_provider or method block
// that runs something.
func (r *report) encryptionBlocks(path []string, blocks hcl.Blocks, file string) {
	for _, kb := range blocks {
		reason := EncryptionReason(kb.Type, kb.Labels[0])
		if reason == "" && kb.Type == "key_provider" {
			reason = keyProviderFileReason(kb)
		}
		if reason != "" {
			r.find(Address(path, kb.Type+"."+kb.Labels[0]+"."+kb.Labels[1]), file, kb.DefRange.Start.Line, reason)
		}
	}
}

// moduleCall reads a module block's source.
func moduleCall(b *hcl.Block, src []byte, rel string, line int) call {
	c := call{name: b.Labels[0], file: rel, line: line}
	content, _, diags := b.Body.PartialContent(moduleSchema)
	if diags.HasErrors() || content == nil {
		return c
	}
	if a, ok := content.Attributes["source"]; ok {
		c.hasSource = true
		c.lit, c.source = literalValue(a.Expr, src)
	}
	return c
}
