package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// What the console does beside its screens: ages that tick, the full help
// (?), an overlay that shows a long text whole (m), and the jump to the
// next run waiting for you (w).

// ageTickEvery is how often the screen is drawn again so ages move on
// while nothing else happens.
var ageTickEvery = time.Second

// Messages the root handles for every screen.
type (
	// ageTickMsg redraws the screen: ages are computed when drawn.
	ageTickMsg struct{}
	// overlayMsg shows a text whole over the current screen until a key.
	overlayMsg struct{ title, body string }
	// nextWaitingMsg asks to open the next run waiting for the viewer:
	// from the run after `after` in the list's order (from the list's
	// cursor itself when fromCursor), wrapping around.
	nextWaitingMsg struct {
		after      string
		fromCursor bool
	}
)

var (
	keyHelpAll = key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help"))
	keyWaiting = key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "next waiting"))
	keyMessage = key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "read the message whole"))
)

// ageTick schedules the next redraw.
func ageTick() tea.Cmd {
	return tea.Tick(ageTickEvery, func(time.Time) tea.Msg { return ageTickMsg{} })
}

// showText returns a command that shows body whole in the overlay.
func showText(title, body string) tea.Cmd {
	return func() tea.Msg { return overlayMsg{title: title, body: body} }
}

// overlayKey handles a key while the overlay is up: q and ctrl+c quit,
// any other key closes it.
func (m *model) overlayKey(k string) (tea.Model, tea.Cmd) {
	if k == "ctrl+c" || k == "q" {
		return m.quit()
	}
	m.overlay = nil
	return m, nil
}

// fullHelp is the overlay listing every key of the current screen.
func (m *model) fullHelp() *overlayMsg {
	var b strings.Builder
	for _, k := range m.current().allKeys() {
		h := k.Help()
		b.WriteString("  " + pad(h.Key, 12) + " " + h.Desc + "\n")
	}
	b.WriteString("\nA key that cannot act now says why on the line above the keys.")
	return &overlayMsg{title: "Keys on this screen", body: b.String()}
}

// overlayView draws the overlay: its title, the text wrapped to the width,
// and how to close it.
func (m *model) overlayView() string {
	o := m.overlay
	body := lipgloss.NewStyle().Width(max(10, m.w)).Render(clean(o.body))
	lines := strings.Split(body, "\n")
	room := max(1, m.h-4)
	if len(lines) > room {
		lines = append(lines[:room-1], "… (longer than the screen: make the terminal taller)")
	}
	return m.st.title.Render(trunc(o.title, m.w)) + "\n\n" + strings.Join(lines, "\n") +
		strings.Repeat("\n", max(1, room-len(lines)+1)) + m.st.faint.Render("any key closes · q quits")
}

// jumpToWaiting opens the next run waiting for the viewer, as the list
// knows it, or says there is none on the current screen.
func (m *model) jumpToWaiting(msg nextWaitingMsg) tea.Cmd {
	id := m.list.nextWaiting(msg.after, msg.fromCursor)
	if id == "" || (id == msg.after && !msg.fromCursor) {
		note := "nothing is waiting for you: no held run names you (or its rules name nobody and you may approve)"
		if msg.after != "" && !msg.fromCursor {
			note = "no other run is waiting for you"
		}
		if m.active == screenDetail && m.detail != nil {
			m.detail.setNotice(note, true)
		} else {
			m.list.notice = note
		}
		return nil
	}
	return m.navigate(openRunMsg{id: id})
}

// nextWaiting returns the ID of the first run waiting for the viewer after
// run after (or from the cursor, inclusive, when fromCursor), wrapping
// around the list, and puts the cursor on it; "" when none waits.
func (l *runList) nextWaiting(after string, fromCursor bool) string {
	n := len(l.runs)
	start := l.cursor
	if !fromCursor {
		start = 0
		for i, r := range l.runs {
			if r.ID == after {
				start = i + 1
			}
		}
	}
	for i := range n {
		j := (start + i) % n
		if l.runs[j].WaitingForMe {
			l.cursor = j
			l.clamp()
			return l.runs[j].ID
		}
	}
	return ""
}

// unboundNote is what a printable key that does nothing on a screen says.
func unboundNote(k string) string {
	return k + " does nothing here; ? lists the keys"
}

// isPrintable reports whether a key is one character a user types.
func isPrintable(k string) bool {
	return len([]rune(k)) == 1 && k != " "
}
