package forge

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// TestACommitStatusSaysWhereTheRunStands checks StatusOf for every
// status of a plan and of an apply: its state and its description.
func TestACommitStatusSaysWhereTheRunStands(t *testing.T) {
	plan, apply := PlanContext("network"), ApplyContext("network")
	finding := store.Finding{Address: "data.external.x", File: "main.tf", Line: 3, Reason: "runs a program"}
	for _, c := range []struct {
		rr      RunReport
		context string
		state   State
		desc    string
	}{
		{RunReport{Status: store.StatusQueued}, plan, StatePending, "queued"},
		{RunReport{Status: store.StatusRunning}, plan, StatePending, "running"},
		{RunReport{Status: store.StatusSucceeded, Add: 2}, plan, StateSuccess, "planned: 2 to add, 0 to change, 0 to destroy"},
		{RunReport{Status: store.StatusSucceeded, Add: 1, Replace: 1, Destroy: 1, Forget: 1}, plan, StateSuccess,
			"planned: 2 to add, 0 to change, 1 to destroy (1 replaced, 1 to forget)"},
		{RunReport{Status: store.StatusRefused, Findings: []store.Finding{finding}}, plan, StateFailure,
			"refused: the configuration scan found data.external.x"},
		{RunReport{Status: store.StatusRefused, Findings: []store.Finding{finding, finding, finding}}, plan, StateFailure,
			"refused: the configuration scan found data.external.x and 2 more"},
		{RunReport{Status: store.StatusRefused, Message: "the rules refuse this plan (rule limit_destroys)"}, apply, StateFailure,
			"refused: the rules refuse this plan (rule limit_destroys)"},
		{RunReport{Status: store.StatusFailed, Message: "\n  init failed: exit status 1\nError: more"}, plan, StateFailure, "failed: init failed: exit status 1"},
		{RunReport{Status: store.StatusFailed}, plan, StateFailure, "failed"},
		{RunReport{Status: store.StatusCancelled}, plan, StateFailure, "cancelled"},
		{RunReport{Status: store.StatusInterrupted}, apply, StateFailure, "interrupted"},
		{RunReport{Status: store.StatusSucceeded, SupersededBy: "abc1234def5678abc1234def5678abc1234def56"}, plan, StateSuperseded, "superseded by abc1234"},
		{RunReport{Status: store.StatusCancelled, SupersededBy: "abc1234def5678abc1234def5678abc1234def56"}, plan, StateSuperseded, "superseded by abc1234"},
		{RunReport{Status: store.StatusAwaitingApproval, RunID: "21", Digest: digestB}, apply, StatePending,
			"awaiting approval: approve 21 --digest " + digestB + " over SSH"},
		{RunReport{Status: store.StatusAwaitingApproval, RunID: "21"}, apply, StatePending, "awaiting approval"},
		{RunReport{Status: store.StatusSucceeded, ApprovedBy: "alice"}, apply, StateSuccess, "applied, approved by alice"},
		{RunReport{Status: store.StatusSucceeded}, apply, StateSuccess, "applied"},
		{RunReport{Status: store.StatusRejected, RejectedBy: "bob"}, apply, StateFailure, "rejected by bob"},
		{RunReport{Status: store.StatusRejected}, apply, StateFailure, "rejected"},
		{RunReport{Status: store.StatusStale, Stale: true, StaleReason: "the state changed after the plan"}, apply, StateFailure,
			"stale: the state changed after the plan"},
		{RunReport{Status: store.Status("paused")}, plan, StateFailure, "status paused"},
	} {
		st := StatusOf(c.rr, c.context)
		if st.Context != c.context || st.State != c.state || st.Description != c.desc {
			t.Errorf("StatusOf(%+v, %s) = %s %q %q, want %s %q", c.rr, c.context, st.Context, st.State, st.Description, c.state, c.desc)
		}
	}
}

// partialEscape matches text that ends inside an escape: a backslash and
// the start of \xNN or \u{N…}, or half of a doubled backslash.
var partialEscape = regexp.MustCompile(`(\\x[0-9a-f]?|\\u(\{[0-9a-f]*)?|(^|[^\\])(\\\\)*\\)$`)

// TestAStatusDescriptionIsShortAndShowsNoHiddenCharacter checks every
// description with hostile and very long values: at most MaxDescription
// bytes, valid UTF-8, no hidden character raw, a cut value ended by "…"
// and never cut inside an escape.
func TestAStatusDescriptionIsShortAndShowsNoHiddenCharacter(t *testing.T) {
	long := strings.Repeat("\u202e字\x1b", 100)
	for _, v := range []string{hostile, long, strings.Repeat("a", 500), strings.Repeat("\\", 300)} {
		for _, rr := range []RunReport{
			{Status: store.StatusFailed, Message: v}, {Status: store.StatusRefused, Findings: []store.Finding{{Address: v}}},
			{Status: store.StatusStale, StaleReason: v}, {Status: store.StatusRejected, RejectedBy: v},
			{Status: store.StatusSucceeded, ApprovedBy: v}, {Status: store.StatusAwaitingApproval, RunID: v, Digest: v},
			{Status: store.StatusAwaitingApproval, RunID: "7", Digest: v}, {Status: store.Status(v)}, {SupersededBy: v},
		} {
			d := StatusOf(rr, ApplyContext("x")).Description
			if len(d) > MaxDescription || !utf8.ValidString(d) {
				t.Fatalf("%q: %d bytes, valid UTF-8 %v", d, len(d), utf8.ValidString(d))
			}
			for _, r := range d {
				if screentext.Hidden(r) {
					t.Fatalf("%q holds the hidden %U raw", d, r)
				}
			}
			if head, cut := strings.CutSuffix(d, ellipsis); cut && partialEscape.MatchString(head) {
				t.Fatalf("%q is cut inside an escape", d)
			}
		}
	}
}

// TestStatusContextsNameTheTemplate checks the two contexts.
func TestStatusContextsNameTheTemplate(t *testing.T) {
	if got := PlanContext("network.eu-1"); got != "switchtender/plan/network.eu-1" {
		t.Errorf("PlanContext = %q", got)
	}
	if got := ApplyContext("network.eu-1"); got != "switchtender/apply/network.eu-1" {
		t.Errorf("ApplyContext = %q", got)
	}
	if got := PlanContext("a\x1bb"); got != `switchtender/plan/a\x1bb` {
		t.Errorf("a name with a control character: %q", got)
	}
}
