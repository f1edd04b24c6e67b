package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
)

func compileFile(t *testing.T, name string) *Policy {
	t.Helper()
	p, err := compileFileErr(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func compileFileErr(name string) (*Policy, error) {
	path := filepath.Join("testdata", name)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return CompilePolicy(context.Background(), path, src)
}

func evalOn(t *testing.T, p *Policy, planJSON []byte, run RunInfo) PolicyResult {
	t.Helper()
	sum, err := AnalyzePlan(planJSON)
	if err != nil {
		t.Fatal(err)
	}
	in, err := NewPolicyInput(planJSON, sum, run)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.EvaluateValue(context.Background(), in, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var personRun = RunInfo{Template: "network", Project: "infra", Kind: KindApply, Requester: "alice", RequesterKind: "person"}

func TestLimitDestroysPolicyOnRealPlans(t *testing.T) {
	p := compileFile(t, "limit_destroys.rego")
	pl := plans(t)
	cases := []struct {
		name       string
		plan       []byte
		deny, hold []string
	}{
		{"two deletes are within the limit", pl.shrink, nil, nil},
		{"three replaces exceed the limit", pl.replace,
			[]string{"plan destroys 3 terraform_data resources; at most 2 may be destroyed"}, nil},
		{"deleting a protected resource holds", pl.protect,
			nil, []string{"plan destroys protected resource terraform_data.protected[0]"}},
		{"forgetting a protected resource is no destroy", pl.forget, nil, nil},
		{"no change", pl.noChange, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := evalOn(t, p, c.plan, personRun)
			if !slices.Equal(res.Deny, c.deny) || !slices.Equal(res.Hold, c.hold) {
				t.Errorf("deny %q hold %q, want deny %q hold %q", res.Deny, res.Hold, c.deny, c.hold)
			}
		})
	}
}

func TestSummaryAndRunPolicy(t *testing.T) {
	p := compileFile(t, "summary_and_run.rego")
	pl := plans(t)
	agent := personRun
	agent.Requester, agent.RequesterKind = "deploy-bot", "agent"

	if res := evalOn(t, p, pl.replace, agent); !slices.Equal(res.Deny, []string{"agent deploy-bot may not replace resources (3 planned)"}) {
		t.Errorf("agent replace: deny %q", res.Deny)
	}
	if res := evalOn(t, p, pl.replace, personRun); len(res.Deny)+len(res.Hold) != 0 {
		t.Errorf("person replace: %+v, want nothing", res)
	}
	if res := evalOn(t, p, pl.forget, personRun); !slices.Equal(res.Hold, []string{"plan forgets terraform_data.protected[0]"}) {
		t.Errorf("forget: hold %q", res.Hold)
	}
}

func TestEvaluateMapInput(t *testing.T) {
	p := compileFile(t, "limit_destroys.rego")
	input := map[string]any{
		"plan": map[string]any{"resource_changes": []any{
			map[string]any{"address": "aws_db_instance.main", "type": "aws_db_instance",
				"change": map[string]any{"actions": []any{"delete", "create"}}},
		}},
		"summary": map[string]any{"destroy": 1},
		"run":     map[string]any{"kind": "apply"},
	}
	res, err := p.Evaluate(context.Background(), input, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"plan destroys 1 aws_db_instance resources; at most 0 may be destroyed"}; !slices.Equal(res.Deny, want) {
		t.Errorf("deny %q, want %q", res.Deny, want)
	}
}

func TestCompilePolicyRefuses(t *testing.T) {
	cases := []struct {
		file string
		want []string // substrings of the error
	}{
		{"http_send.rego", []string{"testdata/http_send.rego:5", "http.send"}},
		{"opa_runtime.rego", []string{"testdata/opa_runtime.rego:5", "opa.runtime"}},
		{"syntax_error.rego", []string{"testdata/syntax_error.rego:", "rego_parse_error"}},
	}
	for _, c := range cases {
		_, err := compileFileErr(c.file)
		if err == nil {
			t.Errorf("%s compiled", c.file)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.file, err, w)
			}
		}
	}
}

func TestCompilePolicyInline(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, src string
		want      string
	}{
		{"wrong package", "package other\n\ndeny contains \"x\" if true\n", "must declare package switchtender.plan"},
		{"lookup_ip_addr", "package switchtender.plan\n\ndeny contains \"x\" if net.lookup_ip_addr(\"example.com\")\n", "net.lookup_ip_addr"},
		{"rego v0 syntax", "package switchtender.plan\n\ndeny[msg] { msg := \"x\" }\n", "p.rego:3"},
		{"unsafe var", "package switchtender.plan\n\ndeny contains msg if { x := 1 }\n", "p.rego:3"},
	}
	for _, c := range cases {
		_, err := CompilePolicy(ctx, "p.rego", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	ctx := context.Background()
	input := map[string]any{"plan": map[string]any{}, "summary": map[string]any{"destroy": 0}, "run": map[string]any{}}

	slow := compileFile(t, "slow.rego")
	start := time.Now()
	_, err := slow.Evaluate(ctx, input, 200*time.Millisecond)
	if !errors.Is(err, ErrPolicyTimeout) {
		t.Errorf("slow policy: error %v, want ErrPolicyTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("slow policy took %s to stop after a 200ms timeout", d)
	}

	for name, src := range map[string]string{
		"deny not strings": "package switchtender.plan\n\ndeny contains 1 if true\n",
		"hold not a set":   "package switchtender.plan\n\nhold := \"x\"\n",
		"builtin error":    "package switchtender.plan\n\ndeny contains msg if { n := to_number(\"abc\"); msg := sprintf(\"%d\", [n]) }\n",
		"conflict":         "package switchtender.plan\n\nx := 1 if true\nx := 2 if true\ndeny contains \"d\" if x\n",
	} {
		p, err := CompilePolicy(ctx, name+".rego", []byte(src))
		if err != nil {
			t.Errorf("%s: compile: %v", name, err)
			continue
		}
		if res, err := p.Evaluate(ctx, input, time.Second); err == nil {
			t.Errorf("%s: no error, result %+v", name, res)
		}
	}
}

func TestEvaluateEmptyPolicy(t *testing.T) {
	p, err := CompilePolicy(context.Background(), "empty.rego", []byte("package switchtender.plan\n\ndeny contains \"never\" if false\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Evaluate(context.Background(), map[string]any{}, time.Second)
	if err != nil || len(res.Deny)+len(res.Hold) != 0 {
		t.Errorf("result %+v, err %v; want nothing", res, err)
	}
}

func TestNewPolicyInputRejectsNonObject(t *testing.T) {
	for _, doc := range []string{`[1]`, `"x"`, `{"a":`, ``} {
		if _, err := NewPolicyInput([]byte(doc), &Summary{}, personRun); !errors.Is(err, ErrUnreadablePlan) {
			t.Errorf("%q: error %v, want ErrUnreadablePlan", doc, err)
		}
	}
}

// The example policy in the package documentation compiles and decides as
// its text says.
func TestDocExamplePolicy(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, "//\tpackage switchtender.plan") {
			in = true
		}
		if in {
			if !strings.HasPrefix(l, "//\t") && l != "//" {
				break
			}
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "//"), "\t"))
		}
	}
	p, err := CompilePolicy(context.Background(), "doc.go", []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("example policy: %v\n%s", err, strings.Join(lines, "\n"))
	}
	res := evalOn(t, p, plans(t).protect, personRun)
	if !slices.Equal(res.Hold, []string{"plan destroys terraform_data.protected[0]"}) || len(res.Deny) != 0 {
		t.Errorf("example policy on a plan deleting protected[0]: %+v", res)
	}
}

// NewPolicyInput builds a plan_gate input value from the plan JSON (the
// output of `tofu show -json PLANFILE`), its summary and the run, without an
// intermediate map for the plan document. It returns an error wrapping
// ErrUnreadablePlan when planJSON is not a well-formed JSON object.
func NewPolicyInput(planJSON []byte, sum *Summary, run RunInfo) (ast.Value, error) {
	return newPolicyInput(planJSON, sum, run, planReads{all: true})
}
