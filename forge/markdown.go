package forge

import (
	"strings"
	"unicode/utf8"

	"github.com/switchtender/switchtender/screentext"
)

// The escaping of the comment's markdown. A value (from the forge, the
// configuration or a plan) reaches the comment only through one of these:
// first screentext (no control, bidirectional or invisible character is
// ever written raw), then the markdown escaping, so that no value can open
// a link, an image, an HTML tag, a heading, a list, a table, a mention or a
// reference, or close the code span or fence it sits in. The same
// markdown is read alike by GitHub (cmark-gfm), Gitea (goldmark) and
// GitLab: only CommonMark code spans, fenced blocks and backslash escapes
// are relied on.

// maxValue is the most bytes of one escaped value a code span shows; a
// longer value is cut on a rune boundary, never inside an escape, and
// followed by "…" outside the span.
const maxValue = 300

// empty is how an empty value reads.
const empty = "(empty)"

// mdCode is one value as an inline code span: screentext.Field(value)
// (every hidden character a visible escape, newlines included, so the span
// is one line) cut to maxValue bytes, then codeSpan, and "…" after the
// span when the value was cut. An empty value is the plain words
// "(empty)". Inside a code span no forge reads markdown, HTML, an entity,
// a link, a mention, a reference or an emoji.
func mdCode(value string) string {
	s, cut := cutEscaped(value, maxValue, screentext.Field)
	if cut {
		return codeSpan(s) + ellipsis
	}
	return codeSpan(s)
}

// codeSpan is s (already escaped text without a newline) between backtick
// fences one longer than the longest run of backticks in s, so the span
// ends only at its closing fence; a space pads each side when s begins or
// ends with a backtick or a space (CommonMark strips one space from each
// side of a span that is not all spaces). An empty s is "(empty)".
func codeSpan(s string) string {
	if s == "" {
		return empty
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.Trim(s, " ") != "" && (s[0] == '`' || s[0] == ' ' || s[len(s)-1] == '`' || s[len(s)-1] == ' ') {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// sigils are the characters a forge reads after the markdown, in the
// rendered text, where a backslash escape is already gone: @ mentions,
// # and ! references (issues, GitLab merge requests), ~ % $ & GitLab
// labels, milestones, snippets and epics, : emoji and URL schemes (the
// autolinks). mdText puts each run of them in a code span, the one form
// every forge leaves as it is.
const sigils = "@#!~%$&:"

// mdText is a sentence as plain markdown text on one line:
// screentext.Sentence(s) (hidden characters, newlines included, as
// visible escapes), its leading and trailing spaces dropped, every run of
// sigils in a code span (but a run that a space or the end follows, which
// starts nothing a forge reads) and every other ASCII punctuation
// character backslash-escaped (CommonMark: any ASCII punctuation may be),
// so the text can start no block (heading, list, quote, table, fence,
// indented code), open no inline (emphasis, link, image, HTML, entity,
// code span, autolink) and name no one. It reads as s does.
func mdText(s string) string {
	s = strings.Trim(screentext.Sentence(s), " ")
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(sigils, c) >= 0:
			j := i
			for j < len(s) && strings.IndexByte(sigils, s[j]) >= 0 {
				j++
			}
			if j == len(s) || s[j] == ' ' {
				b.WriteString(backslashed(s[i:j])) // nothing a forge reads starts with a sigil and a space
			} else {
				b.WriteString(codeSpan(s[i:j]))
			}
			i = j - 1
		case asciiPunct(c):
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// backslashed is s, ASCII punctuation only, with each character
// backslash-escaped.
func backslashed(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte('\\')
		b.WriteByte(s[i])
	}
	return b.String()
}

// asciiPunct reports whether c is one of CommonMark's ASCII punctuation
// characters, each of which a backslash escapes.
func asciiPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}

// mdFence is content (already escaped lines, each ended by "\n") as one
// fenced code block with the info string "text": its fence is a run of
// backticks one longer than the longest in content (three at least), so
// no line of content can close it, and a tilde never can (a block closes
// only on its own fence character). A blank line follows it.
func mdFence(content string) string {
	fence := fenceFor(content)
	return fence + "text\n" + content + fence + "\n\n"
}

// fenceFor is the backtick fence for content: three, or one more than the
// longest run of backticks in it.
func fenceFor(content string) string {
	return strings.Repeat("`", max(3, longestRun(content, '`')+1))
}

// fenceCost is the bytes mdFence adds around content whose fence is n
// backticks long.
func fenceCost(n int) int { return 2*n + len("text\n") + len("\n\n") }

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			run = 0
			continue
		}
		run++
		best = max(best, run)
	}
	return best
}

// ellipsis marks a value or a line cut to fit.
const ellipsis = "…"

// cutEscaped is esc(raw) and false when that is at most room bytes;
// otherwise the escape of the longest prefix of raw, ended on a rune
// boundary, that leaves space for "…" within room bytes, and true (the caller
// writes the "…"). The cut is made in raw, before the escaping, so it
// never falls inside a UTF-8 sequence or an escape. esc is a screentext
// function (Field, Sentence, Text): the escape of a prefix never depends
// on what follows it but for Field's doubling of a last backslash, which
// only lengthens it. room is at least len("…").
func cutEscaped(raw string, room int, esc func(string) string) (string, bool) {
	if s := esc(raw); len(s) <= room {
		return s, false
	}
	var ends []int // rune boundaries, in order
	for i := 0; i < len(raw); {
		_, n := utf8.DecodeRuneInString(raw[i:])
		ends = append(ends, i)
		i += n
	}
	lo, hi := 0, len(ends)-1 // ends[0] is the empty prefix; find the last that fits
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(esc(raw[:ends[mid]]))+len(ellipsis) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return esc(raw[:ends[lo]]), true
}
