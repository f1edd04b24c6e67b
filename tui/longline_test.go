package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"charm.land/bubbles/v2/viewport"
	"github.com/charmbracelet/x/ansi"
)

// longText is a line of at least n bytes mixing ASCII with accents (one
// rune and combining), wide characters, emoji sequences, flags and
// zero-width characters, so cluster boundaries and wide cells fall
// everywhere, including across the cut marks.
func longText(rng *rand.Rand, n int) string {
	pieces := []string{"a", "bc", " ", "é", "e\u0301", "漢", "字", "🙂", "👩\u200d💻", "🇫🇷", "\u200b", "xyz-", "0123456789"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// TestALongLineIsMeasuredAndCutAsAnsiDoes checks the cut marks of lines
// longer than longLine: the width is ansi.StringWidth's and every row is
// what ansi.Cut cuts from the whole line, at narrow and usual widths, for
// a line measured at once and for one grown piece by piece as a log line
// arrives. Before the marks, a row deep in a line of megabytes was cut
// from the line's start on every draw (seconds per key on a one-line
// plan text or log).
func TestALongLineIsMeasuredAndCutAsAnsiDoes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{longLine + 1, 3 * markEvery * 7} {
		line := longText(rng, n)
		whole := measureLines([]string{line})
		grown := newLogView()
		for rest := line; rest != ""; {
			k := min(len(rest), 1+rng.IntN(700))
			for k < len(rest) && !utf8RuneStart(rest[k]) {
				k++
			}
			grown.appendText(rest[:k])
			rest = rest[k:]
		}
		want := ansi.StringWidth(line)
		if whole.widths[0] != want || grown.widths[0] != want {
			t.Fatalf("%d bytes: width %d measured at once, %d grown, ansi says %d", len(line), whole.widths[0], grown.widths[0], want)
		}
		if len(whole.marks[0]) == 0 || len(grown.marks[0]) == 0 {
			t.Fatalf("%d bytes: no cut marks (%d, %d)", len(line), len(whole.marks[0]), len(grown.marks[0]))
		}
		for _, w := range []int{1, 2, 7, 80} {
			rows := (want + w - 1) / w
			for r := 0; r < rows; r += 1 + rng.IntN(max(1, rows/60)) {
				exp := ansi.Cut(line, r*w, (r+1)*w)
				if got := whole.cut(0, r*w, (r+1)*w); got != exp {
					t.Fatalf("%d bytes, width %d, row %d: cut %q, ansi.Cut %q", len(line), w, r, got, exp)
				}
				if got := grown.cut(0, r*w, (r+1)*w); got != exp {
					t.Fatalf("%d bytes grown, width %d, row %d: cut %q, ansi.Cut %q", len(line), w, r, got, exp)
				}
			}
		}
	}
}

func utf8RuneStart(b byte) bool { return b&0xc0 != 0x80 }

// TestAGrowingLogWithALongLineDrawsAsViewport checks the log pane against
// bubbles' viewport on a log whose lines cross longLine as they grow: the
// same rows, top to bottom, at each width.
func TestAGrowingLogWithALongLineDrawsAsViewport(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	text := "first\n" + longText(rng, 2*longLine) + "\nshort\n" + strings.Repeat("=", longLine+3) + "\n" + longText(rng, longLine+100)
	for _, w := range []int{29, 80} {
		lv := newLogView()
		for rest := text; rest != ""; {
			k := min(len(rest), 1+rng.IntN(900))
			for k < len(rest) && !utf8RuneStart(rest[k]) {
				k++
			}
			lv.appendText(rest[:k])
			rest = rest[k:]
		}
		lv.setSize(w, 9)
		vp := viewport.New()
		vp.SoftWrap = true
		vp.SetWidth(w)
		vp.SetHeight(9)
		vp.SetContent(text)
		if lv.totalRows() != vp.TotalLineCount() {
			t.Fatalf("width %d: %d rows, viewport has %d", w, lv.totalRows(), vp.TotalLineCount())
		}
		for top := 0; top <= lv.maxTop(); top += 1 + rng.IntN(lv.maxTop()/6) {
			lv.setTop(top)
			vp.SetYOffset(top)
			if got, want := lv.view(), vp.View(); got != want {
				t.Fatalf("width %d, row %d:\n--- got\n%s\n--- viewport\n%s", w, top, got, want)
			}
		}
		lv.gotoBottom()
		vp.GotoBottom()
		if got, want := lv.view(), vp.View(); got != want {
			t.Fatalf("width %d, bottom:\n--- got\n%s\n--- viewport\n%s", w, got, want)
		}
	}
}
