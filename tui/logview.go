package tui

import (
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/switchtender/switchtender/planview"
)

// logView is a soft-wrapping, scrolling view of text: the log pane (a log
// that only grows) and the proposal pane (a text replaced as a whole).
// bubbles' viewport measures every line of its content on each
// SetContent, scroll and draw, which made replaying a long log quadratic
// and a scroll key on a plan text of megabytes take seconds; logView
// measures each line once, as it arrives, and keeps a running count of
// screen rows, so appending costs O(appended text) and drawing O(screen),
// whatever the text's length. Only a width change re-counts the rows (from
// the kept widths, without measuring text again; at words, wrapping again
// only the lines wider than the pane).
//
// The log cuts a line wider than the pane every width cells. The
// proposal pane (words) wraps it at words, as planview.Wrap does: a word
// is cut only when it is wider than a row, and the rows after a line's
// first begin with planview.Continued ("↪ "), their text 4 cells deeper
// than the line's own indentation. A line that
// carries styles (the pane's own styled lines) is cut as in the log.
type logView struct {
	textLines       // the cleaned lines; in a log the last may be partial ("" after a final newline)
	rows      []int // rows[i] is the screen rows lines[:i] take; len(rows) == len(lines)+1
	width     int
	height    int
	top       int // first screen row shown
	keys      viewport.KeyMap
	words     bool // wrap at words (the proposal pane), not every width cells (the log)
	// starts holds, for a line longer than longLine bytes wrapped at
	// words, where each of its rows starts at the current width, so a row
	// deep inside a line of megabytes is drawn without wrapping the line.
	starts map[int]wordRows
}

func newLogView() logView {
	return logView{rows: []int{0}, keys: viewport.DefaultKeyMap()}
}

// newWordView is a logView that wraps at words: the proposal pane.
func newWordView() logView {
	v := newLogView()
	v.words = true
	return v
}

// rowsOf is the screen rows line i takes when soft-wrapped: cut every
// width cells, or wrapped at words (which, for a line longer than
// longLine bytes, keeps where its rows start).
func (v *logView) rowsOf(i int) int {
	w := v.widths[i]
	switch {
	case v.width <= 0 || w <= v.width:
		return 1
	case !v.atWords(i):
		return (w + v.width - 1) / v.width
	}
	rs := wrapAtWords(v.lines[i], v.width)
	if len(v.lines[i]) > longLine {
		if v.starts == nil {
			v.starts = map[int]wordRows{}
		}
		v.starts[i] = startsOf(v.lines[i], rs)
	}
	return len(rs)
}

// atWords reports whether line i wraps at words: in the proposal pane,
// a line without styles.
func (v *logView) atWords(i int) bool { return v.words && !strings.Contains(v.lines[i], "\x1b") }

// appendText adds cleaned text (no control characters but newlines) to the log.
func (v *logView) appendText(s string) {
	if s == "" {
		return
	}
	parts := strings.Split(s, "\n")
	if len(v.lines) == 0 {
		v.lines, v.widths, v.rows = append(v.lines, ""), append(v.widths, 0), append(v.rows, 1)
	}
	last := len(v.lines) - 1
	if parts[0] != "" {
		v.lines[last] += parts[0]
		v.measure(last)
		v.rows[last+1] = v.rows[last] + v.rowsOf(last)
	}
	for _, p := range parts[1:] {
		v.lines = append(v.lines, p)
		v.widths = append(v.widths, 0)
		v.measure(len(v.lines) - 1)
		v.rows = append(v.rows, v.rows[len(v.rows)-1]+v.rowsOf(len(v.lines)-1))
	}
}

// setText replaces the view's text with parts, one after the other, less
// the empty lines at its end; the top row stays where it was as far as the
// new text allows.
func (v *logView) setText(parts ...textLines) {
	n := 0
	for _, p := range parts {
		n += len(p.lines)
	}
	t := textLines{lines: make([]string, 0, n), widths: make([]int, 0, n)}
	for _, p := range parts {
		for i, ms := range p.marks {
			if t.marks == nil {
				t.marks = map[int][]cutMark{}
			}
			t.marks[len(t.lines)+i] = ms
		}
		t.lines = append(t.lines, p.lines...)
		t.widths = append(t.widths, p.widths...)
	}
	for len(t.lines) > 0 && t.lines[len(t.lines)-1] == "" {
		t.lines, t.widths = t.lines[:len(t.lines)-1], t.widths[:len(t.widths)-1]
	}
	v.textLines = t
	v.recount()
}

// recount counts the screen rows of every line again, from the kept
// widths, and keeps the top row in range.
func (v *logView) recount() {
	v.rows, v.starts = append(v.rows[:0], 0), nil
	for i := range v.widths {
		v.rows = append(v.rows, v.rows[len(v.rows)-1]+v.rowsOf(i))
	}
	v.setTop(v.top)
}

// percent is how far down the view is scrolled, from 0 to 1, as bubbles'
// viewport's ScrollPercent says it (1 when everything fits).
func (v *logView) percent() float64 {
	total := v.totalRows()
	if v.height >= total {
		return 1
	}
	return max(0, min(1, float64(v.top)/float64(total-v.height)))
}

// shown is how many lines are on show: all but an empty partial last line.
func (v *logView) shown() int {
	n := len(v.lines)
	if n > 0 && v.lines[n-1] == "" {
		n--
	}
	return n
}

// totalRows is the screen rows the whole log takes.
func (v *logView) totalRows() int { return v.rows[v.shown()] }

func (v *logView) maxTop() int { return max(0, v.totalRows()-v.height) }

// setSize resizes the view; a new width re-counts the rows and keeps the
// line at the top of the screen there.
func (v *logView) setSize(w, h int) {
	v.height = h
	if w == v.width {
		v.setTop(v.top)
		return
	}
	line, _ := v.lineAt(v.top)
	v.width, v.starts = w, nil
	for i := range v.widths {
		v.rows[i+1] = v.rows[i] + v.rowsOf(i)
	}
	v.setTop(v.rows[min(line, len(v.lines))])
}

func (v *logView) setTop(n int) { v.top = max(0, min(n, v.maxTop())) }

func (v *logView) gotoTop()     { v.top = 0 }
func (v *logView) gotoBottom()  { v.top = v.maxTop() }
func (v *logView) scroll(n int) { v.setTop(v.top + n) }

// lineAt is the index of the line shown on screen row row, and which of
// its wrapped rows that is.
func (v *logView) lineAt(row int) (line, sub int) {
	n := v.shown()
	i := sort.Search(n, func(i int) bool { return v.rows[i+1] > row })
	if i >= n {
		return n, 0
	}
	return i, row - v.rows[i]
}

// update scrolls on the viewport's keys (↑↓ j k, pgup pgdown b f space,
// u d ctrl+u ctrl+d) and the mouse wheel.
func (v *logView) update(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, v.keys.PageDown):
			v.scroll(v.height)
		case key.Matches(msg, v.keys.PageUp):
			v.scroll(-v.height)
		case key.Matches(msg, v.keys.HalfPageDown):
			v.scroll(v.height / 2)
		case key.Matches(msg, v.keys.HalfPageUp):
			v.scroll(-v.height / 2)
		case key.Matches(msg, v.keys.Down):
			v.scroll(1)
		case key.Matches(msg, v.keys.Up):
			v.scroll(-1)
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelDown:
			v.scroll(3)
		case tea.MouseWheelUp:
			v.scroll(-3)
		}
	}
}

// view draws the rows on screen, padded to exactly width × height cells.
func (v *logView) view() string {
	if v.width <= 0 || v.height <= 0 {
		return ""
	}
	out := make([]string, 0, v.height)
	line, sub := v.lineAt(v.top)
	for n := v.shown(); line < n && len(out) < v.height; line, sub = line+1, 0 {
		if v.widths[line] <= v.width {
			out = append(out, v.lines[line])
			continue
		}
		out = v.appendRows(out, line, sub)
	}
	return lipgloss.NewStyle().Width(v.width).Height(v.height).Render(strings.Join(out, "\n"))
}

// appendRows appends line's rows from its row sub to out, up to the
// view's height: cut every width cells, or wrapped at words (a line
// longer than longLine bytes from where its rows start, kept; a shorter
// one wrapped again, at most longLine bytes).
func (v *logView) appendRows(out []string, line, sub int) []string {
	n := v.rows[line+1] - v.rows[line]
	if !v.atWords(line) {
		for r := sub; r < n && len(out) < v.height; r++ {
			out = append(out, v.cut(line, r*v.width, (r+1)*v.width))
		}
		return out
	}
	if ws, ok := v.starts[line]; ok {
		for r := sub; r < n && len(out) < v.height; r++ {
			out = append(out, ws.row(v.lines[line], r))
		}
		return out
	}
	rs := wrapAtWords(v.lines[line], v.width)
	for r := sub; r < len(rs) && len(out) < v.height; r++ {
		out = append(out, rs[r].String())
	}
	return out
}

// wrapAtWords wraps the cleaned line l to width cells at words
// (planview.Wrap), its leading spaces kept as its indentation.
func wrapAtWords(l string, width int) []planview.Line {
	text := strings.TrimLeft(l, " ")
	return planview.Wrap(planview.Line{Indent: len(l) - len(text), Text: text}, width)
}

// wordRows is where each row of a line wrapped at words starts (byte
// offsets into the line) and the indentation of its first row and of the
// others.
type wordRows struct {
	at          []int
	first, rest int
}

// startsOf is where each of rs, the rows planview.Wrap made of l, starts
// in l: a row's text is a piece of l (after planview.Continued on the
// rows after the first), and only spaces lie between two.
func startsOf(l string, rs []planview.Line) wordRows {
	ws := wordRows{at: make([]int, len(rs)), first: rs[0].Indent, rest: rs[0].Indent}
	if len(rs) > 1 {
		ws.rest = rs[1].Indent
	}
	pos := len(l) - len(strings.TrimLeft(l, " "))
	for j, r := range rs {
		ws.at[j] = pos
		pos += len(strings.TrimPrefix(r.Text, planview.Continued))
		for pos < len(l) && l[pos] == ' ' {
			pos++
		}
	}
	return ws
}

// row is row r of l as drawn: its indentation, planview.Continued on a
// row after the first, then its text.
func (ws wordRows) row(l string, r int) string {
	end := len(l)
	if r+1 < len(ws.at) {
		end = ws.at[r+1]
	}
	if r == 0 {
		return strings.Repeat(" ", ws.first) + strings.TrimRight(l[ws.at[r]:end], " ")
	}
	return strings.Repeat(" ", ws.rest) + planview.Continued + strings.TrimRight(l[ws.at[r]:end], " ")
}
