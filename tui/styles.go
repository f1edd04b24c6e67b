package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/switchtender/switchtender/planview"
	"github.com/switchtender/switchtender/screentext"
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
	// roles styles the change view's lines by planview.Role.
	roles map[planview.Role]lipgloss.Style
}

// role is the style of a change view line of role r (plain when none).
func (s styles) role(r planview.Role) lipgloss.Style { return s.roles[r] }

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
	s.roles = roleStyles(noColor)
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

// roleStyles styles the change view: headings and what destroys or leaves
// state in bold; with colour, what goes red, what comes green, what
// changes yellow, what leaves state magenta, notes faint. The words say
// the same without colour.
func roleStyles(noColor bool) map[planview.Role]lipgloss.Style {
	p := lipgloss.NewStyle()
	out := map[planview.Role]lipgloss.Style{
		planview.RoleHeading: p.Bold(true),
		planview.RoleDestroy: p.Bold(true),
		planview.RoleLeave:   p.Bold(true),
		planview.RoleWarning: p.Bold(true),
	}
	if noColor {
		return out
	}
	colour := func(r planview.Role, c string) { out[r] = out[r].Foreground(lipgloss.Color(c)) }
	colour(planview.RoleDestroy, "9")
	colour(planview.RoleLeave, "13")
	colour(planview.RoleWarning, "9")
	colour(planview.RoleRemoved, "9")
	colour(planview.RoleAdded, "10")
	colour(planview.RoleChanged, "11")
	colour(planview.RoleForgotten, "13")
	colour(planview.RoleSensitive, "14")
	colour(planview.RoleNote, "8")
	colour(planview.RoleHidden, "8")
	return out
}

// sanitizer turns untrusted bytes (a run log, plan text) into text that is
// safe to draw, as screentext.Text does, rune by rune: a control character,
// an escape sequence's ESC, a bidirectional control or an invisible
// character is shown as a visible escape (\x1b], \u{202e}), never dropped,
// so no string a configuration opens can swallow the text after it; tabs
// become four spaces. It holds back a rune split between two log chunks
// until the next one completes it.
type sanitizer struct {
	st screentext.Stream
}

// write returns the safe text of p, holding back an incomplete rune at its
// end until the next write.
func (z *sanitizer) write(p []byte) string {
	return expandTabs(z.st.Write(p))
}

// expandTabs turns each tab into four spaces.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	return strings.ReplaceAll(s, "\t", "    ")
}

// clean sanitizes one complete text of many lines from the Backend (plan
// text, a message box) as sanitizer does.
func clean(s string) string {
	return expandTabs(screentext.Text(s))
}

// cleanLine is one value from outside the server (a name, an address, a
// key, an answer, a branch) escaped as one unit (screentext.Field): a
// newline, a tab or a control character in it shows as its escape.
func cleanLine(s string) string {
	return screentext.Field(s)
}

// cleanSentence is one line the server composed (a run's message, a rule's
// reason), whose outside values the server escaped already: hidden
// characters and newlines are escaped, backslashes left as they are
// (screentext.Sentence).
func cleanSentence(s string) string {
	return screentext.Sentence(s)
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

// requester is the requester column text of r, marking agents and forge
// accounts in words.
func requester(r RunSummary) string {
	name := cleanLine(r.Requester)
	switch {
	case r.Agent:
		return name + " [agent]"
	case r.Forge:
		return name + " [forge]"
	}
	return name
}
