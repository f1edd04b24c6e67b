package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

type screenID int

const (
	screenList screenID = iota
	screenDetail
	screenLauncher
)

// screen is one page of the console. Screens mutate themselves in Update and
// return the commands they need.
type screen interface {
	Init() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	// Typing reports whether a text input has the focus (q types a "q" then).
	Typing() bool
	// allKeys is every key of the screen, for the full help (?).
	allKeys() bindings
}

// routed is implemented by screen-owned messages that arrive asynchronously;
// the root delivers them to their owner even when another screen is active.
type routed interface{ target() screenID }

// Navigation messages, handled by the root.
type (
	openRunMsg      struct{ id string }
	openLauncherMsg struct{}
	backMsg         struct{}
)

// env is what every screen shares.
type env struct {
	b     Backend
	id    Identity
	st    styles
	now   func() time.Time
	ctx   context.Context
	width int
}

type model struct {
	b      Backend
	id     Identity
	opts   Options
	st     styles
	ctx    context.Context
	cancel context.CancelFunc
	w, h   int
	gen    int

	active   screenID
	overlay  *overlayMsg // a text shown whole over the screen, or nil
	list     *runList
	detail   *runDetail
	launcher *launcher
}

func (m *model) env() env {
	return env{b: m.b, id: m.id, st: m.st, now: m.opts.Now, ctx: m.ctx, width: m.w}
}

func (m *model) nextGen() int { m.gen++; return m.gen }

func (m *model) current() screen {
	switch m.active {
	case screenDetail:
		if m.detail != nil {
			return m.detail
		}
	case screenLauncher:
		if m.launcher != nil {
			return m.launcher
		}
	}
	return m.list
}

func (m *model) screenFor(id screenID) screen {
	switch id {
	case screenDetail:
		if m.detail != nil {
			return m.detail
		}
	case screenLauncher:
		if m.launcher != nil {
			return m.launcher
		}
	case screenList:
		return m.list
	}
	return nil
}

func (m *model) Init() tea.Cmd { return tea.Batch(m.list.Init(), ageTick()) }

func (m *model) quit() (tea.Model, tea.Cmd) {
	m.closeDetail()
	m.cancel()
	return m, tea.Quit
}

func (m *model) closeDetail() {
	if m.detail != nil {
		m.detail.Close()
		m.detail = nil
	}
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case ageTickMsg:
		return m, ageTick()
	case overlayMsg:
		m.overlay = &msg
		return m, nil
	case nextWaitingMsg:
		return m, m.jumpToWaiting(msg)
	case tea.KeyPressMsg:
		if mm, cmd, ok := m.globalKey(msg.String()); ok {
			return mm, cmd
		}
	case openRunMsg, openLauncherMsg, backMsg:
		return m, m.navigate(msg)
	case routed:
		return m, m.deliver(msg)
	}
	return m, m.current().Update(msg)
}

// globalKey handles key k where every screen does: an open overlay takes
// it, ctrl+c (and q when not typing) quits, ? shows the full help. ok is
// false for a key the current screen handles.
func (m *model) globalKey(k string) (mm tea.Model, cmd tea.Cmd, ok bool) {
	if m.overlay != nil {
		mm, cmd = m.overlayKey(k)
		return mm, cmd, true
	}
	if k == "ctrl+c" || (k == "q" && !m.current().Typing()) {
		mm, cmd = m.quit()
		return mm, cmd, true
	}
	if k == "?" && !m.current().Typing() {
		m.overlay = m.fullHelp()
		return m, nil, true
	}
	return nil, nil, false
}

// deliver hands msg to the screen it is for, unless that screen was closed.
func (m *model) deliver(msg routed) tea.Cmd {
	s := m.screenFor(msg.target())
	if s == nil || isNilScreen(s) {
		return nil // its screen was closed: a late message
	}
	return s.Update(msg)
}

// resize gives every screen the terminal's new size.
func (m *model) resize(w, h int) {
	m.w, m.h = w, h
	for _, s := range []screen{m.list, m.detail, m.launcher} {
		if s != nil && !isNilScreen(s) {
			s.SetSize(m.w, m.h)
		}
	}
}

// navigate opens the screen a navigation message asks for.
func (m *model) navigate(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openRunMsg:
		m.overlay = nil
		m.closeDetail()
		m.launcher = nil
		m.detail = newRunDetail(m.env(), msg.id, m.nextGen())
		m.detail.SetSize(m.w, m.h)
		m.active = screenDetail
		return m.detail.Init()
	case openLauncherMsg:
		if !m.id.CanLaunch {
			return nil
		}
		m.launcher = newLauncher(m.env(), m.nextGen())
		m.launcher.SetSize(m.w, m.h)
		m.active = screenLauncher
		return m.launcher.Init()
	}
	m.closeDetail()
	m.launcher = nil
	m.active = screenList
	return nil
}

func isNilScreen(s screen) bool {
	switch v := s.(type) {
	case *runDetail:
		return v == nil
	case *launcher:
		return v == nil
	case *runList:
		return v == nil
	}
	return false
}

func (m *model) View() tea.View {
	content := m.current().View()
	if m.overlay != nil {
		content = m.overlayView()
	}
	v := tea.NewView(fit(content, m.w, m.h))
	v.AltScreen = true
	v.WindowTitle = "switchtender"
	return v
}

// fit cuts s to at most w columns and exactly h lines.
func fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	st := lipgloss.NewStyle().MaxWidth(w)
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			lines[i] = st.Render(l)
		}
	}
	return strings.Join(lines, "\n")
}

// newHelp is a bubbles help model styled for the session.
func newHelp(st styles) help.Model {
	h := help.New()
	if st.noColor {
		h.Styles = help.Styles{
			Ellipsis:       lipgloss.NewStyle(),
			ShortKey:       lipgloss.NewStyle().Bold(true),
			ShortDesc:      lipgloss.NewStyle(),
			ShortSeparator: lipgloss.NewStyle(),
			FullKey:        lipgloss.NewStyle().Bold(true),
			FullDesc:       lipgloss.NewStyle(),
			FullSeparator:  lipgloss.NewStyle(),
		}
	}
	return h
}

// bindings is a flat key.Binding list that satisfies help.KeyMap.
type bindings []key.Binding

func (b bindings) ShortHelp() []key.Binding  { return b }
func (b bindings) FullHelp() [][]key.Binding { return [][]key.Binding{b} }

var (
	keyUp           = key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up"))
	keyDown         = key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down"))
	keyOpen         = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open"))
	keyNew          = key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new run"))
	keyQuit         = key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit"))
	keyBack         = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))
	keyFollow       = key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "follow log"))
	keyTop          = key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top"))
	keyScroll       = key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓/pgup", "scroll"))
	keyPane         = key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "pane"))
	keyApprove      = key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve"))
	keyReject       = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reject"))
	keyYes          = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "release this digest"))
	keyNo           = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "cancel"))
	keyCancelRun    = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel run"))
	keyCancelYes    = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "cancel the run"))
	keyCancelNo     = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "keep it"))
	keySubmit       = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "submit"))
	keyCancel       = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	keyNext         = key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next"))
	keyPrev         = key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab/↑", "prev"))
	keyCycle        = key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "choose"))
	keyRerun        = key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "rerun"))
	keyRerunYes     = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "rerun"))
	keyRerunNo      = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "keep")) // same keys as keyCancelNo
	keyReconcile    = key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "propose reconcile"))
	keyReconcileYes = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "propose it"))
	keyReconcileNo  = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "keep"))
	keyCtrlC        = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	keySelect       = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "select"))
	keyTofuText     = key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tofu's text / the view"))
	keyUnfold       = key.NewBinding(key.WithKeys("enter", "space"), key.WithHelp("enter/space", "unfold"))
	keyUnfoldAll    = key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "unfold all"))
	keyFilter       = key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter by address"))
	keyFilterKeep   = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep the filter"))
	keyFilterClear  = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear it"))
)
