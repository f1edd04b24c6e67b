package tui

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/planview"
)

// cursorRow is the change pane's cursor row as plain text, without the
// gutter and the fold mark, and whether it is a blank row, a section's
// heading, or the rows under a change's head (why, forced by).
func cursorRow(t *testing.T, cp *changePane) (text string, blank, heading, underHead bool) {
	t.Helper()
	l, i, first := cp.line(cp.cursor)
	text = strings.TrimSpace(l.Text)
	if i >= 0 {
		kind := cp.doc.Kind(i)
		heading = kind == planview.KindSection
		_, sub := cp.itemAt(cp.cursor)
		underHead = !first && sub < len(wrapLines(cp.doc.Lines(i, false), cp.textWidth()))
	} else {
		heading = l.Role == planview.RoleHeading
	}
	return text, text == "", heading, underHead
}

// walk presses k until the cursor stops moving and returns the rows the
// cursor rested on, the one it starts on first, failing on a blank row, a heading or a row under a
// head.
func walk(t *testing.T, m *model, k string) []string {
	t.Helper()
	cp := m.detail.changes
	text, _, _, _ := cursorRow(t, cp)
	seen := []string{text}
	for range 200 {
		before := cp.cursor
		pressAndDraw(m, k)
		if cp.cursor == before {
			return seen
		}
		text, blank, heading, under := cursorRow(t, cp)
		if blank || heading || under {
			t.Fatalf("%s left the cursor on %q (blank %v, a heading %v, under a head %v):\n%s", k, text, blank, heading, under, paneText(m))
		}
		seen = append(seen, text)
	}
	t.Fatalf("%s never reached the end", k)
	return nil
}

// TestTheCursorStopsOnlyOnChangesNeverOnABlankLine walks the change view
// down and up, folded and unfolded, and checks every row the cursor
// rests on: the counts, each change's head, an unfolded change's
// attributes, the pane's own lines; never a blank row, a section's
// heading, or the why and forced-by lines under a head; and down stops
// on every change's head, skipping none.
func TestTheCursorStopsOnlyOnChangesNeverOnABlankLine(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	f.editRun("r-7", func(r *RunDetail) {
		r.Proposal.Stale, r.Proposal.NewerRun = true, "r-9"
		r.Proposal.StaleReason = "the state changed after this plan was made, so it can never apply"
		r.Vars = map[string]string{"region": "eu-west-1"}
	})
	m := consoleOn(f, "r-7", 80, 24)
	_ = m.View()
	down := walk(t, m, "down")
	joined := strings.Join(down, "\n")
	for _, head := range []string{"-/+ aws_instance.web", `- aws_s3_bucket.logs["eu-west-1"]`, "forget aws_iam_role.legacy",
		"forget/+ aws_db_instance.main", "~ aws_iam_policy.deploy", "region = eu-west-1", "t shows tofu's own rendering of this plan"} {
		if !strings.Contains(joined, head) {
			t.Errorf("down never stops on %q; it stops on:\n%s", head, joined)
		}
	}
	if strings.Contains(joined, "why:") || strings.Contains(joined, "forced by:") {
		t.Errorf("down stops under a head:\n%s", joined)
	}
	up := walk(t, m, "up")
	if !strings.HasPrefix(up[len(up)-1], "STALE") {
		t.Errorf("up does not reach the first line, STALE: %q", up[len(up)-1])
	}
	for _, k := range []string{"e", "G", "g", "pgdown", "pgdown", "pgup", "ctrl+d", "ctrl+u"} {
		pressAndDraw(m, k)
		if text, blank, heading, under := cursorRow(t, m.detail.changes); blank || heading || under {
			t.Fatalf("%s left the cursor on %q:\n%s", k, text, paneText(m))
		}
	}
	pressAndDraw(m, "e")
	walk(t, m, "down") // unfolded: the attributes are stops, blank rows still not
	walk(t, m, "up")
}

// TestEOnAPlanWithNothingToUnfoldLeavesTheCursorOnAChange opens a plan of
// two deletes with nothing to unfold, moves the cursor up from the first
// and presses e, g, G and a filter: the cursor is on the counts or a
// delete after each, never on the blank row or the "Deleted (2)" heading
// above them.
func TestEOnAPlanWithNothingToUnfoldLeavesTheCursorOnAChange(t *testing.T) {
	f := newFake()
	withChanges(f, &planview.ChangeSet{Counts: planview.Counts{Destroy: 2, Delete: 2}, Resources: []planview.Resource{
		{Section: planview.SectionDelete, Address: "terraform_data.old_a", Actions: []string{"delete"}},
		{Section: planview.SectionDelete, Address: "terraform_data.old_b", Actions: []string{"delete"}},
	}})
	m := consoleOn(f, "r-7", 80, 24)
	_ = m.View()
	for _, k := range []string{"up", "e", "down", "e", "down", "e", "g", "e", "G", "e", "/", "o", "l", "d", "_", "b", "enter", "e", "esc", "e"} {
		pressAndDraw(m, k)
		text, blank, heading, under := cursorRow(t, m.detail.changes)
		if blank || heading || under {
			t.Fatalf("%s left the cursor on %q:\n%s", k, text, paneText(m))
		}
	}
}
