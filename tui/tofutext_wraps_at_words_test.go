package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// TestTofusTextWrapsAtWordsNeverInsideOne shows tofu's own plan text (t)
// with lines wider than the pane, holding ids, an -out= path and a word
// wider than the pane, at 80 and 50 columns: every word that fits the
// pane is whole on one row, the wide word alone is cut, no row is wider
// than the terminal, and a wrapped line's rows after the first begin
// with ↪, their text deeper than its first row's.
func TestTofusTextWrapsAtWordsNeverInsideOne(t *testing.T) {
	t.Parallel()
	long := []string{
		`  # aws_instance.web["i-0123456789abcdef0"] must be replaced because ami-0a1b2c3d4e5f6a7b8 becomes ami-9f8e7d6c5b4a39281`,
		`Saved the plan to: /var/lib/switchtender/runs/0193a7c2-5d1e-7b3a/plan.out (tofu plan -out=/var/lib/switchtender/runs/0193a7c2/plan.out)`,
		`      ~ user_data = "` + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 4) + `" -> (known after apply)`,
	}
	plan := "OpenTofu will perform the following actions:\n\n" + strings.Join(long, "\n") + "\n\nPlan: 1 to add, 0 to change, 1 to destroy.\n"
	for _, w := range []int{80, 50} {
		f := newFake()
		withChanges(f, everySection(t))
		withPlanText(f, "r-7", plan)
		m := consoleOn(f, "r-7", w, 80)
		pressAndDraw(m, "t")
		rows := strings.Split(screenOf(m), "\n")
		for _, l := range strings.Split(m.View().Content, "\n") {
			if lipgloss.Width(l) > w {
				t.Fatalf("width %d: a row of %d cells: %q", w, lipgloss.Width(l), l)
			}
		}
		for _, line := range long {
			for _, word := range strings.Fields(line) {
				if len(word) > w-10 { // wider than a wrapped row's room (its indent, 6, and 4 deeper): cut, and only it
					continue
				}
				if !rowHolds(rows, word) {
					t.Errorf("width %d: %q is not whole on any row:\n%s", w, word, strings.Join(rows, "\n"))
				}
			}
		}
		start := rowIndex(rows, "Saved the plan to:")
		if start < 0 || !strings.HasPrefix(rows[start+1], "  ↪ ") {
			t.Errorf("width %d: the wrapped line's second row does not go on under its first with ↪:\n%s", w, strings.Join(rows, "\n"))
		}
	}
}

// rowHolds reports whether one of rows holds word as a whole word.
func rowHolds(rows []string, word string) bool {
	for _, r := range rows {
		for _, f := range strings.Fields(r) {
			if f == word {
				return true
			}
		}
	}
	return false
}

// rowIndex is the first of rows holding s, or -1.
func rowIndex(rows []string, s string) int {
	for i, r := range rows {
		if strings.Contains(r, s) {
			return i
		}
	}
	return -1
}
