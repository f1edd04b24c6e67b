package tui

import (
	"strings"
	"testing"
)

// for_each keys "prod" and "prod\u034f" both read db["prod"] on a
// terminal; the destroy list shows the escaped form and marks each as
// looking like the other, in a held plan and in a drift check's changes.
func TestDestroyListMarksLookalikeAddresses(t *testing.T) {
	plain, marked := `terraform_data.db["prod"]`, "terraform_data.db[\"prod\u034f\"]"
	escaped := `terraform_data.db["prod\u{034f}"]`
	f := newFake()
	f.editRun("r-7", func(r *RunDetail) {
		r.Proposal.Addresses = map[string][]string{"destroy": {plain, marked}}
	})
	f.editRun("r-1", func(r *RunDetail) {
		r.Check.Changes = []ResourceDiff{{Address: plain, Action: "delete"}, {Address: marked, Action: "delete"}}
	})
	for _, id := range []string{"r-7", "r-1"} {
		d := newDriver(t, f, Options{Width: 120, Height: 60})
		d.openRun(id)
		d.waitText(escaped)
		screen := d.view()
		for _, want := range []string{
			`! looks like terraform_data.db["prod"]: differs by U+034F`,
			"! looks like " + escaped + ": differs by U+034F",
		} {
			if !strings.Contains(screen, want) {
				t.Errorf("run %s's screen lacks %q:\n%s", id, want, screen)
			}
		}
		if strings.ContainsRune(screen, 0x034f) {
			t.Errorf("run %s's screen shows U+034F raw", id)
		}
	}
}
