package scan

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"

	"github.com/switchtender/switchtender/gate"
)

// file reads the configuration file name in dir, the directory of the
// module at path: it records a finding for each block that acts when the
// plan reads it, and returns the module blocks. A file it cannot read or
// parse is a finding.
func (s *scanner) file(path []string, dir, name string) []call {
	full := filepath.Join(dir, name)
	rel := s.rel(full)
	addr := ModuleAddress(path)
	if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(full)
		if err != nil || !within(s.root, real) {
			s.find(addr, rel, 0, "configuration file is a symlink that leads outside the configuration's root (or nowhere); left unread")
			return nil
		}
	}
	src, err := gate.ReadConfigFile(full)
	if err != nil {
		s.find(addr, rel, 0, fmt.Sprintf("configuration file could not be read: %v; left unread", err))
		return nil
	}
	s.hashFile(ModuleKey(path), name, src)
	f, diags := parseConfig(src, rel, IsJSONFile(name))
	if diags.HasErrors() {
		s.find(addr, rel, diagLine(diags), fmt.Sprintf("configuration file does not parse: %s", diags.Error()))
		return nil
	}
	content, _, diags := f.Body.PartialContent(fileSchema)
	if diags.HasErrors() {
		s.find(addr, rel, diagLine(diags), fmt.Sprintf("configuration file could not be read: %s", diags.Error()))
	}
	if content == nil {
		return nil
	}
	var calls []call
	for _, b := range content.Blocks {
		line := b.DefRange.Start.Line
		switch b.Type {
		case "data", "ephemeral":
			s.dataFinding(path, b.Type, "", b, src, rel)
		case "check":
			s.check(path, b, src, rel)
		case "terraform":
			s.terraform(path, b, rel)
		case "module":
			calls = append(calls, moduleCall(b, src, rel, line))
		}
	}
	return calls
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
func (s *scanner) dataFinding(path []string, kind, check string, b *hcl.Block, src []byte, rel string) {
	reason := dataBlock(kind, check, b, src)
	if reason == "" {
		return
	}
	local := kind + "." + b.Labels[0] + "." + b.Labels[1]
	if kind == "data" {
		local = "data." + b.Labels[0] + "." + b.Labels[1]
	}
	s.find(Address(path, local), rel, b.DefRange.Start.Line, reason)
}

// check reads the data blocks nested in a check block: OpenTofu addresses
// them as the module's own data.TYPE.NAME.
func (s *scanner) check(path []string, b *hcl.Block, src []byte, rel string) {
	content, _, diags := b.Body.PartialContent(checkSchema)
	if diags.HasErrors() {
		s.find(Address(path, "check."+b.Labels[0]), rel, diagLine(diags), fmt.Sprintf("check block could not be read: %s", diags.Error()))
	}
	if content == nil {
		return
	}
	for _, d := range content.Blocks {
		s.dataFinding(path, "data", b.Labels[0], d, src, rel)
	}
}

// terraform reads the encryption blocks of a terraform block.
func (s *scanner) terraform(path []string, b *hcl.Block, rel string) {
	content, _, diags := b.Body.PartialContent(terraformSchema)
	if diags.HasErrors() {
		s.find(ModuleAddress(path), rel, diagLine(diags), fmt.Sprintf("terraform block could not be read: %s", diags.Error()))
	}
	if content == nil {
		return
	}
	for _, e := range content.Blocks {
		ec, _, diags := e.Body.PartialContent(encryptionSchema)
		if diags.HasErrors() {
			s.find(ModuleAddress(path), rel, diagLine(diags), fmt.Sprintf("encryption block could not be read: %s", diags.Error()))
		}
		if ec != nil {
			s.encryptionBlocks(path, ec.Blocks, rel)
		}
	}
}

// encryptionBlocks records a finding for each key_provider or method block
// that runs something.
func (s *scanner) encryptionBlocks(path []string, blocks hcl.Blocks, file string) {
	for _, kb := range blocks {
		if r := EncryptionReason(kb.Type, kb.Labels[0]); r != "" {
			s.find(Address(path, kb.Type+"."+kb.Labels[0]+"."+kb.Labels[1]), file, kb.DefRange.Start.Line, r)
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
