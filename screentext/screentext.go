// Package screentext is the one escaping for text a person will read: the
// console, the plain commands, JSON, MCP and notifications all pass what
// came from outside the server (file names, block labels, addresses, keys,
// answers, descriptions, branch and commit names, logs, tofu's plan text)
// through it before it reaches a screen.
//
// A character is hidden when a terminal would act on it or a reader could
// not see it: C0 and C1 controls, DEL, the bidirectional controls, and
// every default-ignorable code point (zero-width characters, variation
// selectors, U+034F, tags, fillers), line and paragraph separators, spaces
// other than U+0020, and U+2800 (the blank Braille pattern, a letter that
// draws nothing: "a⠀b" would read as "a b"). So is a combining mark after
// MaxMarks of them in a row, which a terminal would stack over the lines
// around it. A hidden character is never removed and never
// passed raw: it is shown as a visible escape, \xNN below U+0080 (\n, \t
// and \r by their letters), \u{NNNN} above, and a byte that is not UTF-8 as
// \xNN (always 80 or more), so nothing a value holds disappears and no
// control string can open in one value and swallow the next.
//
// Field escapes one value as one unit and is injective: a backslash that
// could be read as the start of an escape is doubled, so two different
// values never look the same. Text and Sentence escape text the server
// composed or tofu printed, rune by rune (so per line: nothing spans a
// line), and leave backslashes as they are, so values already escaped with
// Field inside a sentence are not escaped twice.
package screentext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden reports whether r must not reach a person's screen as it is: see
// the package comment for the set (Unicode's Default_Ignorable_Code_Point
// property and the format characters are all in it).
func Hidden(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r < 0x80 || r == utf8.RuneError:
		return false
	case r == 0x00a0 || r == 0x00ad || r == 0x034f || r == 0x061c || r == 0x2800:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector,
		unicode.Noncharacter_Code_Point)
}

// mode says how the escaping treats newlines, tabs and backslashes.
type mode int

const (
	modeField    mode = iota // one value: every hidden rune escaped, backslashes doubled where needed
	modeSentence             // one line the server composed: hidden runes escaped, backslashes kept
	modeText                 // many lines: newline and tab kept, other hidden runes escaped, backslashes kept
)

// Field is s as one unit for a person to read: every hidden character (a
// newline and a tab too) as its escape, and a backslash doubled when it is
// last or what follows it could read as an escape (\, x, u, n, t, r or a
// hidden character). Two different values never give the same Field.
func Field(s string) string { return escape(s, modeField) }

// Sentence is one line the server composed, whose outside values were
// already passed through Field: hidden characters (newline and tab too)
// are escaped as Field does, backslashes are left as they are.
func Sentence(s string) string { return escape(s, modeSentence) }

// Text is text of many lines (a run log, tofu's plan text, a message box):
// a newline still ends a line and a tab stays; every other hidden character
// is escaped as Field does, each on its own, so no control string spans
// lines or removes text. Backslashes are left as they are.
func Text(s string) string { return escape(s, modeText) }

// escape returns s itself when nothing in it needs escaping.
func escape(s string, m mode) string {
	i := cleanPrefix(s, m)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	marks := 0 // combining marks in a row before s[i]
	for i < len(s) {
		if j := cleanPrefix(s[i:], m); j > 0 {
			b.WriteString(s[i : i+j])
			i, marks = i+j, 0
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if marks = marks + 1; !combining(r) {
			marks = 0
		}
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && m == modeField && backslashNeedsDoubling(s[i+1:]):
			b.WriteString(`\\`)
		case (r == '\n' || r == '\t') && m == modeText:
			b.WriteRune(r)
		case Hidden(r) || marks > MaxMarks:
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// MaxMarks is how many combining marks in a row reach a screen as they
// are; the ones after are shown as escapes. A terminal stacks the marks of
// a character above and below it, and a long stack ("Zalgo" text) is drawn
// over the rows around it, hiding the line above or below; the scripts
// that stack marks use fewer (Hebrew points and cantillation, Tibetan
// subjoined letters, Vietnamese accents).
const MaxMarks = 4

// combining reports whether r is a nonspacing or enclosing mark, which a
// terminal draws over the character before it.
func combining(r rune) bool {
	return r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me)
}

// cleanPrefix is the length of s's leading part that passes as it is: the
// fast path for the bulk of a log, printable ASCII.
func cleanPrefix(s string, m mode) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f && c != '\\':
		case c == '\\' && m != modeField:
		case (c == '\n' || c == '\t') && m == modeText:
		default:
			return i
		}
	}
	return len(s)
}

// backslashNeedsDoubling reports whether a backslash followed by rest
// would read as the start of an escape (or ends the value).
func backslashNeedsDoubling(rest string) bool {
	if rest == "" {
		return true
	}
	r, n := utf8.DecodeRuneInString(rest)
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case strings.ContainsRune(`\xuntr`, r):
		return true
	}
	return Hidden(r)
}

// writeEscape writes the visible escape of the hidden rune r.
func writeEscape(b *strings.Builder, r rune) {
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	default:
		fmt.Fprintf(b, `\u{%04x}`, r)
	}
}
