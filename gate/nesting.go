package gate

import (
	"errors"
	"fmt"
)

// ErrTooDeep is wrapped by NestingDepth's error.
var ErrTooDeep = errors.New("nested too deeply")

// NestingDepth refuses HCL native syntax or JSON (which it reads the same
// way) that would make the HCL parser recurse more than max levels deep,
// naming the line where the limit is passed. The parser recurses once per
// bracket, brace, parenthesis, template interpolation (${ and %{), nested
// template if/for, unary operator (each ! or - of a chain such as !!!x) and
// conditional (each ? of a chain such as a ? b : c ? d : e); a stack
// overflow is not recoverable, so the check comes first. It reads comments,
// quoted strings, escapes and heredocs as the lexer does, so brackets inside
// them neither hide nor add depth; where it cannot tell, it counts more,
// never less (it fails closed).
func NestingDepth(src []byte, max int) error {
	_, err := scanShape(src, max)
	return err
}

// scanShape is NestingDepth that also counts the blocks of a configuration
// file: its top-level braces, or for JSON (one top-level object) the
// objects one and two levels in.
func scanShape(src []byte, max int) (blocks int, err error) {
	n := nester{src: src, max: max, line: 1}
	for n.i < len(src) {
		if src[n.i] == '{' && n.inCode() && len(n.stack) <= 2 {
			blocks++
		}
		if err := n.step(); err != nil {
			return blocks, err
		}
	}
	return blocks, nil
}

// frame is one open level: code (after a bracket or ${) or a quoted string
// or heredoc template.
type frame struct {
	code     bool
	closer   byte   // the byte that closes a code frame
	heredoc  string // the heredoc's end marker, for a heredoc template
	question int    // conditionals open in this code frame
	ifs      int    // template if/for directives open in this template
}

type nester struct {
	src    []byte
	i      int
	line   int
	max    int
	stack  []frame
	extra  int // questions, template directives and the unary chain, over all frames
	unary  int // the current chain of ! and -
	lineAt int // where the current line starts
}

func (n *nester) depth() int { return len(n.stack) + n.extra }

func (n *nester) check() error {
	if n.depth() > n.max {
		return &NestingError{Line: n.line, Max: n.max}
	}
	return nil
}

// NestingError says where a file passes the nesting limit.
type NestingError struct {
	Line, Max int
}

func (e *NestingError) Error() string {
	return fmt.Sprintf("line %d: %v (more than %d levels of brackets, interpolations, unary operators and conditionals)", e.Line, ErrTooDeep, e.Max)
}

// Is makes errors.Is(err, ErrTooDeep) true.
func (e *NestingError) Is(target error) bool { return target == ErrTooDeep }

func (n *nester) inCode() bool {
	return len(n.stack) == 0 || n.stack[len(n.stack)-1].code
}

func (n *nester) at(s string) bool {
	return n.i+len(s) <= len(n.src) && string(n.src[n.i:n.i+len(s)]) == s
}

func (n *nester) newline() {
	n.line++
	n.lineAt = n.i + 1
}

func (n *nester) step() error {
	if n.inCode() {
		return n.code()
	}
	return n.template()
}

// push opens a frame and checks the depth.
func (n *nester) push(f frame) error {
	n.stack = append(n.stack, f)
	return n.check()
}

// pop closes the innermost frame, dropping what was counted in it.
func (n *nester) pop() {
	f := n.stack[len(n.stack)-1]
	n.extra -= f.question + f.ifs
	n.stack = n.stack[:len(n.stack)-1]
}

// code reads one construct of code: a comment, a string, a heredoc, a
// bracket, an operator that nests, or any other byte.
func (n *nester) code() error {
	c := n.src[n.i]
	unary := c == '!' || (c == '-' && !n.at("->"))
	n.endUnary(unary, c)
	switch {
	case c == '#' || n.at("//"):
		n.skipTo("\n", false)
		return nil
	case n.at("/*"):
		n.skipTo("*/", true)
		return nil
	case unary || c == '?':
		return n.nestingOperator(c == '?')
	case c == '"':
		n.i++
		return n.push(frame{})
	case n.at("<<"):
		return n.heredoc()
	case c == '{' || c == '[' || c == '(':
		n.i++
		return n.push(frame{code: true, closer: map[byte]byte{'{': '}', '[': ']', '(': ')'}[c]})
	}
	n.plain(c)
	n.i++
	return nil
}

// endUnary ends the chain of unary operators at any byte of code that is
// neither one nor white space.
func (n *nester) endUnary(unary bool, c byte) {
	if !unary && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
		n.extra = max(0, n.extra-n.unary)
		n.unary = 0
	}
}

// nestingOperator counts a unary operator of a chain, or a conditional's ?,
// as one level more.
func (n *nester) nestingOperator(question bool) error {
	if question {
		if len(n.stack) > 0 {
			n.stack[len(n.stack)-1].question++
		}
	} else {
		n.unary++
	}
	n.extra++
	n.i++
	return n.check()
}

// plain handles a byte of code that opens nothing: a newline (which ends a
// top-level conditional) or a closing bracket.
func (n *nester) plain(c byte) {
	switch {
	case c == '\n':
		n.newline()
		if len(n.stack) == 0 {
			n.extra, n.unary = 0, 0
		}
	case c == '}' || c == ']' || c == ')':
		if len(n.stack) > 0 && n.stack[len(n.stack)-1].closer == c {
			n.pop()
		}
	}
}

// template reads one construct of a quoted string or heredoc: an escape,
// an interpolation or directive (which opens code), its end, or any byte.
func (n *nester) template() error {
	top := &n.stack[len(n.stack)-1]
	c := n.src[n.i]
	switch {
	case c == '\\' && top.heredoc == "":
		n.i += 2
		return nil
	case n.at("$${") || n.at("%%{"):
		n.i += 3
		return nil
	case n.at("${"):
		n.i += 2
		return n.push(frame{code: true, closer: '}'})
	case n.at("%{"):
		n.i += 2
		n.directive(top)
		if err := n.check(); err != nil {
			return err
		}
		return n.push(frame{code: true, closer: '}'})
	case c == '"' && top.heredoc == "":
		n.pop()
	case c == '\n':
		n.newline()
		if top.heredoc != "" && n.heredocEnds(top.heredoc) {
			n.pop()
		}
	}
	n.i++
	return nil
}

// directive counts a template if or for as one more level and its end as
// one less.
func (n *nester) directive(top *frame) {
	j := n.i
	for j < len(n.src) && (n.src[j] == '~' || n.src[j] == ' ' || n.src[j] == '\t') {
		j++
	}
	word := func(w string) bool { return j+len(w) <= len(n.src) && string(n.src[j:j+len(w)]) == w }
	switch {
	case word("endif") || word("endfor"):
		if top.ifs > 0 {
			top.ifs--
			n.extra--
		}
	case word("if") || word("for"):
		top.ifs++
		n.extra++
	}
}

// heredoc opens a heredoc template: <<MARKER or <<-MARKER up to the end
// of the line; its content ends at a line that is the marker.
func (n *nester) heredoc() error {
	j := n.i + 2
	if j < len(n.src) && n.src[j] == '-' {
		j++
	}
	start := j
	for j < len(n.src) && (isIdentByte(n.src[j])) {
		j++
	}
	if j == start || j >= len(n.src) || n.src[j] != '\n' {
		n.i += 2 // not a heredoc after all: read on as code
		return nil
	}
	marker := string(n.src[start:j])
	n.i = j
	n.newline()
	n.i++
	if n.heredocEnds(marker) {
		return nil
	}
	return n.push(frame{heredoc: marker})
}

// heredocEnds reports whether the line starting at n.i (after a newline)
// is the heredoc's end marker, leading spaces allowed.
func (n *nester) heredocEnds(marker string) bool {
	j := n.i
	if n.src[min(j, len(n.src)-1)] == '\n' {
		j++
	}
	for j < len(n.src) && (n.src[j] == ' ' || n.src[j] == '\t') {
		j++
	}
	end := j + len(marker)
	if end > len(n.src) || string(n.src[j:end]) != marker {
		return false
	}
	return end == len(n.src) || n.src[end] == '\n' || n.src[end] == '\r'
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// skipTo moves past the next occurrence of end (past its start when not
// inclusive), counting lines.
func (n *nester) skipTo(end string, inclusive bool) {
	for n.i < len(n.src) && !n.at(end) {
		if n.src[n.i] == '\n' {
			n.newline()
		}
		n.i++
	}
	if inclusive {
		n.i += len(end)
	}
}
