package gate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchtender/switchtender/screentext"
)

// TestPolicyMessageWithPlanValuesReadsAsItsValue guards a plan_gate hold
// message that quotes plan values: it once kept the values raw, and every
// screen showed it through screentext.Sentence, which leaves backslashes as
// they are, so an input holding a real U+202E and one holding the six
// characters `\u{202e}` gave the approver the same hold reason. The gate
// now escapes a policy's message as one value (screentext.Field).
func TestPolicyMessageWithPlanValuesReadsAsItsValue(t *testing.T) {
	bin := tofuBinary(t)
	dir := t.TempDir()
	cfg := "resource \"terraform_data\" \"a\" {\n  input = \"ok\\u202erelease\"\n}\n" +
		"resource \"terraform_data\" \"b\" {\n  input = \"ok\\\\u{202e}release\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-input=false", "-no-color"}, {"plan", "-input=false", "-no-color", "-out=p.tfplan"}} {
		if _, err := runTofu(bin, dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	planJSON, err := runTofu(bin, dir, "show", "-json", "-no-color", "p.tfplan")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := AnalyzePlan(planJSON)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPolicy(t, `package switchtender.plan

hold contains msg if {
	some rc in input.plan.resource_changes
	msg := sprintf("%s sets input %s", [rc.address, rc.change.after.input])
}
`)
	d := Decide(context.Background(), Request{Template: "t", Project: "p", Kind: KindApply, Requester: "alice"},
		planJSON, sum, []*Rule{{Name: "policy", Policy: p}}, 10*time.Second)
	shown := map[string]string{}
	for _, h := range d.Holds {
		shown[h.Reason[:len("terraform_data.a")]] = screentext.Sentence(h.Reason)
	}
	a, b := shown["terraform_data.a"], shown["terraform_data.b"]
	if a == "" || b == "" {
		t.Fatalf("holds %+v: want one for each resource", d.Holds)
	}
	a, b = a[len("terraform_data.a"):], b[len("terraform_data.b"):]
	if a == b {
		t.Errorf("two different inputs show the same hold reason %q", a)
	}
}
