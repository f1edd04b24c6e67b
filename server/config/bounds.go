package config

import (
	"github.com/hashicorp/hcl/v2"
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
	depth := 0
	pos := hcl.InitialPos
	for i, c := range src {
		switch c {
		case '{', '[', '(':
			if depth++; depth > MaxNesting {
				at := hcl.Pos{Line: pos.Line, Column: pos.Column, Byte: i}
				p.errorf(hcl.Range{Filename: p.filename, Start: at, End: at}, "Nested too deeply",
					"brackets, braces and parentheses nest more than %d levels deep here; a configuration needs far fewer", MaxNesting)
				return false
			}
		case '}', ']', ')':
			depth = max(0, depth-1)
		}
		if c == '\n' {
			pos.Line, pos.Column = pos.Line+1, 1
		} else {
			pos.Column++
		}
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
