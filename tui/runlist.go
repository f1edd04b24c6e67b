package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/switchtender/switchtender/screentext"
)

// Run list messages.
type (
	listWatchMsg  struct{ ch <-chan struct{} }
	listTickMsg   struct{ ch <-chan struct{} }
	listClosedMsg struct{}
	listRunsMsg   struct {
		seq  int
		runs []RunSummary
		err  error
	}
)

func (listWatchMsg) target() screenID  { return screenList }
func (listTickMsg) target() screenID   { return screenList }
func (listClosedMsg) target() screenID { return screenList }
func (listRunsMsg) target() screenID   { return screenList }

// runList is the live list of runs.
type runList struct {
	env
	h        int
	runs     []RunSummary
	cursor   int
	offset   int
	seq      int // last fetch issued
	applied  int // last fetch applied
	loaded   bool
	err      error
	watching bool
	notice   string // why the last key could not act; cleared by the next key
	help     help.Model
}

func newRunList(e env) *runList {
	return &runList{env: e, help: newHelp(e.st)}
}

func (l *runList) SetSize(w, h int) {
	l.width, l.h = w, h
	l.help.SetWidth(w)
	l.clamp()
}

func (l *runList) Typing() bool { return false }

// Init subscribes to run changes first and lists runs after, so a change in
// between is not missed.
func (l *runList) Init() tea.Cmd {
	b, ctx := l.b, l.ctx
	return func() tea.Msg { return listWatchMsg{ch: b.WatchRuns(ctx)} }
}

func waitTick(ch <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return listClosedMsg{}
		}
		// Coalesce a burst of ticks into one fetch.
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					return listTickMsg{ch: nil}
				}
			default:
				return listTickMsg{ch: ch}
			}
		}
	}
}

func (l *runList) fetch() tea.Cmd {
	l.seq++
	seq, b, ctx := l.seq, l.b, l.ctx
	return func() tea.Msg {
		runs, err := b.Runs(ctx)
		return listRunsMsg{seq: seq, runs: runs, err: err}
	}
}

func (l *runList) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listWatchMsg:
		l.watching = msg.ch != nil
		if msg.ch == nil {
			return l.fetch()
		}
		return tea.Batch(l.fetch(), waitTick(msg.ch))
	case listTickMsg:
		if msg.ch == nil {
			l.watching = false
			return l.fetch()
		}
		return tea.Batch(l.fetch(), waitTick(msg.ch))
	case listClosedMsg:
		l.watching = false
		return nil
	case listRunsMsg:
		l.onRuns(msg)
		return nil
	case tea.KeyPressMsg:
		return l.key(msg)
	}
	return nil
}

// onRuns takes a fresh list, keeping the cursor on the run it was on.
func (l *runList) onRuns(msg listRunsMsg) {
	if msg.seq < l.applied {
		return // an older answer arriving late
	}
	l.applied = msg.seq
	l.err = msg.err
	if msg.err == nil {
		sel := ""
		if l.cursor < len(l.runs) {
			sel = l.runs[l.cursor].ID
		}
		l.runs = msg.runs
		l.loaded = true
		if i := slices.IndexFunc(l.runs, func(r RunSummary) bool { return r.ID == sel }); i >= 0 {
			l.cursor = i
		}
	}
	l.clamp()
}

func (l *runList) key(msg tea.KeyPressMsg) tea.Cmd {
	l.notice = ""
	switch {
	case key.Matches(msg, keyUp):
		l.cursor--
	case key.Matches(msg, keyDown):
		l.cursor++
	case key.Matches(msg, keyOpen):
		if l.cursor >= len(l.runs) {
			l.notice = "no run to open yet"
			return nil
		}
		id := l.runs[l.cursor].ID
		return func() tea.Msg { return openRunMsg{id: id} }
	case key.Matches(msg, keyNew):
		if !l.id.CanLaunch {
			l.notice = "you cannot launch: your identity has no launch role"
			return nil
		}
		return func() tea.Msg { return openLauncherMsg{} }
	case key.Matches(msg, keyWaiting):
		return func() tea.Msg { return nextWaitingMsg{fromCursor: true} }
	case key.Matches(msg, keyMessage):
		return l.showMessage()
	case isPrintable(msg.String()):
		l.notice = unboundNote(msg.String())
	}
	l.clamp()
	return nil
}

// showMessage shows the selected run's message whole, or says it has none.
func (l *runList) showMessage() tea.Cmd {
	if l.cursor >= len(l.runs) || l.runs[l.cursor].Message == "" {
		l.notice = "the selected run has no message"
		return nil
	}
	r := l.runs[l.cursor]
	return showText("Run "+cleanLine(r.ID)+": message", r.Message)
}

// allKeys is every key of the list, for the full help.
func (l *runList) allKeys() bindings {
	return bindings{keyUp, keyDown, keyOpen, keyNew, keyWaiting, keyMessage, keyHelpAll, keyQuit}
}

// rowsHeight is how many run rows fit: the screen minus title, banner,
// column header, message line, blank and help.
func (l *runList) rowsHeight() int { return max(1, l.h-6) }

func (l *runList) clamp() {
	if l.cursor >= len(l.runs) {
		l.cursor = len(l.runs) - 1
	}
	if l.cursor < 0 {
		l.cursor = 0
	}
	rh := l.rowsHeight()
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+rh {
		l.offset = l.cursor - rh + 1
	}
}

func (l *runList) keys() bindings {
	b := bindings{keyUp, keyDown, keyOpen}
	if l.id.CanLaunch {
		b = append(b, keyNew)
	}
	if l.waitingCount() > 0 {
		b = append(b, keyWaiting)
	}
	return append(b, keyHelpAll, keyQuit)
}

// columns returns the widths of ID, template, requester and pull request
// (0 when no listed run belongs to one) for the width; the other columns
// are fixed: mark 5, status 17, kind 9, age 4. The pull request column
// takes at most what its longest cell needs and 30% of the free width
// (12 cells at least), before the others share the rest.
func (l *runList) columns() (id, tmpl, req, pr int) {
	// "> " + mark(5) + " " + id + " " + status(17) + " " + tmpl + " " + kind(9) + " " + req + " " + age(4) [+ " " + pr]
	rest := l.width - (2 + 5 + 1 + 1 + 17 + 1 + 1 + 9 + 1 + 1 + 4)
	if want := l.prWidth(); want > 0 {
		rest--
		pr = min(want, max(12, rest*30/100))
		rest -= pr
	}
	id = max(6, rest/6)
	rest -= id
	tmpl = max(8, rest*45/100)
	req = max(8, rest-tmpl)
	return id, tmpl, req, pr
}

// prWidth is the width the longest pull request cell of the listed runs
// needs, at least the column's heading; 0 when no run belongs to one.
func (l *runList) prWidth() int {
	w := 0
	for _, r := range l.runs {
		if pr := r.PullRequest; pr != nil {
			w = max(w, len(prHeading), lipgloss.Width(prRef(pr)))
		}
	}
	return w
}

// prHeading heads the pull request column.
const prHeading = "PULL REQUEST"

// prRef is pr's cell text: "platform/infra#12 1a2b3c4d", escaped
// (screentext.PullRequestRef).
func prRef(pr *PullRequest) string {
	return screentext.PullRequestRef(pr.Repository, pr.Number, pr.HeadSHA)
}

// prCell is pr's cell in w cells: whole when it fits, else the
// repository's start cut away ("…infra#12 1a2b3c4d"), so the number and
// the head commit stay; without the repository when only they fit, and
// cut at the end only when even they do not.
func prCell(pr *PullRequest, w int) string {
	full := prRef(pr)
	if lipgloss.Width(full) <= w {
		return full
	}
	tail := strings.TrimPrefix(full, screentext.Field(pr.Repository))
	room := w - lipgloss.Width(tail) - 1
	if room < 1 {
		return trunc(tail, w)
	}
	return "…" + lastCells(screentext.Field(pr.Repository), room) + tail
}

// lastCells is the end of s that fits in w cells.
func lastCells(s string, w int) string {
	runes := []rune(s)
	used, i := 0, len(runes)
	for i > 0 {
		rw := lipgloss.Width(string(runes[i-1]))
		if used+rw > w {
			break
		}
		used += rw
		i--
	}
	return string(runes[i:])
}

func (l *runList) View() string {
	st := l.st
	var b strings.Builder
	b.WriteString(st.title.Render("Switchtender · runs") + "  " + st.faint.Render("signed in as "+l.who()) + "\n")
	b.WriteString(l.banner() + "\n")
	idw, tw, rw, pw := l.columns()
	hdr := "  " + pad("WAIT", 5) + " " + pad("ID", idw) + " " + pad("STATUS", 17) + " " + pad("TEMPLATE", tw) + " " +
		pad("KIND", 9) + " " + pad("REQUESTER", rw) + " " + pad("AGE", 4)
	if pw > 0 {
		hdr += " " + pad(prHeading, pw)
	}
	b.WriteString(st.header.Render(strings.TrimRight(hdr, " ")) + "\n")

	rh := l.rowsHeight()
	if note := l.emptyNote(); note != "" {
		b.WriteString(note + "\n")
		rh--
	}
	end := min(len(l.runs), l.offset+rh)
	for i := l.offset; i < end; i++ {
		b.WriteString(l.row(i) + "\n")
		rh--
	}
	b.WriteString(strings.Repeat("\n", max(0, rh)))
	b.WriteString(l.messageLine() + "\n\n")
	b.WriteString(fitHelp(l.help, l.keys(), l.width, keyUp, keyDown, keyWaiting))
	return b.String()
}

// messageLine is the line under the rows: why the last key could not act,
// or the selected run's message, cut to the width with a pointer to m when
// it does not fit.
func (l *runList) messageLine() string {
	if l.notice != "" {
		return l.st.err.Render(trunc("! "+l.notice, l.width))
	}
	if l.cursor >= len(l.runs) || l.runs[l.cursor].Message == "" {
		return ""
	}
	r := l.runs[l.cursor]
	line := cleanLine(r.ID) + ": " + cleanSentence(r.Message)
	if lipgloss.Width(line) <= l.width {
		return line
	}
	const more = " (m: whole)"
	return trunc(line, l.width-len(more)) + more
}

// waitingCount is how many listed runs wait for the viewer.
func (l *runList) waitingCount() int {
	n := 0
	for _, r := range l.runs {
		if r.WaitingForMe {
			n++
		}
	}
	return n
}

// who is the signed-in identity with its roles.
func (l *runList) who() string {
	who := cleanLine(l.id.Name)
	var roles []string
	if l.id.CanLaunch {
		roles = append(roles, "launch")
	}
	if l.id.CanApprove {
		roles = append(roles, "approve")
	}
	if len(roles) > 0 {
		who += " (" + strings.Join(roles, ", ") + ")"
	}
	return who
}

// banner is the line under the title: an error, how many runs wait for
// the viewer (as the server decides), or that the list is not live.
func (l *runList) banner() string {
	st := l.st
	waiting := l.waitingCount()
	switch {
	case l.err != nil:
		return st.err.Render("! could not list runs: " + cleanLine(l.err.Error()))
	case waiting == 1:
		return st.waiting.Render("▶ 1 run is waiting for you (w opens it)")
	case waiting > 1:
		return st.waiting.Render(fmt.Sprintf("▶ %d runs are waiting for you (w opens the next)", waiting))
	case !l.watching && l.loaded:
		return st.faint.Render("(not live: run changes are not being watched)")
	}
	return ""
}

func (l *runList) emptyNote() string {
	switch {
	case !l.loaded && l.err == nil:
		return "  loading runs…"
	case l.loaded && len(l.runs) == 0 && l.id.CanLaunch:
		return "  no runs yet — press n to launch one"
	case l.loaded && len(l.runs) == 0:
		return "  no runs yet"
	}
	return ""
}

// row is run i's line: "▶ YOU" when it waits for the viewer, "STALE" when
// its plan can never apply.
func (l *runList) row(i int) string {
	st := l.st
	r := l.runs[i]
	idw, tw, rw, pw := l.columns()
	mark := ""
	switch {
	case r.WaitingForMe:
		mark = "▶ YOU"
	case r.Stale:
		mark = "STALE"
	}
	row := pad(mark, 5) + " " + pad(cleanLine(r.ID), idw) + " " + pad(cleanLine(r.Status), 17) + " " +
		pad(cleanLine(r.Template), tw) + " " + pad(cleanLine(r.Kind), 9) + " " +
		pad(requester(r), rw) + " " + pad(age(l.now().Sub(r.CreatedAt)), 4)
	if pw > 0 && r.PullRequest != nil {
		row += " " + pad(prCell(r.PullRequest, pw), pw)
	}
	row = strings.TrimRight(row, " ")
	switch {
	case i == l.cursor:
		return "> " + st.selected.Render(row)
	case r.WaitingForMe:
		return "  " + st.waiting.Render(row)
	case r.Stale:
		return "  " + st.danger.Render(row)
	}
	return "  " + row
}
