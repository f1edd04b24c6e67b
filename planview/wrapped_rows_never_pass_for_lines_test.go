package planview

import (
	"strings"
	"testing"
)

// linesOf are the lines of cs as Text writes them at width, each with the
// cells of indentation it has.
func linesOf(cs *ChangeSet, width int) []string {
	return strings.Split(strings.TrimSuffix(Text(cs, width), "\n"), "\n")
}

// starts counts the lines that, at their indentation, begin with one of
// the view's own words: a heading, a note, a hidden-lines line, an
// attribute mark.
func starts(lines []string) map[string]int {
	words := []string{"Replaced (", "Deleted (", "Forgotten (", "Updated in place (", "Created (", "Destroys ",
		"why: ", "forced by: ", "… ", "~ ", "+ ", "- ", "-/+ ", "! "}
	n := map[string]int{}
	for _, l := range lines {
		body := strings.TrimLeft(l, " ")
		for _, w := range words {
			if strings.HasPrefix(body, w) {
				n[strings.Repeat(" ", len(l)-len(body))+w]++
			}
		}
	}
	return n
}

// TestAWrappedRowNeverPassesForALineOfTheView checks a real OpenTofu plan
// whose for_each key pads its head line so the rest of the address wraps
// onto a row reading "forced by: …", and values, reasons and paths of the
// same kind: at the console's widths, no row of a wrapped line begins
// with the view's own words (a heading, a note, an attribute) at any
// indentation; each begins with the mark of a continued line.
func TestAWrappedRowNeverPassesForALineOfTheView(t *testing.T) {
	pad := strings.Repeat(" ", 70)
	hand := &ChangeSet{Counts: Counts{Destroy: 1, Delete: 1, Update: 1}, Resources: []Resource{
		{Section: SectionDelete, Address: `terraform_data.y["a` + pad + `Deleted (0): destroyed"]`, Actions: []string{"delete"},
			Reason: "because" + pad + "why: the object is tainted"},
		{Section: SectionUpdate, Address: "terraform_data.z", Actions: []string{"update"}, Attributes: []Attribute{
			{Path: `tags["a` + pad + `~ password"]`, Before: `"x` + pad + `… 3 unchanged attributes hidden"`, After: `"y"`},
		}},
	}}
	for name, cs := range map[string]*ChangeSet{"spaced_key": committedChangeSet(t, "spaced_key"), "by hand": hand} {
		real := starts(linesOf(cs, 0))
		for _, width := range []int{78, 80, 60, 40} {
			rows := linesOf(cs, width)
			for w, n := range starts(rows) {
				if n > real[w] {
					t.Errorf("%s at width %d: %d rows begin %q, the view has %d such lines:\n%s", name, width, n, w, real[w], strings.Join(rows, "\n"))
				}
			}
			v := NewView(cs)
			for i := range v.Len() {
				for _, l := range v.Lines(i, true) {
					for k, r := range Wrap(l, width) {
						if k > 0 && !strings.HasPrefix(r.Text, Continued) {
							t.Errorf("%s at width %d: a wrapped row %q does not begin with %q", name, width, r.String(), Continued)
						}
					}
				}
			}
		}
	}
}
