package tui

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/planview"
)

// paneText is the proposal pane's rows on screen, without styles or the
// padding at their ends.
func paneText(m *model) string {
	rows := strings.Split(stripANSI(m.detail.changes.view()), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return strings.Join(rows, "\n")
}

// TestTheProposalPaneOpensOnTheRiskSections opens a held run whose
// proposal carries its change set: the pane opens on the view, every
// change folded to its head, the destroys and what leaves state first,
// then the replaced, deleted and forgotten resources with their reason,
// each section's heading without a blank line before it, the cursor on
// the first resource, all of it on the first screen at 80x24.
func TestTheProposalPaneOpensOnTheRiskSections(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 2")
	pane := paneText(d.root())
	want := []string{
		"  Destroys 2 (1 replaced, 1 deleted)",
		"  Leaves state, not destroyed: 2 (1 forgotten, 1 forgotten then created)",
		"  Also: 1 updated, 1 created, 1 moved, 1 output changed",
		"  Replaced (1): destroyed, then created again",
		"> ▸ -/+ aws_instance.web",
		"        why: a change that cannot be made in place",
		"        forced by: ami",
		"  Deleted (1): destroyed",
		`  ▸ - aws_s3_bucket.logs["eu-west-1"]`,
		"        why: its key is no longer in for_each",
		"  Forgotten (1): leaves state, not destroyed",
		"  ▸ forget aws_iam_role.legacy",
		"        why: a removed block with lifecycle { destroy = false }",
	}
	if !strings.HasPrefix(pane, strings.Join(want, "\n")) {
		t.Fatalf("the pane does not open on the risk sections:\n%s", pane)
	}
	if s := d.view(); strings.Contains(s, "Resources by action") || !strings.Contains(s, "t tofu's text") {
		t.Fatalf("the screen shows the old pane, or not the key to tofu's text:\n%s", s)
	}
}

// TestAProposalWithoutAChangeSetShowsTodaysPane checks that a proposal
// made before change sets were kept opens on the addresses by action and
// tofu's text, as before, and that t does nothing there but say so.
func TestAProposalWithoutAChangeSetShowsTodaysPane(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Resources by action")
	if d.root().detail.changes != nil || strings.Contains(d.view(), "Destroys 2 (") {
		t.Fatalf("a proposal without a change set shows the change view:\n%s", d.view())
	}
	d.press("t")
	if s := d.view(); !strings.Contains(s, "Resources by action") || !strings.Contains(s, "has no change view") {
		t.Fatalf("t on a proposal without a change set:\n%s", s)
	}
}

// TestAForgetIsLabelledAsLeavingStateNotDestroying checks the console's
// words for a forget: counted apart from the destroys, under a heading
// that says it leaves state and is not destroyed.
func TestAForgetIsLabelledAsLeavingStateNotDestroying(t *testing.T) {
	f := newFake()
	withChanges(f, &planview.ChangeSet{Counts: planview.Counts{Forget: 1},
		Resources: []planview.Resource{{Section: planview.SectionForget, Address: "aws_iam_role.legacy", Actions: []string{"forget"},
			Reason: "forgot_because_lifecycle_destroy_in_config"}}})
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 0")
	pane := paneText(d.root())
	for _, want := range []string{"Destroys 0 (0 replaced, 0 deleted)", "Leaves state, not destroyed: 1 (1 forgotten, 0 forgotten then created)",
		"Forgotten (1): leaves state, not destroyed", "forget aws_iam_role.legacy"} {
		if !strings.Contains(pane, want) {
			t.Errorf("%q is not in the pane:\n%s", want, pane)
		}
	}
}
