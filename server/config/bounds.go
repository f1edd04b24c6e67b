package config

import (
	"errors"

	"github.com/hashicorp/hcl/v2"

	"github.com/switchtender/switchtender/gate"
)

// Bounds on a configuration file, checked before the HCL parser sees it, so
// that no file can exhaust the process's memory or stack: the parser
// recurses once per level of nesting, and a stack overflow is not
// recoverable.
const (
	MaxFileSize = 4 << 20 // bytes
	MaxNesting  = 64      // levels of brackets, braces and parentheses
	MaxBlocks   = 10000   // top-level blocks
)

// checkBounds reports a file over MaxFileSize or nested deeper than
// MaxNesting as a diagnostic at file:line,col, and returns false.
func (p *parser) checkBounds(src []byte) bool {
	if len(src) > MaxFileSize {
		p.errorf(hcl.Range{Filename: p.filename, Start: hcl.InitialPos, End: hcl.InitialPos}, "File too large",
			"the configuration file is %d bytes, over the %d bytes it may have", len(src), MaxFileSize)
		return false
	}
	var ne *gate.NestingError
	if err := gate.NestingDepth(src, MaxNesting); errors.As(err, &ne) {
		at := hcl.Pos{Line: ne.Line, Column: 1}
		p.errorf(hcl.Range{Filename: p.filename, Start: at, End: at}, "Nested too deeply",
			"brackets, interpolations, unary operators or conditionals nest more than %d levels deep here; a configuration needs far fewer", MaxNesting)
		return false
	}
	return true
}

// checkBlockCount reports more than MaxBlocks top-level blocks.
func (p *parser) checkBlockCount(blocks hcl.Blocks) bool {
	if len(blocks) <= MaxBlocks {
		return true
	}
	p.errorf(blocks[MaxBlocks].DefRange, "Too many blocks",
		"the configuration has %d blocks, over the %d it may have", len(blocks), MaxBlocks)
	return false
}
