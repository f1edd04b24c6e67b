package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Each kind a rule names covers runs of that kind, and "apply" covers a
// reconcile too (it applies a check's plan). It once mapped a check to
// "plan" before planning and to "apply" at its decision, so a rule with
// kinds = ["check"] never matched a check.
func TestKindsCoverTheKindsTheyName(t *testing.T) {
	cases := []struct {
		kinds []string
		kind  string
		want  bool
	}{
		{nil, KindCheck, true},
		{[]string{KindCheck}, KindCheck, true},
		{[]string{KindCheck}, KindDryRun, false},
		{[]string{KindCheck}, KindApply, false},
		{[]string{KindCheck}, KindReconcile, false},
		{[]string{KindDryRun}, KindCheck, false},
		{[]string{KindDryRun}, KindDryRun, true},
		{[]string{KindApply}, KindCheck, false},
		{[]string{KindApply}, KindReconcile, true},
		{[]string{KindApply}, KindApply, true},
		{[]string{KindReconcile}, KindReconcile, true},
		{[]string{KindReconcile}, KindApply, false},
	}
	for _, c := range cases {
		r := &Rule{Kinds: c.kinds, RequireApproval: true}
		req := Request{Template: "t", Kind: c.kind, Requester: "alice"}
		if got := r.Covers(req); got != c.want {
			t.Errorf("kinds %v cover a %s: %v, want %v", c.kinds, c.kind, got, c.want)
		}
		if got := r.WouldHold(req); got != c.want {
			t.Errorf("kinds %v hold a %s: %v, want %v", c.kinds, c.kind, got, c.want)
		}
	}
}

// A rule that cannot weigh a plan holds an apply but refuses a reconcile:
// a refusal is never turned into a hold, and a reconcile is never released
// past a rule that could not read its plan. It once held the reconcile, and
// one approver released a plan a plan_gate would have denied.
func TestDecideRefusesAReconcileARuleCannotWeigh(t *testing.T) {
	evalError := mustPolicy(t, "package switchtender.plan\n\ndeny contains msg if { msg := sprintf(\"%d\", [to_number(\"x\")]) }\n")
	denyAll := mustPolicy(t, "package switchtender.plan\n\ndeny contains \"no deletes\" if true\n")
	cases := []struct {
		name string
		plan []byte
		rule *Rule
	}{
		{"policy errors", handPlan(1), &Rule{Name: "p", Policy: evalError, Approvers: []string{"alice"}}},
		{"policy does not compile", handPlan(1), &Rule{Name: "p", PolicyErr: errors.New("rego_parse_error")}},
		{"policy cannot read the plan", []byte("{not json"), &Rule{Name: "p", Policy: denyAll}},
		{"max_destroy cannot read the plan", []byte("{not json"), &Rule{Name: "p", MaxDestroy: intp(0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apply := Request{Template: "t", Kind: KindApply, Requester: "alice"}
			if d := Decide(context.Background(), apply, c.plan, nil, []*Rule{c.rule}, time.Second); d.Outcome != Hold {
				t.Errorf("apply: %v %+v, want a hold", d.Outcome, d)
			}
			rec := apply
			rec.Kind = KindReconcile
			d := Decide(context.Background(), rec, c.plan, nil, []*Rule{c.rule}, time.Second)
			if d.Outcome != Refuse || len(d.Refusals) == 0 {
				t.Fatalf("reconcile: %v %+v, want a refusal", d.Outcome, d)
			}
			for _, h := range d.Holds {
				if h.Rule == c.rule.Name {
					t.Errorf("reconcile: rule %s also holds: %+v", h.Rule, h)
				}
			}
			if why := d.Refusals[len(d.Refusals)-1].Reason; !strings.Contains(why, "reconcile") || strings.Contains(why, "holds the apply") {
				t.Errorf("reconcile refusal says %q", why)
			}
		})
	}
}
