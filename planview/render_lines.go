package planview

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Role says what a [Line] is, so a door can style it (colour, bold); the
// words never depend on the style: every mark is text as well.
type Role uint8

// Roles of the view's lines.
const (
	RolePlain     Role = iota // text as it is (a blank line, a context line of a line diff)
	RoleHeading               // a section's heading, the counts of what else changes
	RoleDestroy               // what destroys: the destroy count, a replaced or deleted section's heading
	RoleLeave                 // what leaves state: the forget count, a forgotten section's heading
	RoleRemoved               // a resource that goes, a value or a line removed ("-")
	RoleAdded                 // a resource that comes, a value or a line added ("+")
	RoleChanged               // a resource or a value that changes in place ("~")
	RoleForgotten             // a forgotten resource's head line
	RoleResource              // another resource's head line (read, import, move)
	RoleNote                  // what explains a head line: why, forced by
	RoleWarning               // an address that looks like another ("! looks like …")
	RoleSensitive             // a sensitive value: whether it changed, and its fingerprints
	RoleHidden                // what is left out: unchanged attributes or lines
)

// Line is one line of the view, before it is wrapped to a width: Indent
// spaces, then Text. Text is already escaped (every value went through
// screentext.Field): it holds no control, bidirectional or invisible
// character and no newline.
type Line struct {
	Role   Role
	Indent int    // cells of spaces before Text
	Text   string // printable text, no newline
}

// String is the line as plain text: its indentation and its text.
func (l Line) String() string { return strings.Repeat(" ", l.Indent) + l.Text }

// Width is the cells the line takes on a terminal.
func (l Line) Width() int { return l.Indent + textWidth(l.Text) }

// hang is how much deeper than its first line a wrapped line's rest is
// indented.
const hang = 4

// minText is the fewest cells of text a wrapped line keeps: a line
// indented deeper than width-minText gives up indentation first.
const minText = 16

// Continued is the mark every wrapped line after the first begins with,
// so that the rest of a value (an address, a key, a string) wrapped onto
// a row of its own never passes for a line of the view: a note ("forced
// by: …"), an attribute, a heading. No line of the view begins with it.
const Continued = "↪ "

// continuedCells is the cells Continued takes.
const continuedCells = 2

// Wrap breaks l into lines of at most width cells (0: no limit, l alone).
// It breaks at spaces; a word longer than a whole line is broken where a
// letter or a digit meets anything else (after "." or before "[" in an
// address, after "-"), never inside an escape (\u{202e}), and cut inside a
// run of letters and digits only when that run alone is wider than a line.
// The lines after the first begin with [Continued], their text hang cells
// deeper than the first's (less when the width is too small for it), with
// l's role. Text that fits is l itself.
func Wrap(l Line, width int) []Line {
	if width <= 0 || l.Width() <= width {
		return []Line{l}
	}
	first := min(l.Indent, max(0, width-minText))
	rest := max(0, min(l.Indent+hang, max(0, width-minText))-continuedCells)
	head, text := cutLine(l.Text, max(1, width-first))
	out := []Line{{Role: l.Role, Indent: first, Text: head}}
	for text != "" {
		head, text = cutLine(text, max(1, width-rest-continuedCells))
		out = append(out, Line{Role: l.Role, Indent: rest, Text: Continued + head})
	}
	return out
}

// cutLine splits text into its first line of at most avail cells and the
// rest (without the spaces at the break). It reads text only as far as
// the line reaches, so wrapping a long text costs its length once.
func cutLine(text string, avail int) (head, tail string) {
	// The last space at which the text before it fits.
	cells, lastSpace := 0, -1
	for i := 0; i < len(text); {
		g, w := cluster(text[i:])
		if text[i] == ' ' {
			if cells <= avail {
				lastSpace = i
			}
		} else if cells+w > avail {
			return breakAt(text, lastSpace, avail)
		}
		cells += w
		i += len(g)
	}
	return strings.TrimRight(text, " "), "" // it fits, but for spaces at its end
}

// breakAt breaks text, wider than avail cells, at the space at byte
// lastSpace (-1: none), or inside its first word when there is no space
// to break at before it.
func breakAt(text string, lastSpace, avail int) (head, tail string) {
	if lastSpace > 0 {
		if head = strings.TrimRight(text[:lastSpace], " "); head != "" {
			return head, strings.TrimLeft(text[lastSpace:], " ")
		}
	}
	cut := wordBreak(text, avail)
	return text[:cut], strings.TrimLeft(text[cut:], " ")
}

// wordBreak is the byte offset at which to cut text, a word wider than
// avail cells. It is the last point within avail cells where a letter or
// digit does not meet another (outside an escape), preferring one after a
// separator (",", ";", "/", "-", "=") or before an opening (".", "[",
// "(", "{") when that keeps at least half the line; or else, for a run of
// letters and digits wider than the line, the last cluster boundary within
// avail cells. It is at least one cluster in.
func wordBreak(text string, avail int) int {
	cells, best, good, hard := 0, 0, 0, 0
	var prev rune
	for i := 0; i < len(text); {
		g, w := escapeOrCluster(text[i:])
		if cells+w > avail && i > 0 {
			break
		}
		r, _ := utf8.DecodeRuneInString(g)
		if i > 0 && !(wordRune(prev) && wordRune(r)) {
			best = i
			if (strings.ContainsRune(",;/-=", prev) || strings.ContainsRune(".[({", r)) && 2*cells >= avail {
				good = i
			}
		}
		cells += w
		i += len(g)
		hard = i
		prev, _ = utf8.DecodeLastRuneInString(g)
	}
	switch {
	case good > 0:
		return good
	case best > 0:
		return best
	}
	return max(hard, 1)
}

// wordRune reports whether r is part of a word: a letter or a digit.
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// escapeOrCluster is the unit at the start of s that a line never breaks
// inside: a screentext escape (\xNN, \u{NNNN}, \n, \t, \r, \\) or a
// grapheme cluster, with its cells.
func escapeOrCluster(s string) (string, int) {
	if len(s) >= 2 && s[0] == '\\' {
		n := escapeLen(s)
		return s[:n], n
	}
	return cluster(s)
}

// escapeLen is the length of the escape at the start of s (a backslash
// first), or 1 when what follows does not make one.
func escapeLen(s string) int {
	switch s[1] {
	case '\\', 'n', 't', 'r':
		return 2
	case 'x':
		if len(s) >= 4 {
			return 4
		}
	case 'u':
		if j := strings.IndexByte(s, '}'); j > 0 && j < 12 {
			return j + 1
		}
	}
	return 1
}

// cluster is the grapheme cluster at the start of s and its cells;
// printable ASCII before ASCII is a cluster of one cell.
func cluster(s string) (string, int) {
	if s[0] >= 0x20 && s[0] < 0x7f && (len(s) == 1 || s[1] < 0x80) {
		return s[:1], 1
	}
	g, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
	if g == "" {
		return s[:1], 1
	}
	return g, w
}

// textWidth is the cells s takes; printable ASCII is a cell a byte.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
