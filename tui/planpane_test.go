package tui

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/switchtender/switchtender/planview"
)

// consoleOn is a console of w×h cells showing run id of f, loaded once,
// the way the root draws it (no Backend subscriptions are started).
func consoleOn(f *fakeBackend, id string, w, h int) *model {
	m := New(f, Options{Width: w, Height: h, Now: func() time.Time { return clock }}).(*model)
	d := newRunDetail(m.env(), id, m.nextGen())
	d.SetSize(w, h)
	d.Update(detailRunMsg{gen: d.gen, d: f.details[id]})
	m.detail, m.active = d, screenDetail
	return m
}

// withPlanText sets the plan text of run id (r-7 holds a proposal, r-1 is
// a drift check), on copies, so a detail fetched before keeps its own.
func withPlanText(f *fakeBackend, id, text string) {
	r := f.details[id]
	if r.Proposal != nil {
		p := *r.Proposal
		p.PlanText, r.Proposal = text, &p
	} else {
		c := *r.Check
		c.PlanText, r.Check = text, &c
	}
	f.details[id] = r
}

// screenOf is the console's screen as text, without styles.
func screenOf(m *model) string { return stripANSI(m.View().Content) }

// paneRows is the proposal pane's rows, padded to its width.
func paneRows(m *model) []string { return strings.Split(m.detail.prop.view(), "\n") }

// wrappedAtWords is text with each line wider than w cells wrapped at
// words by planview.Wrap, its leading spaces as its indentation, but a
// line with styles (ESC), left for a viewport to cut: the rows the
// proposal pane draws.
func wrappedAtWords(text string, w int) string {
	lines := strings.Split(text, "\n")
	var out []string
	for _, l := range lines {
		if ansi.StringWidth(l) <= w || strings.Contains(l, "\x1b") {
			out = append(out, l)
			continue
		}
		body := strings.TrimLeft(l, " ")
		for _, r := range planview.Wrap(planview.Line{Indent: len(l) - len(body), Text: body}, w) {
			out = append(out, r.String())
		}
	}
	return strings.Join(out, "\n")
}

// TestProposalPaneDrawsAsViewport checks the proposal and check panes
// against bubbles' viewport, which drew them before they kept their lines,
// given the text wrapped at words beforehand: the same text (the pane's
// own styled lines, then the plan text cleaned whole) draws the same rows
// at every scroll position and width, with the same scroll percentage, for
// lines narrower and wider than the screen, wide characters, tabs and a
// line longer than longLine (whose rows are drawn from where each starts).
func TestProposalPaneDrawsAsViewport(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	plan := "OpenTofu will perform the following actions:\n\n" +
		"  # terraform_data.web will be destroyed\n\t- input = \"" + strings.Repeat("v", 79) + "\"\n" +
		strings.Repeat("8", 80) + "\n" + strings.Repeat("9", 81) + "\n" +
		"  ~ tags = { 漢字 = \"" + strings.Repeat("字", 70) + "\" }\n" +
		"  + note = \"" + longText(rng, longLine+500) + "\"\n\n" +
		"Plan: 0 to add, 1 to change, 1 to destroy.\n\n\n"
	for _, id := range []string{"r-7", "r-1"} {
		for _, w := range []int{80, 33} {
			f := newFake()
			withPlanText(f, id, plan)
			m := consoleOn(f, id, w, 24)
			d := m.detail
			vp := viewport.New()
			vp.SoftWrap = true
			vp.SetWidth(d.prop.width)
			vp.SetHeight(d.prop.height)
			vp.SetContent(wrappedAtWords(strings.TrimRight(d.propHead+strings.TrimRight(clean(plan), "\n"), "\n"), d.prop.width))
			if d.prop.totalRows() != vp.TotalLineCount() {
				t.Fatalf("%s at width %d: %d rows, viewport has %d", id, w, d.prop.totalRows(), vp.TotalLineCount())
			}
			for top := 0; top <= d.prop.maxTop(); top += 1 + rng.IntN(9) {
				d.prop.setTop(top)
				vp.SetYOffset(top)
				if got, want := d.prop.view(), vp.View(); got != want {
					t.Fatalf("%s at width %d, row %d:\n--- got\n%s\n--- viewport\n%s", id, w, top, got, want)
				}
				if d.prop.percent() != vp.ScrollPercent() {
					t.Fatalf("%s at width %d, row %d: %v%%, viewport %v%%", id, w, top, d.prop.percent(), vp.ScrollPercent())
				}
			}
			m.Update(keyMsg("G"))
			vp.GotoBottom()
			if got, want := d.prop.view(), vp.View(); got != want {
				t.Fatalf("%s at width %d, after G:\n--- got\n%s\n--- viewport\n%s", id, w, got, want)
			}
		}
	}
}

// TestPlanTextIsCleanedOncePerText checks that the plan text is cleaned
// and measured when it changes, and only then: not on an age tick, a
// scroll key, a refresh that brings the same text (an equal string, not
// the same one), a resize or a change of the lines above it. It was done
// on each of them, and each draw measured the whole text again: with an
// 11 MB plan, 2 s per scroll key and 3.4 CPU-seconds per 10 s idle.
func TestPlanTextIsCleanedOncePerText(t *testing.T) {
	t.Parallel()
	f := newFake()
	plan := bigPlanText(200 << 10)
	withPlanText(f, "r-7", plan)
	m := consoleOn(f, "r-7", 80, 24)
	d := m.detail
	if d.plan.builds != 1 {
		t.Fatalf("opening the run cleaned the plan text %d times", d.plan.builds)
	}
	for _, k := range []string{"down", "pgdown", "G", "up", "g"} {
		idleTick(m)
		pressAndDraw(m, k)
	}
	withPlanText(f, "r-7", strings.Clone(plan))
	r := f.details["r-7"]
	r.Proposal.Holds = append([]Hold(nil), r.Proposal.Holds...)
	r.Proposal.Holds[0].ReleasedBy = "carol"
	d.Update(detailRunMsg{gen: d.gen, d: r})
	m.Update(tea.WindowSizeMsg{Width: 61, Height: 20})
	pressAndDraw(m, "g")
	if d.plan.builds != 1 {
		t.Fatalf("ticks, keys, a refresh and a resize cleaned the plan text %d times in all", d.plan.builds)
	}
	if pane := strings.Join(d.prop.lines[:40], "\n"); !strings.Contains(pane, "released by carol") {
		t.Fatalf("the refresh's released hold is not in the pane:\n%s", pane)
	}
	// A text of the same length, one byte changed at its end.
	changed := strings.Replace(plan, "to destroy.", "to Destroy.", 1)
	withPlanText(f, "r-7", changed)
	d.Update(detailRunMsg{gen: d.gen, d: f.details["r-7"]})
	pressAndDraw(m, "G")
	if s := screenOf(m); d.plan.builds != 2 || !strings.Contains(s, "to Destroy.") {
		t.Fatalf("a changed plan text: cleaned %d times in all, screen:\n%s", d.plan.builds, s)
	}
}

// TestScrollingToTheEndOfABigPlanShowsItsLastLines opens a 2 MB plan text
// in lines and one of a single line, and checks that G shows the last
// rows, that a key up and back down returns to them, and that g shows the
// top again.
func TestScrollingToTheEndOfABigPlanShowsItsLastLines(t *testing.T) {
	t.Parallel()
	plan := bigPlanText(2 << 20)
	last := plan[strings.LastIndex(strings.TrimSuffix(plan, "\n"), "\n")+1 : len(plan)-1]
	for _, text := range []string{plan, oneLine(plan)} {
		f := newFake()
		withPlanText(f, "r-7", text)
		m := consoleOn(f, "r-7", 80, 24)
		pressAndDraw(m, "G")
		end := screenOf(m)
		if !strings.Contains(end, "proposal 100%") {
			t.Fatalf("after G the pane is not at its end:\n%s", end)
		}
		rows := paneRows(m)
		if text == plan && strings.TrimRight(rows[len(rows)-1], " ") != last {
			t.Fatalf("after G the last row is %q, want the plan's last line %q", rows[len(rows)-1], last)
		}
		if text != plan {
			wrapped := strings.Split(wrappedAtWords(clean(strings.TrimSuffix(text, "\n")), 80), "\n")
			if want := pad(wrapped[len(wrapped)-1], 80); rows[len(rows)-1] != want {
				t.Fatalf("after G the last row of a one-line plan is %q, want %q", rows[len(rows)-1], want)
			}
		}
		for _, k := range []string{"up", "up", "pgup", "pgdown", "down", "down"} {
			pressAndDraw(m, k)
		}
		if s := screenOf(m); s != end {
			t.Fatalf("up and back down does not return to the end:\n%s\n--- was\n%s", s, end)
		}
		pressAndDraw(m, "g")
		if s := screenOf(m); !strings.Contains(s, "Resources by action") || !strings.Contains(s, "proposal   0%") {
			t.Fatalf("after g the pane is not at its top:\n%s", s)
		}
	}
}

// TestResizingRewrapsThePlanText checks that a new width wraps the plan
// text's lines again: a last line of 150 cells, words and one word wider
// than the screen, takes the rows planview.Wrap makes of it at 80, 50 and
// 160 cells, and no row of the screen is wider than the terminal.
func TestResizingRewrapsThePlanText(t *testing.T) {
	t.Parallel()
	wide := "  # web id " + strings.Repeat("abcdefghij", 12) + " 123456 -out=/tmp/plan"
	f := newFake()
	withPlanText(f, "r-7", bigPlanText(50<<10)+wide+"\n")
	m := consoleOn(f, "r-7", 80, 24)
	for _, w := range []int{80, 50, 160, 80} {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		pressAndDraw(m, "G")
		rows := paneRows(m)
		want := strings.Split(wrappedAtWords(wide, w), "\n")
		n := len(want)
		got := rows[len(rows)-n:]
		for i := range got {
			if got[i] != pad(want[i], w) {
				t.Fatalf("width %d: row %d of the last line is %q, want %q", w, i, got[i], want[i])
			}
		}
		if n < len(rows) && strings.Contains(rows[len(rows)-n-1], "abcdefghij") {
			t.Fatalf("width %d: the last line takes more than %d rows:\n%s", w, n, strings.Join(rows, "\n"))
		}
		for _, l := range strings.Split(m.View().Content, "\n") {
			if lipgloss.Width(l) > w {
				t.Fatalf("width %d: a row of %d cells: %q", w, lipgloss.Width(l), l)
			}
		}
	}
}

// TestPlanTextIsCleanedLineByLine checks that an escape sequence in one
// line of the plan text (an OSC string that never ends, from a
// configuration's value) takes nothing of the lines after it: the plan
// text was cleaned as one string, and everything after such a string was
// gone.
func TestPlanTextIsCleanedLineByLine(t *testing.T) {
	t.Parallel()
	f := newFake()
	withPlanText(f, "r-7", "  # terraform_data.a will be destroyed\n      - input = \"x\x1b]8;;\" -> null\n"+
		"  # terraform_data.b will be destroyed\n\nPlan: 0 to add, 0 to change, 2 to destroy.\n")
	m := consoleOn(f, "r-7", 80, 24)
	pressAndDraw(m, "G")
	s := screenOf(m)
	for _, want := range []string{"terraform_data.a will be destroyed", "terraform_data.b will be destroyed", "2 to destroy."} {
		if !strings.Contains(s, want) {
			t.Fatalf("%q is not on the screen:\n%s", want, s)
		}
	}
}
