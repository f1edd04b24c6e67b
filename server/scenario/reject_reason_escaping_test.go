package scenario

import (
	"strings"
	"testing"
)

// TestRejectReasonReadsAsItWasTyped guards a rejection's reason, a value a
// person typed: it once went raw into the run's message and the audit
// entry, which every screen shows through screentext.Sentence (backslashes
// kept), so a reason holding a real U+202E and one holding the characters
// `\u{202e}` read the same in `show` and `audit`. The reason is now escaped
// as one value (screentext.Field) where it is put in those sentences.
func TestRejectReasonReadsAsItWasTyped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, dataTemplates+approveAllData)
	h.mustSSH("alice", "launch", "data", "--wait")
	h.mustSSH("alice", "launch", "data", "--wait")
	h.mustSSH("bob", "reject", "1", "--reason", "ok\u202eon")
	h.mustSSH("bob", "reject", "2", "--reason", `ok\u{202e}on`)
	msg := func(id string) string {
		for _, l := range strings.Split(h.mustSSH("alice", "show", id), "\n") {
			if strings.Contains(l, "Rejected by") {
				return l
			}
		}
		t.Fatalf("show %s has no rejection line", id)
		return ""
	}
	if a, b := msg("1"), msg("2"); a == b {
		t.Errorf("two different reasons show the same message %q", a)
	}
	var details []string
	for _, l := range strings.Split(h.mustSSH("alice", "audit"), "\n") {
		if strings.Contains(l, "reject") && strings.Contains(l, "ok") {
			details = append(details, l[strings.Index(l, "ok"):])
		}
	}
	if len(details) != 2 || details[0] == details[1] {
		t.Errorf("audit rejection details %q: want two that differ", details)
	}
}
