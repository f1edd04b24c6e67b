package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/store"
)

// The console's assists over a real SSH connection with an 80x24 terminal:
// "? help • q quit" stays on the help line, w opens the run waiting for
// you, m shows its message whole, ? lists the keys, the held screen shows
// the variables, and a on your own run says why it cannot act.
func TestConsoleAssistsAt80x24OverSSH(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+`
rule "no-destroys" {
  templates   = ["data"]
  max_destroy = 0
  approvers   = ["bob"]
}
`)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.ssh("alice", "launch", "data", "--var", "instances=1", "--wait")
	h.waitStatus("2", store.StatusAwaitingApproval)
	msg := h.show("bob", "2").Message

	bob := openConsole(h, "bob", 80, 24)
	s := bob.WaitFor(30*time.Second, "signed in as bob (approve)", "▶ YOU")
	if !strings.Contains(lastScreenLine(s), "? help • q quit") {
		t.Errorf("the list's help line at 80 columns: %q", lastScreenLine(s))
	}
	bob.Keys("w")
	s = bob.WaitFor(10*time.Second, "Run 2 · data · apply", "DESTROYS 2")
	if !strings.Contains(lastScreenLine(s), "q quit") {
		t.Errorf("the held screen's help line at 80 columns: %q", lastScreenLine(s))
	}
	bob.Keys("m")
	s = bob.WaitFor(10*time.Second, "Run 2: message", "any key closes")
	if got, want := strings.Join(strings.Fields(s), " "), strings.Join(strings.Fields(msg), " "); !strings.Contains(got, want) {
		t.Errorf("m does not show the message whole:\n%s\nwant %q", s, msg)
	}
	bob.Keys("\x1b", "?")
	bob.WaitFor(10*time.Second, "Keys on this screen", "next waiting", "read the message whole")
	bob.Keys("\x1b")
	for i := 0; !strings.Contains(bob.Screen(), "instances = 1"); i++ {
		if i == 4 {
			t.Fatalf("the held screen never showed its variables:\n%s", bob.Screen())
		}
		bob.Keys("f") // a page down the proposal pane
	}

	alice := openConsole(h, "alice", 80, 24)
	alice.WaitFor(30*time.Second, "signed in as alice")
	alice.Keys("\r")
	alice.WaitFor(10*time.Second, "Run 2 · data · apply")
	alice.Keys("a")
	alice.WaitFor(10*time.Second, "you asked for this run")
}

// lastScreenLine is the last non-blank line of a screen.
func lastScreenLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
