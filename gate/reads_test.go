package gate

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestPolicyPlanReads(t *testing.T) {
	cases := []struct {
		name, body string
		all        bool
		keys       []string
	}{
		{"one key", `deny contains "x" if { some rc in input.plan.resource_changes; rc.type == "a" }`, false, []string{"resource_changes"}},
		{"two keys", `deny contains "x" if { input.plan.format_version == "1.2"; input.plan.prior_state.values }`, false, []string{"format_version", "prior_state"}},
		{"bracket key", `deny contains "x" if input["plan"]["variables"].n.value > 1`, false, []string{"variables"}},
		{"summary only", `deny contains "x" if input.summary.destroy > 0`, false, nil},
		{"run only", `deny contains "x" if input.run.requester_kind == "agent"`, false, nil},
		{"whole plan", `p := input.plan
deny contains "x" if p.errored`, true, nil},
		{"plan by variable key", `deny contains k if { some k; input.plan[k] }`, true, nil},
		{"plan iterated", `deny contains k if { some k, _ in input.plan }`, true, nil},
		{"input by variable", `deny contains k if { some k; input[k] }`, true, nil},
		{"input passed whole", `deny contains "x" if { walk(input, [_, v]); v == "secret" }`, true, nil},
		{"input as argument", `f(x) := x.plan.errored
deny contains "x" if f(input)`, true, nil},
		{"object.get on plan", `deny contains "x" if object.get(input.plan, "errored", false)`, true, nil},
		{"nested ref inside", `deny contains "x" if { some rc in input.plan.resource_changes; rc.type == input.plan.variables.t.value }`, false, []string{"resource_changes", "variables"}},
	}
	for _, c := range cases {
		p, err := CompilePolicy(context.Background(), "reads.rego", []byte("package switchtender.plan\n\n"+c.body+"\n"))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := slices.Sorted(maps.Keys(p.reads.keys))
		if p.reads.all != c.all || (!c.all && !reflect.DeepEqual(got, c.keys) && !(len(got) == 0 && len(c.keys) == 0)) {
			t.Errorf("%s: reads all=%v keys=%v, want all=%v keys=%v", c.name, p.reads.all, got, c.all, c.keys)
		}
	}
}

// The pruned input Decide builds gives every test policy the same result as
// the whole plan does.
func TestPrunedInputSameResult(t *testing.T) {
	pl := plans(t)
	for _, file := range []string{"limit_destroys.rego", "summary_and_run.rego"} {
		p := compileFile(t, file)
		if p.reads.all {
			t.Errorf("%s: reads the whole plan; the pruning is not exercised", file)
		}
		for i, doc := range [][]byte{pl.shrink, pl.replace, pl.protect, pl.forget, pl.noChange} {
			sum, err := AnalyzePlan(doc)
			if err != nil {
				t.Fatal(err)
			}
			full, err := NewPolicyInput(doc, sum, personRun)
			if err != nil {
				t.Fatal(err)
			}
			pruned, err := newPolicyInput(doc, sum, personRun, p.reads)
			if err != nil {
				t.Fatal(err)
			}
			a, err1 := p.EvaluateValue(context.Background(), full, 10*time.Second)
			b, err2 := p.EvaluateValue(context.Background(), pruned, 10*time.Second)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("%s on plan %d: full %+v (%v), pruned %+v (%v)", file, i, a, err1, b, err2)
			}
		}
	}
}

func TestPrunedInputStillChecksSkippedParts(t *testing.T) {
	doc := []byte(`{"format_version":"1.2","resource_changes":[],"prior_state":{"values":[1,}}`)
	reads := planReads{keys: map[string]bool{"resource_changes": true}}
	if _, err := newPolicyInput(doc, &Summary{}, personRun, reads); err == nil {
		t.Error("malformed JSON in a part the policy does not read was accepted")
	}
}
