package tui

import (
	"strings"
	"testing"
)

// TestAKeyOnAFinishedRunSaysWhatBecameOfIt presses approve, cancel and
// rerun on runs that ended and checks the line that says why they do
// nothing: "run r-7 succeeded", "was cancelled", never "is succeeded";
// and the header of a run that ended while held says it "ended
// (cancelled)", not "ended cancelled".
func TestAKeyOnAFinishedRunSaysWhatBecameOfIt(t *testing.T) {
	cases := []struct {
		status, key, want string
	}{
		{"succeeded", "a", "run r-7 succeeded: only a held proposal is approved or rejected"},
		{"succeeded", "c", "run r-7 succeeded: only a queued, running or held run can be cancelled"},
		{"succeeded", "R", "run r-7 succeeded: only a stale, failed, rejected"},
		{"cancelled", "a", "run r-7 was cancelled: only a held proposal"},
		{"refused", "c", "run r-7 was refused: only a queued"},
		{"failed", "a", "run r-7 failed: only a held proposal"},
		{"running", "R", "run r-7 is running: only a stale"},
		{"cancelled", "", "ended (cancelled) before every rule was released"},
	}
	for _, c := range cases {
		f := newFake()
		f.editRun("r-7", func(r *RunDetail) { r.Status, r.WaitingForMe = c.status, false })
		m := consoleOn(f, "r-7", 80, 24)
		if c.key != "" {
			pressAndDraw(m, c.key)
		}
		if s := screenOf(m); !strings.Contains(s, c.want) {
			t.Errorf("%s on a run that %s: want %q on the screen:\n%s", c.key, c.status, c.want, s)
		}
	}
}

// TestEveryStatusReadsAsASentence checks the words a sentence gives each
// status after its run: "is" only before a status a run stands in (queued,
// running, awaiting approval, stale), what became of it otherwise.
func TestEveryStatusReadsAsASentence(t *testing.T) {
	want := map[string]string{
		"queued": "is queued", "running": "is running", "awaiting_approval": "is awaiting approval",
		"succeeded": "succeeded", "failed": "failed", "cancelled": "was cancelled", "interrupted": "was interrupted",
		"refused": "was refused", "stale": "is stale", "rejected": "was rejected", "loading": "is loading",
	}
	for s, w := range want {
		if got := statusSaid(s); got != w {
			t.Errorf("statusSaid(%q) = %q, want %q", s, got, w)
		}
	}
}
