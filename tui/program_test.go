package tui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgramApproveEndToEnd runs the console in a real tea.Program (as the
// SSH server does, one per session) and approves the held apply with keys.
func TestProgramApproveEndToEnd(t *testing.T) {
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

	teatest.WaitFor(t, out, seen("r-4"), wait)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, out, seen("DESTROYS"), wait)
	tm.Send(tea.KeyPressMsg{Code: 'a', Text: "a"})
	teatest.WaitFor(t, out, seen("Release"), wait)
	tm.Send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	teatest.WaitFor(t, out, seen("released"), wait)
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.approved) != 1 || f.approved[0] != (approval{"r-7", heldDigest}) {
		t.Fatalf("approved %+v, want r-7 with %s", f.approved, heldDigest)
	}
	final := tm.FinalModel(t).(*model)
	if final.ctx.Err() == nil {
		t.Fatal("quitting left the session's subscriptions running")
	}
}
