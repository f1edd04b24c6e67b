package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
)

// styles are the session's lipgloss styles. With noColor every style is
// colourless (bold and reverse stay: they are not colour), and every mark the
// console shows is text as well, so nothing depends on colour.
type styles struct {
	noColor  bool
	title    lipgloss.Style
	header   lipgloss.Style
	selected lipgloss.Style
	waiting  lipgloss.Style
	danger   lipgloss.Style
	destroy  lipgloss.Style
	faint    lipgloss.Style
	err      lipgloss.Style
	ok       lipgloss.Style
	label    lipgloss.Style
	box      lipgloss.Style
}

func newStyles(noColor bool) styles {
	p := lipgloss.NewStyle()
	s := styles{
		noColor:  noColor,
		title:    p.Bold(true),
		header:   p.Bold(true).Underline(true),
		selected: p.Reverse(true),
		waiting:  p.Bold(true),
		danger:   p.Bold(true),
		destroy:  p.Bold(true).Padding(0, 1).Border(lipgloss.ThickBorder()),
		faint:    p,
		err:      p.Bold(true),
		ok:       p.Bold(true),
		label:    p.Bold(true),
		box:      p.Border(lipgloss.NormalBorder()).Padding(0, 1),
	}
	if noColor {
		return s
	}
	s.title = s.title.Foreground(lipgloss.Color("12"))
	s.waiting = s.waiting.Foreground(lipgloss.Color("11"))
	s.danger = s.danger.Foreground(lipgloss.Color("9"))
	s.destroy = s.destroy.Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1")).
		BorderForeground(lipgloss.Color("9"))
	s.faint = s.faint.Foreground(lipgloss.Color("8"))
	s.err = s.err.Foreground(lipgloss.Color("9"))
	s.ok = s.ok.Foreground(lipgloss.Color("10"))
	s.box = s.box.BorderForeground(lipgloss.Color("11"))
	return s
}

// sanitizer turns untrusted bytes (a run log, plan text) into text that is
// safe to draw: escape sequences (CSI, OSC, others) and control characters
// are dropped, tabs become four spaces, a lone carriage return is dropped and
// invalid UTF-8 becomes U+FFFD. It keeps state across writes, so a rune or an
// escape sequence split between two log chunks is handled as one.
type sanitizer struct {
	state   int // sanText, sanEsc, sanCSI, sanString, sanStrEsc
	pending []byte
}

// Sanitizer states.
const (
	sanText   = iota // text
	sanEsc           // after ESC
	sanCSI           // in a CSI sequence
	sanString        // in an OSC, DCS, APC, PM or SOS string
	sanStrEsc        // ESC inside such a string
)

// write returns the safe text of p, holding back an incomplete rune at its
// end until the next write.
func (z *sanitizer) write(p []byte) string {
	data := p
	if len(z.pending) > 0 {
		data = append(z.pending, p...)
	}
	z.pending = nil
	var b strings.Builder
	b.Grow(len(data))
	for len(data) > 0 {
		if z.state == sanText {
			// A run of printable ASCII and newlines, the bulk of a log,
			// passes as is.
			if i := plainPrefix(data); i > 0 {
				b.Write(data[:i])
				data = data[i:]
				continue
			}
		}
		if !utf8.FullRune(data) {
			z.pending = append([]byte(nil), data...)
			break
		}
		r, n := utf8.DecodeRune(data)
		data = data[n:]
		if z.state == sanText {
			z.text(&b, r)
		} else {
			z.escape(r)
		}
	}
	return b.String()
}

// plainPrefix is the length of data's leading run of printable ASCII and
// newlines.
func plainPrefix(data []byte) int {
	i := 0
	for i < len(data) && (data[i] == '\n' || (data[i] >= 0x20 && data[i] < 0x7f)) {
		i++
	}
	return i
}

// escape consumes r inside an escape sequence: nothing of it is shown.
func (z *sanitizer) escape(r rune) {
	switch z.state {
	case sanEsc:
		switch r {
		case '[':
			z.state = sanCSI
		case ']', 'P', '_', '^', 'X':
			z.state = sanString
		default:
			z.state = sanText
		}
	case sanCSI:
		if r >= 0x40 && r <= 0x7e {
			z.state = sanText
		}
	case sanString:
		switch r {
		case 0x07:
			z.state = sanText
		case 0x1b:
			z.state = sanStrEsc
		}
	case sanStrEsc:
		z.state = sanText
		if r != '\\' {
			z.state = sanString
		}
	}
}

// text writes r as text: an ESC starts a sequence, a tab is four spaces,
// other control characters are dropped.
func (z *sanitizer) text(b *strings.Builder, r rune) {
	switch {
	case r == 0x1b:
		z.state = sanEsc
	case r == '\n':
		b.WriteByte('\n')
	case r == '\t':
		b.WriteString("    ")
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		// control character: dropped
	default:
		b.WriteRune(r)
	}
}

// clean sanitizes one complete string from the Backend.
func clean(s string) string {
	var z sanitizer
	return z.write([]byte(s)) + z.write(nil)
}

// cleanLine is clean with newlines folded to spaces, for one-line fields.
func cleanLine(s string) string {
	return strings.ReplaceAll(clean(s), "\n", " ")
}

// trunc cuts plain text to at most w cells, marking a cut with "…".
func trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		rw := lipgloss.Width(string(r))
		if used+rw > w-1 {
			break
		}
		b.WriteRune(r)
		used += rw
	}
	b.WriteString("…")
	return b.String()
}

// pad cuts or pads plain text to exactly w cells.
func pad(s string, w int) string {
	s = trunc(s, w)
	if n := w - lipgloss.Width(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// age renders a duration the way run lists do: 45s, 12m, 3h, 5d.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}

// requester is the requester column text, marking agents in words.
func requester(name string, agent bool) string {
	name = cleanLine(name)
	if agent {
		return name + " [agent]"
	}
	return name
}
