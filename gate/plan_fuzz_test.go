package gate

import (
	"context"
	"testing"
	"time"
)

// FuzzPlanReaders: no plan or state document panics the readers the gate
// and the masker use, and a plan the gate cannot read is held, never passed
// (the gate fails closed).
func FuzzPlanReaders(f *testing.F) {
	for _, s := range []string{
		`{"format_version":"1.2","resource_changes":[]}`,
		`{"format_version":"1.2","resource_changes":[{"address":"a.b","mode":"managed","type":"a","change":{"actions":["delete","create"]}}]}`,
		`{"format_version":"1.2","resource_changes":[{"change":{"actions":["forget"],"before_sensitive":true,"before":"x"}}]}`,
		`{"format_version":"9"}`, `[`, `{"resources":[{"instances":[{"attributes":{"a":1},"sensitive_attributes":[[{"type":"index","value":{"value":"k"}}]]}]}]}`,
	} {
		f.Add([]byte(s))
	}
	rules := []*Rule{{Name: "r", MaxDestroy: new(int)}}
	f.Fuzz(func(t *testing.T, doc []byte) {
		sum, err := AnalyzePlan(doc)
		d := Decide(context.Background(), Request{Template: "t", Kind: KindApply, Requester: "a"}, doc, sum, rules, time.Second)
		if err != nil && d.Outcome == Pass {
			t.Fatalf("an unreadable plan passed: %v", err)
		}
		_, _ = SensitiveValues(doc)
		_, _ = StateSensitiveValues(doc)
		_ = ValueStrings(string(doc))
	})
}
