package planview

import (
	"fmt"
	"strings"

	"github.com/switchtender/switchtender/screentext"
)

// Text is the whole view of cs as plain text: every item of [NewView]
// whole, each line wrapped to at most width cells ([Wrap]; 0: no limit)
// and ended by a newline, every value escaped with screentext.Field. It
// is what `show RUN --changes` prints; the console draws the same lines.
func Text(cs *ChangeSet, width int) string {
	v := NewView(cs)
	var b strings.Builder
	for i := range v.Len() {
		WriteLines(&b, v.Lines(i, true), width)
	}
	return b.String()
}

// WriteLines writes lines wrapped to width (0: no limit), each as plain
// text ended by a newline.
func WriteLines(b *strings.Builder, lines []Line, width int) {
	for _, l := range lines {
		for _, w := range Wrap(l, width) {
			b.WriteString(w.String())
			b.WriteByte('\n')
		}
	}
}

// summaryPerSection is how many changes of each risk section a summary
// names.
const summaryPerSection = 3

// Summary is the short form of cs for a notification: the counts, then
// each risk section (replaced, deleted, forgotten, forgotten then
// created) with its heading and the head lines of its first changes, then
// a last line saying how many changes it does not name and showCmd (the
// command that shows the rest, e.g. "ssh switchtender show r-7
// --changes"). Lines are not wrapped and end with a newline, but the
// last. It is at most maxBytes bytes: it drops whole lines from its end
// to fit, never part of a line or of a UTF-8 sequence, and shortens the
// last line to showCmd alone, or to nothing, when even that does not fit.
func Summary(cs *ChangeSet, maxBytes int, showCmd string) string {
	v := NewView(cs)
	lines, names := summaryLines(v)
	total := v.Matches(v.Filter(""))
	cmd := screentext.Sentence(showCmd)
	var b strings.Builder
	named := 0
	for k, l := range lines {
		s := l.String() + "\n"
		if b.Len()+len(s)+len(trailer(total-named-names[k], cmd)) > maxBytes {
			break
		}
		b.WriteString(s)
		named += names[k]
	}
	for _, t := range []string{trailer(total-named, cmd), cmd} {
		if t != "" && b.Len()+len(t) <= maxBytes {
			return b.String() + t
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// trailer is a summary's last line: how many changes it leaves unnamed,
// and the command for the whole view.
func trailer(more int, cmd string) string {
	var s string
	switch {
	case more > 0 && cmd != "":
		s = fmt.Sprintf("… and %d more change%s: %s", more, plural(more), cmd)
	case more > 0:
		s = fmt.Sprintf("… and %d more change%s", more, plural(more))
	case cmd != "":
		s = "the whole view: " + cmd
	}
	return s
}

// summaryLines are a summary's lines before its last, and for each how
// many changes it names.
func summaryLines(v *View) ([]Line, []int) {
	var lines []Line
	var names []int
	add := func(ls []Line, n int) {
		for k, l := range ls {
			lines = append(lines, l)
			if k > 0 {
				n = 0 // a change counts once, at its first line
			}
			names = append(names, n)
		}
	}
	add(v.Lines(0, false), 0)
	perSection := 0
	for i := 1; i < v.Len(); i++ {
		if !risky(v.Section(i)) {
			continue
		}
		switch v.Kind(i) {
		case KindSection:
			add(v.Lines(i, false)[1:], 0)
			perSection = 0
		case KindResource:
			if perSection < summaryPerSection {
				add(v.Lines(i, false), 1)
			}
			perSection++
		}
	}
	return lines, names
}

// risky reports whether a section's changes destroy or leave state.
func risky(section string) bool {
	switch section {
	case SectionReplace, SectionDelete, SectionForget, SectionForgetThenCreate, sectionOther:
		return true
	}
	return false
}
