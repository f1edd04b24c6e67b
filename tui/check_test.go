package tui

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// checkScreen checks the 80x24 rules every screen keeps: 24 lines and q
// quit on the help line.
func checkScreen(t *testing.T, what, v string) {
	t.Helper()
	if h := helpLine(v); !strings.Contains(h, "q quit") {
		t.Errorf("%s: q quit is not on the help line %q; screen:\n%s", what, h, v)
	}
	if n := strings.Count(v, "\n") + 1; n != 24 {
		t.Errorf("%s: %d lines at height 24:\n%s", what, n, v)
	}
}

// A check that found drift shows, at 80x24, when it ran, the drift and the
// changes per address and attribute, the counts, the digest and that a
// reconcile can be proposed with P; q quit stays visible.
func TestGoldenCheckWithDrift(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.openRun("r-1")
	d.waitText("[Check]")
	golden(t, "check_80x24", d.view())
	v := d.view()
	checkScreen(t, "check", v)
	for _, want := range []string{"checked 2026-04-27 08:00 UTC", "1 changed outside OpenTofu", "DESTROYS 2",
		"0 to add, 1 to change, 2 to destroy", "digest: " + checkDigest, "reconcile: can be proposed",
		"Changed outside OpenTofu (1)", "update terraform_data.server[1]", "differs: input, triggers_replace",
		"P propose reconcile"} {
		if !strings.Contains(v, want) {
			t.Errorf("the check screen lacks %q:\n%s", want, v)
		}
	}
	d.press("down", "down", "down", "down", "down", "down", "down")
	d.waitText("delete terraform_data.server[4]")
	d.press("tab")
	checkScreen(t, "check, log pane", d.view())
}

// A superseded check says why no reconcile can be proposed and offers no
// P; pressing it shows the reason and calls nothing.
func TestGoldenCheckSuperseded(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-0")
	d.waitText("[Check]")
	golden(t, "check_superseded", d.view())
	v := d.view()
	checkScreen(t, "superseded check", v)
	if !strings.Contains(v, "reconcile: cannot be proposed: superseded by check r-1") {
		t.Errorf("the superseded check does not say so:\n%s", v)
	}
	if strings.Contains(helpLine(v), "propose reconcile") {
		t.Errorf("a reconcile is offered on a superseded check: %q", helpLine(v))
	}
	d.press("P")
	d.waitText("! no reconcile: cannot be proposed: superseded by check r-1")
	d.press("y")
	d.settle()
	if len(f.reconciled) != 0 {
		t.Fatalf("Reconcile called: %v", f.reconciled)
	}
}

// Only an identity that can launch is offered the reconcile key.
func TestReconcileOnlyForIdentitiesThatCanLaunch(t *testing.T) {
	f := newFake()
	f.ident = Identity{Name: "bob", CanApprove: true}
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-1")
	d.waitText("[Check]")
	v := d.view()
	if strings.Contains(helpLine(v), "propose reconcile") || strings.Contains(v, "P proposes") {
		t.Errorf("a reconcile is offered to bob, who cannot launch:\n%s", v)
	}
	if !strings.Contains(v, "reconcile: can be proposed by someone with the launch role") {
		t.Errorf("the check does not say who may propose it:\n%s", v)
	}
	d.press("P")
	d.waitText("! you cannot propose a reconcile: your identity has no launch role")
	d.press("y")
	d.settle()
	if len(f.reconciled) != 0 {
		t.Fatalf("Reconcile called: %v", f.reconciled)
	}
}

// P asks first; y proposes the reconcile and opens it, held for approval
// on the held-apply screen with the check's digest.
func TestReconcileConfirmedOpensTheHeldReconcile(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-1")
	d.waitText("P propose reconcile")
	d.press("P")
	d.waitText("Propose a reconcile of check r-1?")
	golden(t, "check_reconcile_confirm", d.view())
	if n := strings.Count(d.view(), "\n") + 1; n != 24 {
		t.Errorf("the reconcile dialog has %d lines at height 24", n)
	}
	if len(f.reconciled) != 0 {
		t.Fatal("Reconcile called before confirmation")
	}
	d.press("y")
	d.waitText("Run r-8 · data · reconcile")
	d.waitText("DESTROYS 2")
	v := d.view()
	for _, want := range []string{"awaiting_approval", "held by: reconcile → any approver", "a reconcile of check r-1", checkDigest} {
		if !strings.Contains(v, want) {
			t.Errorf("the held reconcile lacks %q:\n%s", want, v)
		}
	}
	if want := []string{"r-1"}; !reflect.DeepEqual(f.reconciled, want) {
		t.Fatalf("reconciled %v, want %v", f.reconciled, want)
	}
	// Back on the check: reconciled, and P no longer offered.
	d.send(openRunMsg{id: "r-1"})
	d.waitText("reconcile: cannot be proposed again: reconciled by run r-8")
	if strings.Contains(helpLine(d.view()), "propose reconcile") {
		t.Errorf("a reconcile is offered again: %q", helpLine(d.view()))
	}
}

// n keeps the check; a refusal is shown as the server's sentence.
func TestReconcileKeptOrRefused(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-1")
	d.waitText("P propose reconcile")
	d.press("P", "n")
	d.waitText("no reconcile proposed")
	f.reconcileErr = errors.New("check r-1 was already reconciled by run 9 (`show 9`); a kept plan is proposed once")
	d.press("P", "y")
	d.waitText("! reconcile refused: check r-1 was already reconciled by run 9")
	if d.root().detail.runID != "r-1" || len(f.reconciled) != 0 {
		t.Fatalf("a refused reconcile left the check (%s) or was recorded: %v", d.root().detail.runID, f.reconciled)
	}
}

// A confirmation is dropped when the check stops being reconcilable
// meanwhile (a newer check superseded it).
func TestReconcileConfirmationDroppedWhenSuperseded(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-1")
	d.waitText("P propose reconcile")
	d.press("P")
	d.waitText("Propose a reconcile of check r-1?")
	f.editRun("r-1", func(r *RunDetail) {
		c := *r.Check
		c.Reconcilable, c.SupersededBy, c.Reconcile = false, "r-9", "cannot be proposed: superseded by check r-9, which dropped this plan"
		r.Check = &c
	})
	f.tick()
	d.waitText("! the check changed while you were confirming: no reconcile")
	d.press("y")
	d.settle()
	if len(f.reconciled) != 0 {
		t.Fatalf("Reconcile called: %v", f.reconciled)
	}
}

// The launcher offers a drift check as a third kind and launches kind
// "check".
func TestLauncherLaunchesADriftCheck(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("n")
	d.waitText("0 prompt(s)")
	d.press("down", "enter")
	d.waitText("Launch · dns")
	d.press("right", "right") // run as: dry run -> real run -> drift check
	d.waitText("‹ drift check (plan, kept for a reconcile) ›")
	d.press("right")
	d.waitText("‹ dry run (plan only) ›")
	d.press("left")
	d.waitText("‹ drift check")
	d.press("tab", "enter")
	d.waitText("Run r-8 · dns · check")
	want := []LaunchRequest{{Template: "dns", Kind: "check", Answers: map[string]string{}}}
	if !reflect.DeepEqual(f.launched, want) || f.checks[len(f.checks)-1].Kind != "check" {
		t.Fatalf("launched %+v (checked %+v), want %+v", f.launched, f.checks, want)
	}
}

// TestProgramReconcileEndToEnd proposes a reconcile with keys in a real
// tea.Program, as an SSH session runs the console.
func TestProgramReconcileEndToEnd(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(f, Options{Width: 80, Height: 24, Now: func() time.Time { return clock }, Context: ctx})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	out := tm.Output()
	seen := func(s string) func([]byte) bool {
		return func(b []byte) bool { return bytes.Contains([]byte(stripANSI(string(b))), []byte(s)) }
	}
	wait := teatest.WithDuration(5 * time.Second)
	press := func(r rune) { tm.Send(tea.KeyPressMsg{Code: r, Text: string(r)}) }

	teatest.WaitFor(t, out, seen("r-0"), wait)
	for range 5 { // r-7 .. r-1
		tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, out, seen("propose reconcile"), wait)
	press('P')
	teatest.WaitFor(t, out, seen("Propose a reconcile"), wait)
	press('y')
	teatest.WaitFor(t, out, seen("reconcile of check r-1"), wait)
	press('q')
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	f.mu.Lock()
	defer f.mu.Unlock()
	if !reflect.DeepEqual(f.reconciled, []string{"r-1"}) {
		t.Fatalf("reconciled %v, want [r-1]", f.reconciled)
	}
}

// A check that found no drift says so, shows no digest and offers no
// reconcile, giving the server's reason.
func TestCheckWithoutDrift(t *testing.T) {
	f := newFake()
	f.editRun("r-0", func(r *RunDetail) {
		r.Message = "No drift: the state matches the configuration, so this check kept no plan and there is nothing to reconcile."
		r.ExitCode = 0
		r.Check = &CheckResult{Finished: true, CheckedAt: clock.Add(-time.Hour),
			Reconcile: "cannot be proposed: no drift, so no plan was kept"}
	})
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-0")
	d.waitText("No drift: the state matches the configuration.")
	v := d.view()
	checkScreen(t, "no drift", v)
	for _, want := range []string{"checked 2026-05-01 11:00 UTC (1h ago): no drift", "reconcile: cannot be proposed: no drift"} {
		if !strings.Contains(v, want) {
			t.Errorf("the no-drift check lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "digest:") || strings.Contains(helpLine(v), "propose reconcile") {
		t.Errorf("a no-drift check shows a digest or offers a reconcile:\n%s", v)
	}
}
