package tui

import (
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// textLines is text split into lines, each measured once: what the log
// and proposal panes draw from. A pane soft-wraps a line by its kept width
// and cuts out only the rows on screen, so neither a draw nor a scroll
// reads the text again.
type textLines struct {
	lines  []string
	widths []int // widths[i] is the cell width of lines[i]
	// marks holds, for each line longer than longLine bytes, grapheme
	// boundaries every markEvery bytes, so a row deep inside a line of
	// megabytes is cut from the nearest mark rather than from its start.
	marks map[int][]cutMark
}

// cutMark is a grapheme boundary inside a long line: its byte offset and
// the cells of the text before it.
type cutMark struct{ b, c int }

const (
	longLine  = 4096 // a line longer than this gets cut marks
	markEvery = 1024 // bytes between two cut marks
)

// measureLines measures lines (cleaned text or styled header lines).
func measureLines(lines []string) textLines {
	t := textLines{lines: lines, widths: make([]int, len(lines))}
	for i := range lines {
		t.measure(i)
	}
	return t
}

// measure sets the width (and, for a long line, the cut marks) of line i.
// A long line is measured on from its last mark, so a line that grows at
// its end (a log line arriving in pieces) costs its new text only.
func (t *textLines) measure(i int) {
	l := t.lines[i]
	if len(l) <= longLine {
		t.widths[i] = cellWidth(l)
		return
	}
	if t.marks == nil {
		t.marks = map[int][]cutMark{}
	}
	ms := t.marks[i]
	var from cutMark
	if len(ms) > 0 {
		from = ms[len(ms)-1]
	}
	w, more := measureFrom(l, from)
	t.marks[i] = append(ms, more...)
	t.widths[i] = w
}

// measureFrom walks the cleaned line s from the grapheme boundary m to its
// end, cluster by cluster as ansi.StringWidth counts them, and returns s's
// width and a mark every markEvery bytes after m.
func measureFrom(s string, m cutMark) (int, []cutMark) {
	var marks []cutMark
	b, c, next := m.b, m.c, m.b+markEvery
	for b < len(s) {
		if b >= next {
			marks = append(marks, cutMark{b, c})
			next = b + markEvery
		}
		if s[b] >= 0x20 && s[b] < 0x7f && (b+1 == len(s) || s[b+1] < 0x80) {
			b, c = b+1, c+1 // printable ASCII before ASCII: a cluster of one cell
			continue
		}
		cl, w := ansi.FirstGraphemeCluster(s[b:], ansi.GraphemeWidth)
		b, c = b+max(1, len(cl)), c+w
	}
	return c, marks
}

// cut is the cells [left, right) of line i, as ansi.Cut cuts them; a long
// line is cut between the marks around the range, so the cost is the
// row's, not the line's.
func (t *textLines) cut(i, left, right int) string {
	l, ms := t.lines[i], t.marks[i]
	if len(ms) == 0 {
		return ansi.Cut(l, left, right)
	}
	// From the last mark before left to the first mark past right: the
	// clusters the cut keeps, and whole clusters on either side.
	var lo cutMark
	if k := sort.Search(len(ms), func(k int) bool { return ms[k].c >= left }) - 1; k >= 0 {
		lo = ms[k]
	}
	hi := len(l)
	if k := sort.Search(len(ms), func(k int) bool { return ms[k].c > right }); k < len(ms) {
		hi = ms[k].b
	}
	return ansi.Cut(l[lo.b:hi], left-lo.c, right-lo.c)
}

// cleanTextLine is the one place a line of tofu's plan text is made safe to
// draw, line by line, so an escape sequence never reaches past its line.
func cleanTextLine(line string) string { return clean(line) }

// planLines keeps one plan text cleaned and measured line by line: a
// refresh with the same text, an age tick or a key press reuses it, and
// only a new text is cleaned and measured again.
type planLines struct {
	raw    string
	text   textLines
	builds int // how many texts it cleaned and measured (tests count the work)
}

// of returns raw's lines, cleaned with cleanTextLine and measured, without
// the empty lines at its end.
func (p *planLines) of(raw string) textLines {
	if raw == p.raw && (raw == "" || p.text.lines != nil) {
		return p.text
	}
	lines := strings.Split(raw, "\n")
	for i, l := range lines {
		lines[i] = cleanTextLine(l)
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	p.raw, p.text = raw, measureLines(lines)
	p.builds++
	return p.text
}

// cellWidth is the cells s takes on screen; printable ASCII without escape
// sequences is one cell a byte.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == 0x1b {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
