package tui

import (
	"strings"
	"testing"
)

// TestTofusTextIsOneKeyAway checks that t shows tofu's own rendering of
// the plan in the proposal pane, says so in the status line, and that t
// again returns to the view where it was.
func TestTofusTextIsOneKeyAway(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 2")
	d.press("down") // from the replace to the delete
	d.press("t")
	s := d.view()
	if !strings.Contains(s, "Plan (tofu's rendering, masked)") || !strings.Contains(s, "tofu's own rendering · t: the view") {
		t.Fatalf("t does not show tofu's text:\n%s", s)
	}
	d.press("G")
	if s := d.view(); !strings.Contains(s, "Plan: 2 to add, 0 to change, 2 to destroy.") {
		t.Fatalf("tofu's text does not scroll to its end:\n%s", s)
	}
	d.press("t")
	if p := paneText(d.root()); !strings.Contains(p, `> ▸ - aws_s3_bucket.logs["eu-west-1"]`) {
		t.Fatalf("t again does not return to the view where the cursor was:\n%s", p)
	}
}

// TestEnterUnfoldsTheResourceUnderTheCursor checks enter and space: the
// resource under the cursor unfolds to its changed attributes, and folds
// again; e unfolds every one and folds them all back.
func TestEnterUnfoldsTheResourceUnderTheCursor(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 2")
	const attr = `~ ami = "ami-0a1b2c3d" -> "ami-9f8e7d6c" (forces replacement)`
	if p := paneText(d.root()); strings.Contains(p, attr) || !strings.Contains(p, "> ▸ -/+ aws_instance.web") {
		t.Fatalf("the replaced resource does not open folded under the cursor:\n%s", p)
	}
	d.press("enter")
	p := paneText(d.root())
	if !strings.Contains(p, "> ▾ -/+ aws_instance.web") || !strings.Contains(p, attr) || !strings.Contains(p, "… 12 unchanged attributes hidden") {
		t.Fatalf("enter does not unfold the resource under the cursor:\n%s", p)
	}
	d.press("space")
	if p := paneText(d.root()); strings.Contains(p, attr) || !strings.Contains(p, "> ▸ -/+ aws_instance.web") {
		t.Fatalf("space does not fold it again:\n%s", p)
	}
	d.press("e", "G")
	if s := d.view(); !strings.Contains(s, "t shows tofu's own rendering of this plan") {
		t.Fatalf("G does not reach the pane's end:\n%s", s)
	}
	d.press("g")
	var pages strings.Builder
	for range 6 {
		d.press("pgdown")
		pages.WriteString(paneText(d.root()) + "\n")
	}
	if p := pages.String(); !strings.Contains(p, "+ echo deploy v2") || !strings.Contains(p, "$.Statement") {
		t.Fatalf("e did not unfold the update:\n%s", p)
	}
	d.press("e", "g")
	if p := paneText(d.root()); strings.Contains(p, "▾") {
		t.Fatalf("e again leaves a resource unfolded:\n%s", p)
	}
}

// TestSlashFiltersByAddressAndEscClears checks the address filter: / opens
// it, the view narrows as it is typed (counts and the matching sections
// stay), enter keeps it, esc clears it and a second esc goes back.
func TestSlashFiltersByAddressAndEscClears(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 2")
	d.press("/")
	if !d.root().detail.Typing() || !strings.Contains(d.view(), "filter by address:") {
		t.Fatalf("/ does not open the filter:\n%s", d.view())
	}
	d.typeText("AWS_S3")
	p := paneText(d.root())
	if !strings.Contains(p, `aws_s3_bucket.logs["eu-west-1"]`) || strings.Contains(p, "aws_instance.web") || !strings.Contains(p, "Destroys 2") {
		t.Fatalf("the filter does not narrow the view to aws_s3:\n%s", p)
	}
	d.press("enter")
	if s := d.view(); d.root().detail.Typing() || !strings.Contains(s, `filter "AWS_S3": 1 of 8 changes`) {
		t.Fatalf("enter does not keep the filter:\n%s", s)
	}
	d2 := d
	d2.press("esc")
	if p := paneText(d2.root()); !strings.Contains(p, "aws_s3_bucket") || d2.root().active != screenDetail {
		t.Fatalf("esc does not clear the filter, or leaves the run:\n%s", p)
	}
	d2.press("/")
	d2.typeText("zzz")
	d2.press("esc")
	if p := paneText(d2.root()); !strings.Contains(p, "aws_instance.web") || d2.root().detail.Typing() {
		t.Fatalf("esc while typing does not clear the filter:\n%s", p)
	}
	d2.press("esc")
	d2.waitText("signed in as")
}

// TestTheDetailKeysStillWorkOnTheView checks that the view's keys leave
// the run's own keys alone: a approves, tab switches to the log.
func TestTheDetailKeysStillWorkOnTheView(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("Destroys 2")
	d.press("a")
	d.waitText("Release this proposal of run r-7?")
	d.press("esc", "tab")
	if d.root().detail.pane != paneLog {
		t.Fatal("tab does not switch to the log")
	}
}
