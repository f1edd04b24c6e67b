package server

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/store"
)

// A reconcile's holds are the check's and its own, each rule released by
// the approvers both decisions allow; the check requester's agent hold is
// not carried, and a rule whose approvers share no one is an error rather
// than a hold anyone (or either) could release.
func TestReconcileHoldsAreReleasedByTheApproversBothDecisionsAllow(t *testing.T) {
	hold := func(rule, reason string, approvers ...string) store.Hold {
		return store.Hold{Rule: rule, Reason: reason, Approvers: approvers}
	}
	cases := []struct {
		name       string
		floor, now []store.Hold
		want       string // rule=approvers;… in order, or the error's text
	}{
		{"floor only", []store.Hold{hold("r", "destroys", "alice")}, nil, "r=alice"},
		{"anyone now", []store.Hold{hold("r", "destroys", "alice")}, []store.Hold{hold("r", "destroys")}, "r=alice"},
		{"anyone at the check", []store.Hold{hold("r", "destroys")}, []store.Hold{hold("r", "destroys", "bob")}, "r=bob"},
		{"widened", []store.Hold{hold("r", "destroys", "alice")}, []store.Hold{hold("r", "destroys", "alice", "bob")}, "r=alice"},
		{"two reasons", []store.Hold{hold("r", "destroys", "alice", "bob")}, []store.Hold{hold("r", "policy hold", "bob")}, "r=bob;r=bob"},
		{"agent not carried", []store.Hold{hold("agent", "deploy-bot asked"), hold("r", "x", "alice")}, nil, "r=alice"},
		{"disjoint", []store.Hold{hold("r", "destroys", "alice")}, []store.Hold{hold("r", "destroys", "bob")}, "held the check's plan for alice and holds the reconcile for bob"},
	}
	for _, c := range cases {
		got, err := carryForward(c.floor, c.now)
		var parts []string
		for _, h := range got {
			parts = append(parts, h.Rule+"="+strings.Join(h.Approvers, ","))
		}
		s := strings.Join(parts, ";")
		if err != nil {
			s = err.Error()
		}
		if !strings.Contains(s, c.want) || err == nil && s != c.want {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
	}
}
