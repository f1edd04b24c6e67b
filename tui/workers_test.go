package tui

import "testing"

// The run detail names the relay workers that took a run's phases; a run
// the control node executed names none, and a name cannot bring control
// characters onto the screen: they show as escapes.
func TestWorkersLine(t *testing.T) {
	cases := []struct {
		planned, applied, want string
	}{
		{"", "", ""},
		{"w1", "w1", "relay worker: w1"},
		{"w1", "", "relay worker: w1 (plan)"},
		{"", "w2", "relay worker: w2 (apply)"},
		{"w1", "w2", "relay workers: w1 (plan), w2 (apply)"},
		{"w1\x1b[2J", "", `relay worker: w1\x1b[2J (plan)`},
	}
	for _, c := range cases {
		if got := workersLine(&RunDetail{PlannedBy: c.planned, AppliedBy: c.applied}); got != c.want {
			t.Errorf("planned %q applied %q: %q, want %q", c.planned, c.applied, got, c.want)
		}
	}
}
