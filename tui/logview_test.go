package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"charm.land/bubbles/v2/viewport"
)

// TestLogViewDrawsAsViewport checks the log pane against bubbles' viewport
// (what the pane used before): the same text, soft-wrapped at the same
// widths and scrolled to the same rows, draws the same screen.
func TestLogViewDrawsAsViewport(t *testing.T) {
	text := "short\n\n" + strings.Repeat("0123456789", 13) + "\n" +
		"wide 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字 end\n" +
		"café résumé naïve\n" + strings.Repeat("x", 41) + "\nlast line, no newline"
	for _, w := range []int{7, 20, 41, 80} {
		// Fed in pieces as chunks arrive, splitting lines anywhere.
		lv := newLogView()
		for rest := text; rest != ""; {
			n := min(len(rest), 5+w%11)
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++ // the sanitizer hands out whole runes
			}
			lv.appendText(rest[:n])
			rest = rest[n:]
		}
		lv.setSize(w, 6)
		vp := viewport.New()
		vp.SoftWrap = true
		vp.SetWidth(w)
		vp.SetHeight(6)
		vp.SetContentLines(strings.Split(text, "\n"))
		if lv.totalRows() != vp.TotalLineCount() {
			t.Fatalf("width %d: %d rows, viewport has %d", w, lv.totalRows(), vp.TotalLineCount())
		}
		for top := 0; top <= lv.maxTop()+2; top++ {
			lv.setTop(top)
			vp.SetYOffset(top)
			if got, want := lv.view(), vp.View(); got != want {
				t.Fatalf("width %d, row %d:\n--- got\n%s\n--- viewport\n%s", w, top, got, want)
			}
		}
	}
}

func TestLogViewDropsTheEmptyLineAfterTheLastNewline(t *testing.T) {
	lv := newLogView()
	lv.setSize(10, 5)
	lv.appendText("a\nb\n")
	if lv.totalRows() != 2 {
		t.Fatalf("%d rows for two lines", lv.totalRows())
	}
	lv.appendText("c")
	if lv.totalRows() != 3 || !strings.HasPrefix(strings.Split(lv.view(), "\n")[2], "c") {
		t.Fatalf("partial line not shown:\n%s", lv.view())
	}
}

func TestLogViewResizeKeepsTheTopLine(t *testing.T) {
	lv := newLogView()
	var b strings.Builder
	for i := range 50 {
		b.WriteString("line " + itoa(i) + " " + strings.Repeat("-", 30) + "\n")
	}
	lv.appendText(b.String())
	lv.setSize(80, 5)
	lv.setTop(20) // line 20
	lv.setSize(10, 5)
	if line, sub := lv.lineAt(lv.top); line != 20 || sub != 0 {
		t.Fatalf("after a resize the top is line %d row %d, want line 20", line, sub)
	}
	if first := strings.Split(lv.view(), "\n")[0]; !strings.HasPrefix(first, "line 20 ") {
		t.Fatalf("top row %q", first)
	}
	// Each 38-cell line takes 4 rows at width 10.
	if lv.totalRows() != 200 {
		t.Fatalf("%d rows at width 10, want 200", lv.totalRows())
	}
	lv.gotoBottom()
	if rows := strings.Split(lv.view(), "\n"); !lv.atBottom() || rows[1] != "line 49 --" || rows[4] != "--------  " {
		t.Fatalf("bottom:\n%s", lv.view())
	}
}

func TestLogViewMeasuresALongLinePiecewise(t *testing.T) {
	lv := newLogView()
	lv.setSize(100, 5)
	for range 100 {
		lv.appendText(strings.Repeat("x", 99) + "é")
	}
	if lv.widths[0] != 10000 || lv.totalRows() != 100 {
		t.Fatalf("a 10,000-cell line measured %d cells, %d rows", lv.widths[0], lv.totalRows())
	}
}

func (v *logView) atBottom() bool { return v.top >= v.maxTop() }
