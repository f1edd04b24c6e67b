package tui

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Ages tick: with nothing else happening, the list is drawn again as the
// clock moves on (in a real tea.Program, as over SSH).
func TestAgesTick(t *testing.T) {
	defer func(d time.Duration) { ageTickEvery = d }(ageTickEvery)
	ageTickEvery = 20 * time.Millisecond
	var mu sync.Mutex
	now := clock
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(newFake(), Options{Width: 80, Height: 24, Context: ctx, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	seen := func(s string) func([]byte) bool {
		return func(b []byte) bool { return bytes.Contains([]byte(stripANSI(string(b))), []byte(s)) }
	}
	teatest.WaitFor(t, tm.Output(), seen("deploy-bot [agent] 5m"), teatest.WithDuration(5*time.Second))
	mu.Lock()
	now = now.Add(10 * time.Minute)
	mu.Unlock()
	teatest.WaitFor(t, tm.Output(), seen("15m"), teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// At 80x24 every screen's help line ends with "? help • q quit".
func TestQuitAndHelpVisibleAt80(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.waitText("r-4")
	screens := map[string]string{"list": d.view()}
	for _, id := range []string{"r-7", "r-5", "r-4", "r-3", "r-1"} {
		d.press("esc")
		d.waitText("signed in as")
		d.press("up", "up", "up", "up", "up", "up", "up", "up")
		d.openRun(id)
		d.settle()
		screens[id] = d.view()
	}
	for name, v := range screens {
		lines := strings.Split(v, "\n")
		if last := lines[len(lines)-1]; !strings.HasSuffix(last, "? help • q quit") {
			t.Errorf("%s: the help line at 80 columns is %q", name, last)
		}
	}
}

// ? shows every key of the screen; any key closes it, q still quits; while
// a text input has the focus, ? is typed.
func TestFullHelp(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("?")
	for _, k := range d.root().list.allKeys() {
		if !strings.Contains(d.view(), k.Help().Desc) {
			t.Errorf("the full help lacks %q:\n%s", k.Help().Desc, d.view())
		}
	}
	d.press("esc")
	if strings.Contains(d.view(), "Keys on this screen") {
		t.Fatalf("esc did not close the help")
	}
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("?")
	d.waitText("propose reconcile")
	d.press("x")
	d.press("r")
	d.typeText("why?")
	if strings.Contains(d.view(), "Keys on this screen") || !strings.Contains(d.view(), "why?") {
		t.Errorf("? while typing a reason opened the help:\n%s", d.view())
	}
	d.press("esc", "?", "q")
	d.settle()
	if !d.quit {
		t.Errorf("q in the help did not quit")
	}
}

// A message too long for its line is read whole with m, from the list and
// from the run; m on a run without a message says so.
func TestLongMessageReadWhole(t *testing.T) {
	f := newFake()
	long := "Refused to apply: " + strings.Repeat("the state moved on while the plan waited, ", 8) + "THE END."
	f.runs[3].Message = long
	r := f.details["r-4"]
	r.Message = long
	f.details["r-4"] = r
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("down", "down", "down")
	d.waitText("(m: whole)")
	d.press("m")
	d.waitText("any key closes")
	if got := flat(d.view()); !strings.Contains(got, flat(long)) {
		t.Errorf("m on the list does not show the message whole:\n%s", d.view())
	}
	d.press("esc")
	d.press("enter")
	d.waitText("Run r-4 ·")
	if !strings.Contains(d.view(), "(m: whole)") || strings.Contains(d.view(), "THE END.") {
		t.Errorf("the detail's message is not cut with a pointer to m:\n%s", d.view())
	}
	d.press("m")
	d.waitText("any key closes")
	if got := flat(d.view()); !strings.Contains(got, flat(long)) {
		t.Errorf("m on the run does not show the message whole:\n%s", d.view())
	}
	d.press("esc", "esc")
	d.waitText("signed in as")
	d.press("up", "up", "up", "up")
	d.openRun("r-6")
	d.waitText("Run r-6 ·")
	d.press("m")
	d.waitText("run r-6 has no message")
}

// flat is s with every run of white space made one space.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// w opens the next run waiting for you, from the list and from a run; with
// nothing else waiting it says so.
func TestJumpToNextWaiting(t *testing.T) {
	f := newFake()
	f.runs[3].WaitingForMe, f.runs[3].Status = true, "awaiting_approval"
	r := f.details["r-4"]
	r.RunSummary = f.runs[3]
	f.details["r-4"] = r
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("down", "w")
	d.waitText("Run r-4")
	d.press("w")
	d.waitText("Run r-7")
	d.press("w")
	d.waitText("Run r-4")

	f = newFake()
	d = newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.press("w")
	d.waitText("no other run is waiting for you")
	f.mu.Lock()
	f.runs[0].WaitingForMe = false
	f.mu.Unlock()
	d.press("esc")
	d.waitText("signed in as")
	f.tick()
	d.waitFor("no run waiting", func(v string) bool { return !strings.Contains(v, "▶ YOU") })
	d.press("w")
	d.waitText("nothing is waiting for you")
}

// A running run opens on its log even when it carries a proposal (an
// approved apply applying); a held one opens on its proposal.
func TestRunningRunOpensOnItsLog(t *testing.T) {
	f := newFake()
	r := f.details["r-7"]
	r.Status, r.WaitingForMe = "running", false
	f.details["r-7"] = r
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("status: running")
	if d.root().detail.pane != paneLog || !strings.Contains(d.view(), " Proposal   [Log]") {
		t.Errorf("a running run opened on its proposal:\n%s", d.view())
	}
	d = newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	if d.root().detail.pane != paneProposal {
		t.Errorf("a held run did not open on its proposal")
	}
}

// The held screen lists the run's variables, secret ones as (sensitive).
func TestHeldScreenShowsVariables(t *testing.T) {
	f := newFake()
	r := f.details["r-7"]
	r.Vars = map[string]string{"region": "eu-west-1", "db_password": "(sensitive)"}
	f.details["r-7"] = r
	d := newDriver(t, f, Options{Width: 80, Height: 40})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("pgdown")
	d.waitText("Variables")
	for _, want := range []string{"db_password = (sensitive)", "region = eu-west-1"} {
		if !strings.Contains(d.view(), want) {
			t.Errorf("the held screen lacks %q:\n%s", want, d.view())
		}
	}
}

// Every key that cannot act says why, in one line.
func TestKeysThatCannotActSayWhy(t *testing.T) {
	f := newFake()
	f.ident = Identity{Name: "carol", CanApprove: true}
	r := f.details["r-7"]
	r.Requester, r.Agent, r.WaitingForMe = "carol", false, false
	f.details["r-7"] = r
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	for _, c := range []struct{ key, want string }{
		{"n", "you cannot launch: your identity has no launch role"},
		{"x", "x does nothing here; ? lists the keys"},
	} {
		d.press(c.key)
		d.waitText(c.want)
	}
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("you asked for this run")
	d.press("esc")
	d.openRun("r-6")
	d.waitText("Run r-6 ·")
	for _, c := range []struct{ key, want string }{
		{"tab", "this run has only its log"},
		{"a", "this run holds no proposal"},
		{"c", "only a queued, running or held run can be cancelled"},
		{"z", "z does nothing here"},
	} {
		d.press(c.key)
		d.waitText(c.want)
	}
}
