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

// changePane is the proposal pane on the change view (planview.View),
// risk first: the pane's own lines above the view (staleness), the
// view's items folded or whole, and the pane's own lines below it (holds,
// variables, findings). Every line is wrapped at words to the pane's
// width, less a gutter of two cells where "> " marks the cursor row.
//
// The cursor stops only on rows that mean something (isStop): the
// counts, each change's head (a resource, an output, a drift, "No
// changes"), the attributes of a change unfolded, and the pane's own
// lines but their headings; never on a blank row, a section's heading or
// the why and forced-by lines under a head. Every key that moves it
// (up, down, pages, g, G, e, enter, a filter, a new width) leaves it on
// such a row.
//
// Its cost follows the screen: an item's lines are made and wrapped when
// it is first counted or drawn and kept until the width changes or the
// item is folded or unfolded; the rows before each item on show are
// summed once per width or filter, so a draw or a scroll is a binary
// search and a screen of rows. A plan of 10,000 changes costs 10,000
// folded heads when opened, and nothing of them again.
type changePane struct {
	st     styles
	doc    *planview.View
	digest string // the proposal the view is of

	pre, post   []planview.Line // the pane's own lines, unwrapped
	preW, postW []planview.Line // the same, wrapped

	width, height int
	whole         []bool            // whole[i]: view item i is unfolded
	lines         [][]planview.Line // lines[i] is item i's wrapped lines as it is now (nil: not made yet)
	heads         []int             // heads[i] is the rows of item i's folded head, wrapped (set with lines[i])
	expandable    []int8            // expandable[i]: 1 when item i has more lines whole than folded, -1 when not, 0 not known yet
	filter        string
	items         []int // the view items on show: all, or the filter's
	shown, all    int   // the changes on show, and in the view
	rows          []int // rows[k] is the rows items[:k] take
	top, cursor   int   // the first row on screen, the cursor's row
	keys          viewport.KeyMap
}

// gutter is the cells left of every row: "> " on the cursor's.
const gutter = 2

// newChangePane is the pane on view v of the proposal with digest, w × h
// cells.
func newChangePane(st styles, v *planview.View, digest string, w, h int) *changePane {
	p := &changePane{st: st, doc: v, digest: digest, whole: make([]bool, v.Len()), expandable: make([]int8, v.Len()),
		keys: viewport.DefaultKeyMap(), width: w, height: h}
	p.items = v.Filter("")
	p.all = v.Matches(p.items)
	p.shown = p.all
	p.reset()
	return p
}

// textWidth is the cells a line of text may take (0, no limit, before
// the pane has a width: nothing is wrapped for a width it will not have).
func (p *changePane) textWidth() int {
	if p.width <= 0 {
		return 0
	}
	return max(1, p.width-gutter)
}

// reset drops the wrapped lines and counts the rows again (a new width).
func (p *changePane) reset() {
	p.lines = make([][]planview.Line, p.doc.Len())
	p.heads = make([]int, p.doc.Len())
	p.preW, p.postW = wrapLines(p.pre, p.textWidth()), wrapLines(p.post, p.textWidth())
	p.recount()
}

// wrapLines wraps each of ls to w cells.
func wrapLines(ls []planview.Line, w int) []planview.Line {
	out := make([]planview.Line, 0, len(ls))
	for _, l := range ls {
		out = append(out, planview.Wrap(l, w)...)
	}
	return out
}

// recount sums the rows of the items on show and keeps the rows in range.
func (p *changePane) recount() {
	p.rows = append(p.rows[:0], 0)
	for _, i := range p.items {
		p.rows = append(p.rows, p.rows[len(p.rows)-1]+len(p.itemLines(i)))
	}
	p.clamp()
}

// itemLines is view item i's wrapped lines, folded or whole, and sets
// p.heads[i], the rows of its folded head; a section's heading goes
// without the blank line the view gives it (the heading, in its style and
// left of the changes under it, is what separates).
func (p *changePane) itemLines(i int) []planview.Line {
	if ls := p.lines[i]; ls != nil {
		return ls
	}
	head := p.doc.Lines(i, false)
	n := len(head)
	for p.doc.Kind(i) == planview.KindSection && len(head) > 1 && head[0] == (planview.Line{}) {
		head = head[1:]
	}
	ls := wrapLines(head, p.textWidth())
	p.heads[i] = len(ls)
	if p.whole[i] {
		ls = append(ls, wrapLines(p.doc.Lines(i, true)[n:], p.textWidth())...)
	}
	p.lines[i] = ls
	return ls
}

// canUnfold reports whether view item i has more to show whole.
func (p *changePane) canUnfold(i int) bool {
	if p.expandable[i] == 0 {
		p.expandable[i] = -1
		if p.doc.Expandable(i) {
			p.expandable[i] = 1
		}
	}
	return p.expandable[i] > 0
}

// setOwn sets the pane's own lines above and below the view.
func (p *changePane) setOwn(pre, post []planview.Line) {
	p.pre, p.post = pre, post
	p.preW, p.postW = wrapLines(pre, p.textWidth()), wrapLines(post, p.textWidth())
	p.clamp()
}

func (p *changePane) setSize(w, h int) {
	p.height = h
	if w == p.width {
		p.clamp()
		return
	}
	item, _ := p.itemAt(p.cursor)
	p.width = w
	p.reset()
	p.cursorTo(item)
}

func (p *changePane) totalRows() int { return len(p.preW) + p.rows[len(p.items)] + len(p.postW) }

func (p *changePane) maxTop() int { return max(0, p.totalRows()-p.height) }

// clamp keeps the cursor on a stop (the nearest one at or after it, or
// else before it) and on screen.
func (p *changePane) clamp() {
	p.cursor = max(0, min(p.cursor, p.totalRows()-1))
	if !p.isStop(p.cursor) {
		if r := p.stopFrom(p.cursor, 1); r >= 0 {
			p.cursor = r
		} else if r := p.stopFrom(p.cursor, -1); r >= 0 {
			p.cursor = r
		}
	}
	p.keepOnScreen()
}

// keepOnScreen keeps the top row in range and the cursor on screen.
func (p *changePane) keepOnScreen() {
	p.top = max(0, min(p.top, p.maxTop()))
	if p.cursor < p.top {
		p.top = p.cursor
	}
	if p.height > 0 && p.cursor >= p.top+p.height {
		p.top = p.cursor - p.height + 1
	}
}

// isStop reports whether the cursor may rest on row r: a row that is not
// blank and is the first row of the counts or of a change's head, a row
// of an unfolded change's attributes, or a row of the pane's own lines
// that is not a heading. A section's heading and the rows under a head
// (why, forced by, a lookalike mark) belong to what they head.
func (p *changePane) isStop(r int) bool {
	l, i, _ := p.line(r)
	switch {
	case strings.TrimSpace(l.Text) == "":
		return false
	case i < 0:
		return l.Role != planview.RoleHeading
	case p.doc.Kind(i) == planview.KindSection:
		return false
	}
	_, sub := p.itemAt(r)
	return sub == 0 || (p.whole[i] && sub >= p.heads[i])
}

// stopFrom is the first stop after row r going down (dir 1) or up (dir
// -1), or -1 when there is none that way.
func (p *changePane) stopFrom(r, dir int) int {
	for r += dir; r >= 0 && r < p.totalRows(); r += dir {
		if p.isStop(r) {
			return r
		}
	}
	return -1
}

// itemAt is the position in p.items of the item on row r (-1 for the
// pane's own lines) and which of its rows r is.
func (p *changePane) itemAt(r int) (k, sub int) {
	r -= len(p.preW)
	if r < 0 || r >= p.rows[len(p.items)] {
		return -1, 0
	}
	k = sort.Search(len(p.items), func(k int) bool { return p.rows[k+1] > r })
	return k, r - p.rows[k]
}

// line is the wrapped line on row r, the view item it is of (-1 for the
// pane's own lines) and whether it is the item's first row.
func (p *changePane) line(r int) (planview.Line, int, bool) {
	if r < len(p.preW) {
		return p.preW[r], -1, false
	}
	k, sub := p.itemAt(r)
	if k < 0 {
		return p.postW[r-len(p.preW)-p.rows[len(p.items)]], -1, false
	}
	i := p.items[k]
	return p.itemLines(i)[sub], i, sub == 0
}

// cursorTo puts the cursor on the first row of p.items[k] (k < 0: keep it).
func (p *changePane) cursorTo(k int) {
	if k >= 0 && k < len(p.items) {
		p.cursor = len(p.preW) + p.rows[k]
	}
	p.clamp()
}

// toggle folds or unfolds the item under the cursor; the cursor goes to
// its first row.
func (p *changePane) toggle() {
	k, _ := p.itemAt(p.cursor)
	if k < 0 || !p.canUnfold(p.items[k]) {
		return
	}
	i := p.items[k]
	p.whole[i] = !p.whole[i]
	p.lines[i] = nil
	d := len(p.itemLines(i)) - (p.rows[k+1] - p.rows[k])
	for j := k + 1; j < len(p.rows); j++ {
		p.rows[j] += d
	}
	p.cursorTo(k)
}

// toggleAll unfolds every item on show, or folds them all when none is
// left folded; the cursor stays on its item.
func (p *changePane) toggleAll() {
	k, _ := p.itemAt(p.cursor)
	unfold := false
	for _, i := range p.items {
		if !p.whole[i] && p.canUnfold(i) {
			unfold = true
			break
		}
	}
	for _, i := range p.items {
		if p.canUnfold(i) && p.whole[i] != unfold {
			p.whole[i] = unfold
			p.lines[i] = nil
		}
	}
	p.recount()
	p.cursorTo(k)
}

// setFilter shows the items whose address holds q ("" shows all): the
// screen goes to the top and the cursor to the first change that matches.
func (p *changePane) setFilter(q string) {
	if q == p.filter {
		return
	}
	p.filter = q
	p.items = p.doc.Filter(q)
	p.shown = p.doc.Matches(p.items)
	p.recount()
	if q == "" {
		p.gotoTop()
		return
	}
	p.gotoFirstChange()
}

// gotoFirstChange puts the screen at the top and the cursor on the first
// change on show (a resource, output or drift), or on the first row when
// none is.
func (p *changePane) gotoFirstChange() {
	p.gotoTop()
	for k, i := range p.items {
		if p.doc.Matches([]int{i}) > 0 {
			p.cursorTo(k)
			return
		}
	}
}

// matches is how many changes are on show, and how many the view has.
func (p *changePane) matches() (shown, all int) { return p.shown, p.all }

// gotoTop puts the screen at the top and the cursor on the first stop.
func (p *changePane) gotoTop() {
	p.top, p.cursor = 0, 0
	p.clamp()
}

// gotoBottom puts the screen at the end and the cursor on the last stop.
func (p *changePane) gotoBottom() {
	p.cursor = p.totalRows() - 1
	if !p.isStop(p.cursor) {
		if r := p.stopFrom(p.cursor, -1); r >= 0 {
			p.cursor = r
		}
	}
	p.top = p.maxTop()
	p.clamp()
}

// step moves the cursor to the next stop down (dir 1) or up (dir -1);
// past the last stop that way the screen scrolls a row instead, so the
// rows beyond it (a heading above the first change) still come into view.
func (p *changePane) step(dir int) {
	if r := p.stopFrom(p.cursor, dir); r >= 0 {
		p.cursor = r
	} else {
		p.top += dir
	}
	p.clamp()
}

// move moves the cursor about n rows (a page, half of one) to a stop
// and the screen by scroll rows: to the last stop that far or nearer,
// or, when there is none between, to the next stop beyond.
func (p *changePane) move(n, scroll int) {
	dir := 1
	if n < 0 {
		dir = -1
	}
	target := max(0, min(p.cursor+n, p.totalRows()-1))
	r := target
	for r != p.cursor && !p.isStop(r) {
		r -= dir
	}
	if r == p.cursor {
		if next := p.stopFrom(p.cursor, dir); next >= 0 {
			r = next
		}
	}
	p.cursor = r
	p.top = max(0, min(p.top+scroll, p.maxTop()))
	p.clamp()
}

// scrollKey moves the cursor on the viewport's keys (↑↓ j k a row, pgup
// pgdown b f a screen, u d ctrl+u ctrl+d half of one).
func (p *changePane) scrollKey(msg tea.KeyPressMsg) {
	h := max(1, p.height)
	switch {
	case key.Matches(msg, p.keys.PageDown):
		p.move(h, h)
	case key.Matches(msg, p.keys.PageUp):
		p.move(-h, -h)
	case key.Matches(msg, p.keys.HalfPageDown):
		p.move(h/2, h/2)
	case key.Matches(msg, p.keys.HalfPageUp):
		p.move(-h/2, -h/2)
	case key.Matches(msg, p.keys.Down):
		p.step(1)
	case key.Matches(msg, p.keys.Up):
		p.step(-1)
	}
}

// percent is how far down the pane is scrolled, from 0 to 1 (1 when
// everything fits), as the log pane says it.
func (p *changePane) percent() float64 {
	total := p.totalRows()
	if p.height >= total {
		return 1
	}
	return max(0, min(1, float64(p.top)/float64(total-p.height)))
}

// view draws the rows on screen, padded to exactly width × height cells.
func (p *changePane) view() string {
	if p.width <= 0 || p.height <= 0 {
		return ""
	}
	out := make([]string, 0, p.height)
	for r := p.top; r < p.totalRows() && len(out) < p.height; r++ {
		out = append(out, p.row(r))
	}
	return lipgloss.NewStyle().Width(p.width).Height(p.height).Render(strings.Join(out, "\n"))
}

// row draws row r: the gutter, the indentation (with ▸ or ▾ on the first
// row of an item that unfolds) and the text in its role's style; the
// cursor's row reversed and marked "> ".
func (p *changePane) row(r int) string {
	l, i, first := p.line(r)
	lead := strings.Repeat(" ", l.Indent)
	if first && l.Indent >= 2 && p.canUnfold(i) {
		fold := "▸ "
		if p.whole[i] {
			fold = "▾ "
		}
		lead = lead[:l.Indent-2] + fold
	}
	if r == p.cursor {
		return "> " + p.st.selected.Render(pad(lead+l.Text, p.textWidth()))
	}
	return "  " + lead + p.st.role(l.Role).Render(l.Text)
}
