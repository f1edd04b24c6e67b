package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/switchtender/switchtender/planview"
)

// longChangeSet is everySection with long addresses and values: words
// longer than a line, a module path of many parts, a long JSON document.
func longChangeSet(t testing.TB) *planview.ChangeSet {
	cs := everySection(t)
	cs.Resources[0].Address = "module.platform.module.networking.module.subnets.aws_subnet.private_application_tier[\"eu-west-1a\"]"
	cs.Resources[0].Attributes[0].After = `"` + strings.Repeat("Supercalifragilistic", 6) + `"`
	cs.Resources[1].Reason = "delete_because_" + strings.Repeat("averyveryverylongreasonkeyword", 4)
	cs.Resources[4].Attributes[3].JSON.Changes[1].After = `{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject","s3:ListBucket"],"Resource":["arn:aws:s3:::bucket-name/*"]}`
	return cs
}

var wordRun = regexp.MustCompile(`[\pL\pN]+`)

// TestNoLineWrapsInTheMiddleOfAWord draws the whole view (every resource
// unfolded) at several widths and checks every row: no wider than the
// screen, and every run of letters and digits on it is a whole word of
// the unwrapped text, or part of a word longer than a row.
func TestNoLineWrapsInTheMiddleOfAWord(t *testing.T) {
	cs := longChangeSet(t)
	words := map[string]bool{}
	for _, w := range wordRun.FindAllString(planview.Text(cs, 0), -1) {
		words[w] = true
	}
	for _, size := range [][2]int{{80, 24}, {200, 60}, {41, 30}} {
		f := newFake()
		withChanges(f, cs)
		m := consoleOn(f, "r-7", size[0], size[1])
		pressAndDraw(m, "e")
		cp := m.detail.changes
		for _, l := range append(append([]planview.Line(nil), cp.pre...), cp.post...) {
			for _, w := range wordRun.FindAllString(l.Text, -1) {
				words[w] = true
			}
		}
		for r := 0; r < cp.totalRows(); r++ {
			row := stripANSI(cp.row(r))
			if w := ansi.StringWidth(row); w > size[0] {
				t.Fatalf("width %d: row %d is %d cells: %q", size[0], r, w, row)
			}
			for _, w := range wordRun.FindAllString(row, -1) {
				if !words[w] && !partOfALongWord(words, w, size[0]-gutter-16) {
					t.Fatalf("width %d: row %d holds %q, a part of a word: %q", size[0], r, w, row)
				}
			}
		}
	}
}

// partOfALongWord reports whether w is part of one of words wider than
// cells (deeper than any line of the view is indented, a row cannot hold
// it whole).
func partOfALongWord(words map[string]bool, w string, cells int) bool {
	for word := range words {
		if ansi.StringWidth(word) > cells && strings.Contains(word, w) {
			return true
		}
	}
	return false
}

// TestEveryDoorShowsTheSameWords checks that the console's view, every
// resource unfolded, is planview.Text at the pane's width: the same lines,
// less the console's gutter and fold marks and the blank lines Text puts
// before a section's heading.
func TestEveryDoorShowsTheSameWords(t *testing.T) {
	cs := longChangeSet(t)
	for _, w := range []int{80, 200} {
		f := newFake()
		withChanges(f, cs)
		m := consoleOn(f, "r-7", w, 60)
		pressAndDraw(m, "e")
		cp := m.detail.changes
		var rows []string
		for r := len(cp.preW); r < len(cp.preW)+cp.rows[len(cp.items)]; r++ {
			row := strings.TrimRight(stripANSI(cp.row(r)), " ")
			row = strings.NewReplacer("> ", "  ", "▾ ", "  ", "▸ ", "  ").Replace(row[:min(len(row), 6)]) + row[min(len(row), 6):]
			rows = append(rows, strings.TrimPrefix(row, "  "))
		}
		want := strings.ReplaceAll(strings.TrimSuffix(planview.Text(cs, w-gutter), "\n"), "\n\n", "\n")
		if got := strings.Join(rows, "\n"); got != want {
			t.Fatalf("width %d: the console's view differs from planview.Text:\n--- console\n%s\n--- Text\n%s", w, got, want)
		}
	}
}
