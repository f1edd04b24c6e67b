package forge

import (
	"fmt"
	"strings"
)

// The tests read the comment back the way CommonMark reads the few things
// it uses (fenced blocks, ATX headings, list items, code spans, backslash
// escapes), to check what a forge would make of it.

// mdLine is one line of markdown as read outside fenced blocks.
type mdLine struct {
	kind string // "heading", "item", "blank", "text", "fence" (opening), "code" (a line inside a fence), "end" (closing)
	// active is the plain text a forge interprets (outside code spans,
	// not backslash-escaped); shown is the text as rendered (active,
	// escaped characters and code span contents, in order).
	active, shown string
	spans         []string // code span contents
}

// readMarkdown reads s line by line. It returns an error for what the
// comment must never hold: an unclosed fence or code span, an indented
// code block, a fence opened with an info string holding a backtick.
func readMarkdown(s string) ([]mdLine, error) {
	var out []mdLine
	fence := ""
	for n, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if fence != "" {
			if t := strings.TrimLeft(l, " "); len(l)-len(t) <= 3 && strings.HasPrefix(t, fence) && strings.Trim(t, string(fence[0])+" ") == "" {
				fence = ""
				out = append(out, mdLine{kind: "end"})
				continue
			}
			out = append(out, mdLine{kind: "code", shown: l})
			continue
		}
		if f := openingFence(l); f != "" {
			if f[0] == '`' && strings.Contains(strings.TrimLeft(l, " ")[len(f):], "`") {
				return nil, fmt.Errorf("line %d: a backtick fence whose info string holds a backtick: %q", n+1, l)
			}
			fence = f
			out = append(out, mdLine{kind: "fence"})
			continue
		}
		if strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t") {
			return nil, fmt.Errorf("line %d is an indented code block: %q", n+1, l)
		}
		line, err := readInline(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		out = append(out, line)
	}
	if fence != "" {
		return nil, fmt.Errorf("a fence %q is never closed", fence)
	}
	return out, nil
}

// openingFence is the fence l opens (three or more backticks or tildes
// after at most three spaces), "" when l opens none.
func openingFence(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 || t == "" || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// readInline reads one line outside fences: its kind, its code spans,
// what stays active and what is shown.
func readInline(l string) (mdLine, error) {
	line := mdLine{kind: lineKind(l)}
	var active, shown strings.Builder
	for i := 0; i < len(l); {
		c := l[i]
		switch {
		case c == '\\' && i+1 < len(l) && asciiPunct(l[i+1]):
			shown.WriteByte(l[i+1])
			i += 2
		case c == '`':
			n := run(l[i:], '`')
			end := closingRun(l[i+n:], n)
			if end < 0 {
				return line, fmt.Errorf("a code span opened at byte %d is never closed: %q", i, l)
			}
			content := l[i+n : i+n+end]
			if len(content) >= 2 && content[0] == ' ' && content[len(content)-1] == ' ' && strings.Trim(content, " ") != "" {
				content = content[1 : len(content)-1]
			}
			line.spans = append(line.spans, content)
			shown.WriteString(content)
			i += n + end + n
		default:
			active.WriteByte(c)
			shown.WriteByte(c)
			i++
		}
	}
	line.active, line.shown = active.String(), shown.String()
	return line, nil
}

// lineKind is "blank", "heading" (an ATX heading), "item" (a bullet list
// item) or "text".
func lineKind(l string) string {
	t := strings.TrimLeft(l, " ")
	switch {
	case t == "":
		return "blank"
	case strings.HasPrefix(t, "#"):
		if h := strings.TrimLeft(t, "#"); len(t)-len(h) <= 6 && (h == "" || h[0] == ' ') {
			return "heading"
		}
	case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "):
		return "item"
	}
	return "text"
}

// run is the length of the run of c that s starts with.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingRun is where in s the next run of exactly n backticks starts, -1
// when there is none.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s[i:], '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// skeleton is the comment's structure: the kind of each line, a block of
// fenced lines as one "code".
func skeleton(lines []mdLine) string {
	var b strings.Builder
	last := ""
	for _, l := range lines {
		if l.kind == "code" && last == "code" {
			continue
		}
		b.WriteString(l.kind)
		b.WriteByte(' ')
		last = l.kind
	}
	return b.String()
}

// active is every line's active text, the marker's line left out.
func activeText(lines []mdLine) string {
	var b strings.Builder
	for _, l := range lines {
		if l.active == CommentMarker {
			continue
		}
		b.WriteString(l.active)
		b.WriteByte('\n')
	}
	return b.String()
}
