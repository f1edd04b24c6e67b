package tui

import (
	"strings"
	"testing"
)

// TestTheChangeViewKeepsHoldsFindingsAndStaleness checks that the pane
// on the change view still says what the pane said before it: why a
// stale plan can never apply and which newer proposal exists (above the
// view), the rules that hold it and whom they wait for, the variables
// and the scan's findings (below it).
func TestTheChangeViewKeepsHoldsFindingsAndStaleness(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	f.editRun("r-7", func(r *RunDetail) {
		r.Proposal.Stale, r.Proposal.NewerRun = true, "r-9"
		r.Proposal.StaleReason = "the state changed after this plan was made, so it can never apply"
		r.Vars = map[string]string{"region": "eu-west-1", "token": "(sensitive)"}
	})
	m := consoleOn(f, "r-7", 80, 24)
	pressAndDraw(m, "G")
	cp := m.detail.changes
	var all []string
	for r := 0; r < cp.totalRows(); r++ {
		all = append(all, strings.TrimRight(stripANSI(cp.row(r)), " "))
	}
	text := strings.Join(all, "\n")
	order := []string{
		"STALE: this plan can never apply", "the state changed after this plan was made", "a newer proposal exists: run r-9",
		"Destroys 2", "Outputs (1)",
		"Why it is held", "• few-destroys: the plan destroys 2, max_destroy is 0", "• agents: an agent's apply waits for a person",
		"Variables", "region = eu-west-1", "token = (sensitive)",
		"Scan findings (1)", "! module.network.data.external.lookup", "external data source: runs a program",
	}
	last := -1
	for _, want := range order {
		i := strings.Index(text, want)
		if i <= last {
			t.Fatalf("%q is missing or out of order:\n%s", want, text)
		}
		last = i
	}
}

// TestARefreshKeepsTheCursorUnfoldedItemsAndFilter checks that a refresh
// of the run (a hold released meanwhile) keeps the view as the approver
// left it, and shows the refresh's news; a new proposal opens afresh.
func TestARefreshKeepsTheCursorUnfoldedItemsAndFilter(t *testing.T) {
	f := newFake()
	withChanges(f, everySection(t))
	m := consoleOn(f, "r-7", 80, 24)
	d := m.detail
	for _, k := range []string{"enter", "/", "w", "e", "b", "enter"} { // the pane opens on the replace
		pressAndDraw(m, k)
	}
	before := paneText(m)
	if !strings.Contains(before, "> ▾ -/+ aws_instance.web") {
		t.Fatalf("the filter web does not keep the unfolded replace under the cursor:\n%s", before)
	}
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.Holds[0].ReleasedBy = "carol" })
	d.Update(detailRunMsg{gen: d.gen, d: f.details["r-7"]})
	if got := paneText(m); got != before || d.changes.filter != "web" {
		t.Fatalf("a refresh changed the view:\n%s\n--- was\n%s", got, before)
	}
	pressAndDraw(m, "G")
	if !strings.Contains(paneText(m), "released by carol") {
		t.Fatalf("the refresh's release is not shown:\n%s", paneText(m))
	}
	f.editRun("r-7", func(r *RunDetail) { r.Proposal.Digest = "sha256:" + strings.Repeat("ab", 32) })
	d.Update(detailRunMsg{gen: d.gen, d: f.details["r-7"]})
	if p := paneText(m); d.changes.filter != "" || !strings.HasPrefix(p, "  Destroys 2") || !strings.Contains(p, "> ▸ -/+ aws_instance.web") || strings.Contains(p, "▾") {
		t.Fatalf("a new proposal does not open afresh:\n%s", p)
	}
}

// TestHostileAddressesNeverReachTheConsoleRaw gives the change view
// addresses and values with ESC sequences, CR, newlines and bidirectional
// overrides, unfolds everything and checks that the screen, at every
// scroll position, holds none of them raw and shows their escapes.
func TestHostileAddressesNeverReachTheConsoleRaw(t *testing.T) {
	cs := everySection(t)
	cs.Resources[0].Address = "aws_instance.web[\"\x1b]52;c;ZXZpbA==\x07\"]"
	cs.Resources[1].Address = "aws_s3_bucket.logs[\"a\rb\nc\u202egnp.exe\"]"
	cs.Resources[4].Attributes[3].JSON.Changes[0].After = "\"\x1b[2J\x1b[H\u2066x\u2069\""
	cs.Outputs[0].Name = "endpoint\u009b31m"
	f := newFake()
	withChanges(f, cs)
	m := consoleOn(f, "r-7", 80, 24)
	pressAndDraw(m, "e")
	var seen strings.Builder
	for range 40 {
		raw := m.View().Content
		for _, bad := range []string{"\x1b]", "\x1b[2J", "\x07", "\r", "\u202e", "\u2066", "\u009b"} {
			if strings.Contains(raw, bad) {
				t.Fatalf("%q reached the screen raw:\n%q", bad, raw)
			}
		}
		seen.WriteString(stripANSI(raw))
		pressAndDraw(m, "pgdown")
	}
	for _, want := range []string{`\x1b]52;c;ZXZpbA==\x07`, `a\rb\nc\u{202e}gnp.exe`, `\x1b[2J\x1b[H\u{2066}x\u{2069}`, `endpoint\u{009b}31m`} {
		if !strings.Contains(seen.String(), want) {
			t.Errorf("the escape %q is not on the screen", want)
		}
	}
}
