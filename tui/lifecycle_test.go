package tui

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// editRun changes run id's detail (and its row) under the fake's lock.
func (f *fakeBackend) editRun(id string, edit func(r *RunDetail)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.details[id]
	if r.Proposal != nil {
		p := *r.Proposal
		p.Holds = append([]Hold(nil), p.Holds...)
		r.Proposal = &p
	}
	edit(&r)
	f.details[id] = r
	for i := range f.runs {
		if f.runs[i].ID == id {
			f.runs[i] = r.RunSummary
		}
	}
}

// helpLine is the screen's last line: the help.
func helpLine(screen string) string {
	lines := strings.Split(screen, "\n")
	return lines[len(lines)-1]
}

// The fake speaks the server's statuses, so the goldens pin what users see.
func TestFakeUsesTheServersStatuses(t *testing.T) {
	server := map[string]bool{"queued": true, "running": true, "awaiting_approval": true, "succeeded": true,
		"failed": true, "cancelled": true, "interrupted": true, "rejected": true, "refused": true, "stale": true}
	f := newFake()
	for _, r := range f.runs {
		if !server[r.Status] {
			t.Errorf("run %s has status %q, which the server never emits", r.ID, r.Status)
		}
	}
}

// At 80x24 the held screen's help line is the real one (cancel is offered
// for a held run) and q quit stays visible, in every pane and with a notice.
func TestHeldScreenKeepsQuitVisibleAt80x24(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	golden(t, "held_80x24", d.view())
	check := func(what string) {
		t.Helper()
		v := d.view()
		if h := helpLine(v); !strings.Contains(h, "q quit") {
			t.Errorf("%s: q quit is not on the help line %q; screen:\n%s", what, h, v)
		}
		if n := strings.Count(v, "\n") + 1; n != 24 {
			t.Errorf("%s: %d lines at height 24", what, n)
		}
	}
	check("held, proposal pane")
	for _, k := range []string{"a approve", "r reject", "c cancel run"} {
		if !strings.Contains(helpLine(d.view()), k) {
			t.Errorf("the held screen's help lacks %q: %q", k, helpLine(d.view()))
		}
	}
	d.press("tab")
	check("held, log pane")
	d.press("R")
	d.waitText("! run r-7 is awaiting approval: only a stale, failed")
	check("held, with a notice")
	d.press("esc")
	d.openRun("r-3")
	d.waitText("STALE")
	check("stale")
}

func TestHeldScreenSaysWhichRulesHoldAndWhomTheyWaitFor(t *testing.T) {
	f := newFake()
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.Holds[0].ReleasedBy = "carol" })
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	golden(t, "held_partly_released", d.view())
	v := d.view()
	for _, want := range []string{"2 to add, 0 to change, 2 to destroy (1 replaced)", "held by: agents → any approver",
		"released: few-destroys by carol"} {
		if !strings.Contains(v, want) {
			t.Errorf("the held screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "approved") {
		t.Errorf("a run still held is called approved:\n%s", v)
	}
	// The proposal pane says it per rule.
	d.press("down", "down", "down")
	d.waitText("released by carol")
	d.waitText("waits for anyone with the approve role")
	// Approving releases the rule that waits for alice; the dialog says so.
	d.press("a")
	d.waitText("releases rule agents")
}

func TestConfirmSaysWhatStillHolds(t *testing.T) {
	f := newFake()
	f.ident.Name = "carol"
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.Holds[1].Approvers = []string{"bob"} })
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("releases rule few-destroys; still held by agents (waits for bob)")
}

func TestApprovedOnlyWhereAPersonApproved(t *testing.T) {
	f := newFake()
	f.editRun("r-7", func(r *RunDetail) {
		r.Status, r.WaitingForMe = "succeeded", false
		r.Proposal.Holds[0].ReleasedBy = "carol"
		r.Proposal.Holds[1].ReleasedBy = "bob"
	})
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("approved: few-destroys by carol, agents by bob")

	// A plan no rule held is the saved plan, never "approved".
	f2 := newFake()
	f2.editRun("r-7", func(r *RunDetail) {
		r.Status, r.WaitingForMe, r.Message = "succeeded", false, ""
		r.Proposal.Holds = nil
	})
	d2 := newDriver(t, f2, Options{Width: 80, Height: 24})
	d2.openRun("r-7")
	d2.waitText("no rule held it: the saved plan")
	d2.waitText("No rule held this saved plan.")
	if v := d2.view(); strings.Contains(strings.ToLower(v), "approved") {
		t.Fatalf("a plan no rule held is called approved:\n%s", v)
	}
}

func TestPlanCountsUseTofusWords(t *testing.T) {
	for _, c := range []struct {
		p    Proposal
		want string
	}{
		{Proposal{Add: 1, Destroy: 1, Replace: 1}, "2 to add, 0 to change, 1 to destroy (1 replaced)"},
		{Proposal{Add: 0, Change: 2, Destroy: 3}, "0 to add, 2 to change, 3 to destroy"},
		{Proposal{Add: 1, Replace: 2, Destroy: 2, Forget: 1}, "3 to add, 0 to change, 2 to destroy (2 replaced, 1 to forget)"},
	} {
		if got := planCounts(&c.p); got != c.want {
			t.Errorf("planCounts(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestStaleProposalOffersRerunNotApproval(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-3")
	if !strings.Contains(d.view(), "STALE r-3") {
		t.Fatalf("the stale run is not marked in the list:\n%s", d.view())
	}
	d.openRun("r-3")
	d.waitText("STALE: the state changed after this plan was made")
	golden(t, "stale", d.view())
	v := d.view()
	for _, want := range []string{"status: stale ", "STALE: it can never apply and cannot be approved", "a newer proposal exists: run r-5", "DESTROYS 1", "R rerun"} {
		if !strings.Contains(v, want) {
			t.Errorf("the stale run lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(helpLine(v), "a approve") || strings.Contains(helpLine(v), "r reject") {
		t.Errorf("approve or reject offered for a stale plan: %q", helpLine(v))
	}
	// Even a stale proposal the server still marks as waiting is not approved.
	f.editRun("r-3", func(r *RunDetail) { r.WaitingForMe = true })
	f.tick()
	d.settle()
	d.press("a")
	d.waitText("! this plan is stale: it can never apply, so it cannot be approved; R reruns it")
	if d.root().detail.mode != modeNormal {
		t.Fatal("an approval dialog opened for a stale plan")
	}
	d.press("y")
	d.settle()
	if len(f.approved) != 0 {
		t.Fatalf("approved a stale plan: %+v", f.approved)
	}
}

func TestStaleWhileConfirmingDropsTheDialog(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("Release this proposal")
	f.editRun("r-7", func(r *RunDetail) {
		r.Status, r.Stale, r.WaitingForMe = "stale", true, false
		r.Proposal.Stale, r.Proposal.StaleReason = true, "the state changed"
	})
	f.tick()
	d.waitText("! the plan went stale while you were confirming")
	d.press("y")
	d.settle()
	if len(f.approved) != 0 {
		t.Fatalf("approved %+v after the plan went stale", f.approved)
	}
}

func TestRerunConfirmedOpensTheNewRun(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-3")
	d.waitText("R rerun")
	d.press("R")
	d.waitText("Rerun run r-3?")
	golden(t, "rerun_confirm", d.view())
	if len(f.reruns) != 0 {
		t.Fatal("Rerun called before confirmation")
	}
	d.press("y")
	d.waitText("Run r-8 · data · apply")
	d.waitText("status: queued")
	if want := []string{"r-3"}; !reflect.DeepEqual(f.reruns, want) {
		t.Fatalf("reruns %v, want %v", f.reruns, want)
	}
	if d.root().detail.runID != "r-8" {
		t.Fatalf("the detail shows %s, not the new run", d.root().detail.runID)
	}
}

func TestRerunOfferedOnlyForRunsThatEndedWithoutApplying(t *testing.T) {
	for status, offered := range map[string]bool{"failed": true, "rejected": true, "cancelled": true, "interrupted": true,
		"stale": true, "succeeded": false, "running": false, "queued": false, "awaiting_approval": false} {
		f := newFake()
		f.editRun("r-4", func(r *RunDetail) { r.Status = status })
		d := newDriver(t, f, Options{Width: 80, Height: 24})
		d.openRun("r-4")
		d.waitText("status: " + status)
		if got := strings.Contains(helpLine(d.view()), "R rerun"); got != offered {
			t.Errorf("%s: rerun offered = %v, want %v: %q", status, got, offered, helpLine(d.view()))
		}
		d.press("R")
		if !offered {
			d.waitText("r-4 " + statusSaid(status) + ": only a stale, failed")
			d.press("y")
			d.settle()
			if len(f.reruns) != 0 {
				t.Errorf("%s: rerun called: %v", status, f.reruns)
			}
		}
	}
}

func TestRerunKeptOrRefused(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-4")
	d.waitText("status: failed")
	d.press("R")
	d.waitText("Rerun run r-4?")
	d.press("n")
	d.waitText("no rerun")
	d.settle()
	if len(f.reruns) != 0 {
		t.Fatalf("reruns %v after keeping", f.reruns)
	}
	f.rerunErr = errors.New("run r-4 cannot be rerun as it was: the template network changed: survey field \"size\" wants one of small, large")
	d.press("R", "y")
	d.waitText("! rerun refused: run r-4 cannot be rerun as it was")
	if d.root().detail.runID != "r-4" {
		t.Fatal("a refused rerun left the run")
	}

	// Without the launch role there is no rerun.
	f2 := newFake()
	f2.ident.CanLaunch = false
	d2 := newDriver(t, f2, Options{Width: 80, Height: 24})
	d2.openRun("r-4")
	d2.waitText("status: failed")
	if strings.Contains(d2.view(), "R rerun") {
		t.Fatalf("rerun offered without the launch role:\n%s", d2.view())
	}
	d2.press("R")
	d2.waitText("! you cannot rerun: your identity has no launch role")
}

// requiredTemplate has fields that need an answer: a string, a choice and
// a bool without defaults.
var requiredTemplate = Template{Name: "gate", Project: "infra", Command: "infra/gate", Tool: "opentofu", Survey: []Field{
	{Name: "ticket", Type: "string", Description: "change ticket"},
	{Name: "tier", Type: "choice", Choices: []string{"small", "large"}},
	{Name: "confirm", Type: "bool"},
	{Name: "zone", Type: "string", Default: "a", HasDefault: true},
}}

func openRequiredForm(t *testing.T, f *fakeBackend) *driver {
	t.Helper()
	f.templates = []Template{requiredTemplate}
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("n")
	d.waitText("gate")
	d.press("enter")
	d.waitText("Launch · gate")
	return d
}

func TestLauncherRequiredFieldsStartWithoutValue(t *testing.T) {
	f := newFake()
	d := openRequiredForm(t, f)
	golden(t, "launcher_required", d.view())
	v := d.view()
	for _, bad := range []string{"‹ small ›", "‹ large ›", "‹ true ›", "‹ false ›"} {
		if strings.Contains(v, bad) {
			t.Errorf("a required field opens preselected (%s):\n%s", bad, v)
		}
	}
	if n := strings.Count(v, "no value: ←/→ to choose"); n != 2 {
		t.Errorf("%d unselected choices shown, want 2:\n%s", n, v)
	}
	// Submitting untouched: the server's check refuses the first required
	// field, at the field, and nothing launches. The request carries only
	// the default of zone.
	d.press("tab", "tab", "tab", "tab", "tab", "enter")
	d.waitText("✗ survey field \"ticket\" needs an answer")
	if l := d.root().launcher; l.focus != 0 || l.step != stepForm {
		t.Fatalf("focus %d step %d, want the ticket field on the form", l.focus, l.step)
	}
	want := []LaunchRequest{{Template: "gate", Kind: "plan", Answers: map[string]string{"zone": "a"}}}
	if !reflect.DeepEqual(f.checks, want) {
		t.Fatalf("CheckLaunch got %+v, want %+v", f.checks, want)
	}
	if len(f.launched) != 0 {
		t.Fatalf("launched %+v", f.launched)
	}
	// An answer typed then erased is an empty answer: refused too.
	d.typeText("x")
	d.press("backspace", "tab", "tab", "tab", "tab", "tab", "enter")
	d.waitText("✗ survey field \"ticket\" needs an answer")
	if got := f.checks[len(f.checks)-1].Answers; !reflect.DeepEqual(got, map[string]string{"ticket": "", "zone": "a"}) {
		t.Fatalf("answers after erasing = %v", got)
	}
	// Answer everything: the choice from the left ends on its last choice.
	d.typeText("CHG-1")
	d.press("tab", "left", "tab", "right")
	d.waitText("‹ large ›")
	d.waitText("‹ true ›")
	d.press("tab", "tab", "tab", "enter")
	d.waitText("Run r-8")
	want = []LaunchRequest{{Template: "gate", Kind: "plan", Answers: map[string]string{
		"ticket": "CHG-1", "tier": "large", "confirm": "true", "zone": "a"}}}
	if !reflect.DeepEqual(f.launched, want) {
		t.Fatalf("launched %+v, want %+v", f.launched, want)
	}
}

func TestLauncherShowsRefusalsWhereTheyBelong(t *testing.T) {
	// A refusal about no field stays under the form.
	f := newFake()
	f.checkErr = errors.New("carol may not launch runs: the launch role is missing")
	d := openRequiredForm(t, f)
	d.press("shift+tab", "enter")
	d.waitText("! launch refused: carol may not launch runs")
	if d.root().active != screenLauncher || len(f.launched) != 0 {
		t.Fatal("left the launcher or launched")
	}
	// A field refusal for a field the form does not have (the template
	// changed meanwhile) is shown under the form too, not lost.
	f.checkErr = &FieldError{Field: "region", Message: "template gate has no survey field region"}
	d.press("enter")
	d.waitText("! launch refused: template gate has no survey field region")
	// Launch itself refusing at a field (after the check passed) shows it
	// at the field.
	f.checkErr = nil
	f.launchErr = &FieldError{Field: "zone", Message: "survey field \"zone\" wants one of a, b"}
	f.templates[0].Survey = requiredTemplate.Survey[3:]
	d.press("esc", "enter")
	d.waitText("Launch · gate")
	d.press("tab", "tab", "enter")
	d.waitText("✗ survey field \"zone\" wants one of a, b")
	if l := d.root().launcher; l.focus != 0 {
		t.Fatalf("focus %d, want zone", l.focus)
	}
}

// TestProgramLauncherRefusesUntouchedRequiredField drives a real
// tea.Program: a required field left untouched is refused at the field.
func TestProgramLauncherRefusesUntouchedRequiredField(t *testing.T) {
	f := newFake()
	f.templates = []Template{requiredTemplate}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(f, Options{Width: 80, Height: 24, Now: func() time.Time { return clock }, Context: ctx})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	seen := func(s string) func([]byte) bool {
		return func(b []byte) bool { return strings.Contains(stripANSI(string(b)), s) }
	}
	wait := teatest.WithDuration(5 * time.Second)
	teatest.WaitFor(t, tm.Output(), seen("r-4"), wait)
	tm.Send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	teatest.WaitFor(t, tm.Output(), seen("gate"), wait)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), seen("no value"), wait)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}) // to the launch button
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), seen("needs an answer"), wait)
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.launched) != 0 {
		t.Fatalf("launched %+v", f.launched)
	}
}

func TestNewerProposalIsShown(t *testing.T) {
	f := newFake()
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.NewerRun = "r-9" })
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("a newer proposal exists: run r-9")
	if h := helpLine(d.view()); !strings.Contains(h, "q quit") {
		t.Fatalf("q quit lost with the newer-proposal line: %q\n%s", h, d.view())
	}
}
