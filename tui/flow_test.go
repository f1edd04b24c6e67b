package tui

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestLaunchWithSurvey(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("n")
	d.waitText("launch a run")
	d.waitText("network")
	d.press("enter")
	d.waitText("Launch · network")

	// A bad answer is shown at its field when the focus leaves it.
	d.press("ctrl+u")
	d.typeText("moon")
	d.press("tab")
	d.waitText("✗ region must look like eu-west-1")

	// Submitting with a bad answer launches nothing and names the problem;
	// api_token, untouched, has no answer to check yet.
	d.press("tab", "tab", "tab", "tab") // api_token, replicas, run as, launch
	d.press("enter")
	d.waitText("1 answer(s) need fixing before launch")
	if v := d.view(); !strings.Contains(v, "✗ region must look like") || strings.Contains(v, "✗ api_token") {
		t.Fatalf("errors not shown at their fields:\n%s", v)
	}
	if len(f.launched) != 0 {
		t.Fatalf("Launch called with bad answers: %+v", f.launched)
	}
	// The focus went to the first bad answer: region.
	if l := d.root().launcher; l.focus != 0 {
		t.Fatalf("focus = %d, want the region field", l.focus)
	}

	d.press("ctrl+u")
	d.typeText("eu-central-1")
	d.press("tab")   // size
	d.press("right") // medium -> large
	// Submitting now: the server's launch check refuses the required
	// api_token left untouched, at its field, and the focus goes there.
	d.press("tab", "tab", "tab", "tab", "enter") // api_token, replicas, run as, launch
	d.waitText("✗ survey field \"api_token\" needs an answer")
	d.waitText("! launch refused: api_token needs fixing")
	if l := d.root().launcher; l.focus != 2 || l.step != stepForm {
		t.Fatalf("focus = %d (step %d), want the api_token field on the form", l.focus, l.step)
	}
	if len(f.launched) != 0 {
		t.Fatalf("Launch called without a required answer: %+v", f.launched)
	}
	d.typeText("s3cret-q")
	if v := d.view(); strings.Contains(v, "s3cret") {
		t.Fatalf("a sensitive answer is shown in clear:\n%s", v)
	}
	if d.quit {
		t.Fatal("typing q in an answer quit the console")
	}
	d.press("tab", "tab") // replicas, run as
	d.press("right")      // dry run -> real run
	d.waitText("‹ real run (apply) ›")
	d.press("tab", "enter")
	d.waitText("Run r-8")

	want := []LaunchRequest{{Template: "network", Kind: "apply", Answers: map[string]string{
		"region": "eu-central-1", "size": "large", "api_token": "s3cret-q", "replicas": "2",
	}}}
	if !reflect.DeepEqual(f.launched, want) {
		t.Fatalf("launched %+v, want %+v", f.launched, want)
	}
	if d.root().active != screenDetail {
		t.Fatal("the new run's detail is not open")
	}
}

func TestLaunchRefusedByServerStaysOnForm(t *testing.T) {
	f := newFake()
	f.templates = f.templates[1:] // dns: no survey
	b := &refusingLaunch{fakeBackend: f}
	d := newDriver(t, b, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("n")
	d.waitText("launch a run")
	d.waitText("dns")
	d.press("enter")
	d.waitText("Launch · dns")
	d.press("tab", "enter") // run as -> launch button, launch
	d.waitText("! launch refused: queue default is paused")
	if d.root().active != screenLauncher {
		t.Fatal("left the launcher after a refused launch")
	}
}

type refusingLaunch struct{ *fakeBackend }

func (r *refusingLaunch) Launch(ctx context.Context, req LaunchRequest) (string, error) {
	return "", errors.New("queue default is paused")
}

func TestFollowLogAcrossChunks(t *testing.T) {
	f := newFake()
	ch := make(chan LogChunk)
	f.logs["r-5"] = ch
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5")

	// send queues chunks in order, as a log channel delivers them.
	queue := make(chan LogChunk, 64)
	go func() {
		for c := range queue {
			ch <- c
		}
		close(ch)
	}()
	send := func(off int64, s string) { queue <- LogChunk{Offset: off, Data: []byte(s)} }
	log := "line 1\nline 2\n"
	send(0, log)
	d.waitText("line 2")
	send(0, log)                 // a duplicate of what was applied
	send(0, "line 1\n")          // a chunk wholly before what was applied
	send(7, "line 2\nline 3\n")  // overlaps "line 2"
	send(21, "line 4 caf\xc3")   // a rune split across chunks,
	send(32, "\xa9 \x1b[31mred") // an escape sequence split too
	send(42, "\x1b[0m done\n")   // ...and finished here
	d.waitText(`line 4 café \x1b[31mred\x1b[0m done`)
	got := strings.Join(d.root().detail.log.lines, "\n")
	if want := "line 1\nline 2\nline 3\nline 4 café \\x1b[31mred\\x1b[0m done\n"; got != want {
		t.Fatalf("log = %q, want %q", got, want)
	}
	if n := strings.Count(d.view(), "line 2"); n != 1 {
		t.Fatalf("line 2 shown %d times", n)
	}

	// Fill past the screen: the tail stays in view while following.
	var more strings.Builder
	for i := 5; i <= 60; i++ {
		more.WriteString("line " + itoa(i) + "\n")
	}
	next := int64(len("line 1\nline 2\nline 3\nline 4 café red done\n"))
	send(next, more.String())
	d.waitText("line 60")
	next += int64(more.Len())

	// Scrolling up stops following: a new line does not pull the view down.
	d.press("up", "up", "up")
	d.waitText("paused at line")
	send(next, "line 61\n")
	d.waitFor("line 61 applied", func(string) bool { return d.root().detail.next == next+8 })
	if v := d.view(); strings.Contains(v, "line 61") {
		t.Fatalf("the view jumped to the tail while paused:\n%s", v)
	}
	// G resumes following.
	d.press("G")
	d.waitText("line 61")
	d.waitText("following the log")

	// The end of the log is shown as such.
	close(queue)
	d.waitText("— end of log —")
}

func TestLogGapIsMarked(t *testing.T) {
	f := newFake()
	ch := make(chan LogChunk, 2)
	ch <- LogChunk{Offset: 0, Data: []byte("a\n")}
	ch <- LogChunk{Offset: 10, Data: []byte("b\n")}
	f.logs["r-5"] = ch
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5")
	d.waitText("[log bytes 2 to 10 were not received]")
}

func TestApproveReleasesTheShownDigest(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	if !strings.Contains(d.view(), "digest: "+heldDigest) {
		t.Fatalf("the digest is not shown:\n%s", d.view())
	}
	d.press("a")
	d.waitText("Release this proposal of run r-7?")
	if !strings.Contains(d.view(), heldDigest) {
		t.Fatalf("the confirmation does not show the digest it releases:\n%s", d.view())
	}
	if len(f.approved) != 0 {
		t.Fatal("Approve called before confirmation")
	}
	d.press("y")
	d.waitText("released " + heldDigest)
	want := []approval{{"r-7", heldDigest}}
	if !reflect.DeepEqual(f.approved, want) {
		t.Fatalf("approved %+v, want %+v", f.approved, want)
	}
}

func TestApproveCancelledDoesNothing(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("Release this proposal")
	d.press("n")
	d.waitText("approval cancelled")
	d.settle()
	if len(f.approved) != 0 {
		t.Fatalf("approved after cancel: %+v", f.approved)
	}
}

func TestProposalChangedWhileConfirmingCancels(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("Release this proposal")

	newDigest := "sha256:" + strings.Repeat("ab", 32)
	f.mu.Lock()
	r := f.details["r-7"]
	p := *r.Proposal
	p.Digest, p.Destroy = newDigest, 5
	r.Proposal = &p
	f.details["r-7"] = r
	f.mu.Unlock()
	f.tick()
	d.waitText("the proposal changed while you were confirming")
	d.press("y") // too late: the dialog is gone
	d.settle()
	if len(f.approved) != 0 {
		t.Fatalf("approved %+v after the proposal changed", f.approved)
	}
	if !strings.Contains(d.view(), "DESTROYS 5") {
		t.Fatalf("the new proposal is not shown:\n%s", d.view())
	}
	d.press("a")
	d.waitText(newDigest)
	d.press("y")
	d.waitText("released " + newDigest)
	if want := []approval{{"r-7", newDigest}}; !reflect.DeepEqual(f.approved, want) {
		t.Fatalf("approved %+v, want %+v", f.approved, want)
	}
}

func TestApproveRefusedShowsError(t *testing.T) {
	f := newFake()
	f.approveErr = errors.New("proposal sha256:9f86… is no longer held: it was superseded by a newer plan")
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("Release this proposal")
	d.press("y")
	d.waitText("! approval refused: proposal sha256:9f86… is no longer held")
}

func TestRejectWithReason(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("r")
	d.waitText("Reject the proposal of run r-7")
	d.typeText("quite too many destroys")
	if d.quit {
		t.Fatal("q typed in the reason quit the console")
	}
	d.press("enter")
	d.waitText("proposal rejected")
	want := []rejection{{"r-7", "quite too many destroys"}}
	if !reflect.DeepEqual(f.rejected, want) {
		t.Fatalf("rejected %+v, want %+v", f.rejected, want)
	}
}

func TestCannotApproveWithoutRoleOrWhenNotWaiting(t *testing.T) {
	f := newFake()
	f.ident.CanApprove = false
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.press("a")
	d.waitText("! you cannot approve or reject: your identity has no approve role")
	d.press("r")
	if d.root().detail.mode != modeNormal {
		t.Fatal("reject opened without the approve role")
	}

	f2 := newFake()
	r := f2.details["r-7"]
	r.WaitingForMe = false
	f2.details["r-7"] = r
	d2 := newDriver(t, f2, Options{Width: 80, Height: 24})
	d2.openRun("r-7")
	d2.waitText("DESTROYS 2")
	d2.press("a")
	d2.waitText("! this proposal is not waiting for you")
	if len(f.approved)+len(f2.approved) != 0 {
		t.Fatal("Approve called")
	}
}

func TestRunListIsLive(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	f.mu.Lock()
	f.runs[2].Status = "drifted"
	f.mu.Unlock()
	f.tick()
	d.waitText("drifted")
	// While a detail is open the list keeps its subscription alive.
	d.openRun("r-6")
	f.mu.Lock()
	f.runs[1].Status = "archived"
	f.mu.Unlock()
	f.tick()
	d.waitFor("list refreshed in the background", func(string) bool {
		for _, r := range d.root().list.runs {
			if r.Status == "archived" {
				return true
			}
		}
		return false
	})
	d.press("esc")
	d.waitText("archived")
}

func TestQuitKeys(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("q")
	d.settle()
	if !d.quit {
		t.Fatal("q did not quit the run list")
	}
	d2 := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d2.waitText("r-4")
	d2.press("ctrl+c")
	d2.settle()
	if !d2.quit {
		t.Fatal("ctrl+c did not quit")
	}
}

func TestNoLauncherWithoutRole(t *testing.T) {
	f := newFake()
	f.ident.CanLaunch = false
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.waitText("r-4")
	d.press("n")
	d.settle()
	if d.root().active != screenList || strings.Contains(d.view(), "n new run") {
		t.Fatalf("launcher reachable without the launch role:\n%s", d.view())
	}
}

var colourSGR = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]`)

func TestNoColorHasNoColourButKeepsMarks(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24, NoColor: true})
	d.waitText("r-4")
	list := d.m.View().Content
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	held := d.m.View().Content
	d.press("esc")
	d.waitText("signed in as")
	d.press("n")
	d.waitText("launch a run")
	d.waitText("dns")
	d.press("enter")
	d.waitText("Launch · network")
	form := d.m.View().Content
	for name, v := range map[string]string{"list": list, "held": held, "launcher form": form} {
		if loc := colourSGR.FindStringIndex(v); loc != nil {
			t.Errorf("%s view has a colour sequence %q", name, v[loc[0]:loc[1]])
		}
	}
	if !strings.Contains(stripANSI(list), "▶ YOU") || !strings.Contains(stripANSI(held), "DESTROYS 2") {
		t.Fatal("marks missing without colour")
	}
	// With colour, the same marks are text too.
	dc := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	dc.waitText("r-4")
	if !colourSGR.MatchString(dc.m.View().Content) {
		t.Fatal("colour mode uses no colour at all: the test above proves nothing")
	}
}

func TestLogCannotDriveTheTerminal(t *testing.T) {
	f := newFake()
	ch := make(chan LogChunk, 1)
	ch <- LogChunk{Offset: 0, Data: []byte("before\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b31m\rafter\x07\n")}
	f.logs["r-5"] = ch
	d := newDriver(t, f, Options{Width: 80, Height: 24, NoColor: true})
	d.openRun("r-5")
	d.waitText("before")
	raw := d.m.View().Content
	for _, bad := range []string{"\x1b]", "\x1b[2J", "\x07", "\r", "\x9b"} {
		if strings.Contains(raw, bad) {
			t.Errorf("log control sequence %q reached the screen", bad)
		}
	}
	if !strings.Contains(raw, "before") || !strings.Contains(raw, "after") {
		t.Errorf("log text lost:\n%s", raw)
	}
}

func TestResizeReachesEveryScreen(t *testing.T) {
	d := newDriver(t, newFake(), Options{Width: 80, Height: 24})
	d.openRun("r-7")
	d.waitText("DESTROYS 2")
	d.send(teaWindowSize(120, 40))
	if d.root().list.width != 120 || d.root().detail.width != 120 {
		t.Fatal("a screen missed the resize")
	}
	if lines := strings.Count(d.view(), "\n") + 1; lines != 40 {
		t.Fatalf("view has %d lines at height 40", lines)
	}
}

func TestCancelConfirmedCallsCancel(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5") // running
	d.waitText("c cancel run")
	d.press("c")
	d.waitText("Cancel run r-5? a running tool gets an interrupt first")
	if len(f.cancelled) != 0 {
		t.Fatal("Cancel called before confirmation")
	}
	f.mu.Lock()
	r := f.details["r-5"]
	r.Status = "cancelled"
	f.details["r-5"] = r
	f.mu.Unlock()
	d.press("y")
	d.waitText("cancel sent: run r-5 stops")
	if want := []string{"r-5"}; !reflect.DeepEqual(f.cancelled, want) {
		t.Fatalf("cancelled %v, want %v", f.cancelled, want)
	}
	// The refreshed run has ended: the key is no longer offered.
	d.waitText("status: cancelled")
	if strings.Contains(d.view(), "c cancel run") {
		t.Fatalf("cancel still offered for an ended run:\n%s", d.view())
	}
}

func TestCancelKeptDoesNothing(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5")
	d.waitText("c cancel run")
	d.press("c")
	d.waitText("Cancel run r-5?")
	d.press("n")
	d.waitText("run r-5 kept")
	d.press("c")
	d.waitText("Cancel run r-5?")
	d.press("esc")
	d.waitText("run r-5 kept")
	d.settle()
	if len(f.cancelled) != 0 {
		t.Fatalf("cancelled %v after keeping the run", f.cancelled)
	}
	if d.root().active != screenDetail {
		t.Fatal("esc in the confirmation left the run detail")
	}
}

func TestCancelRefusedShowsError(t *testing.T) {
	f := newFake()
	f.cancelErr = errors.New("bob may cancel only runs they asked for; run r-5 was asked for by schedule")
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5")
	d.waitText("c cancel run")
	d.press("c", "y")
	d.waitText("! cancel refused: bob may cancel only runs they asked for")
}

func TestCancelOnlyForUnfinishedRuns(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-6") // succeeded
	d.waitText("status: succeeded")
	if strings.Contains(d.view(), "cancel run") {
		t.Fatalf("cancel offered for a finished run:\n%s", d.view())
	}
	d.press("c")
	d.waitText("! run r-6 succeeded: only a queued, running or held run can be cancelled")
	d.press("y")
	d.settle()
	if len(f.cancelled) != 0 {
		t.Fatalf("cancelled %v", f.cancelled)
	}
}

func TestCancelConfirmationDroppedWhenRunEnds(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{Width: 80, Height: 24})
	d.openRun("r-5")
	d.waitText("c cancel run")
	d.press("c")
	d.waitText("Cancel run r-5?")
	f.mu.Lock()
	r := f.details["r-5"]
	r.Status = "succeeded"
	f.details["r-5"] = r
	f.mu.Unlock()
	f.tick()
	d.waitText("! run r-5 ended while you were confirming (succeeded)")
	d.press("y")
	d.settle()
	if len(f.cancelled) != 0 {
		t.Fatalf("cancelled %v after the run ended", f.cancelled)
	}
}
