package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// PolicyPackage is the package a plan_gate module must declare, and
// PolicyQuery the query the gate evaluates.
const (
	PolicyPackage = "switchtender.plan"
	PolicyQuery   = "data.switchtender.plan"
)

// RefusedBuiltins are the Rego built-in functions a plan_gate may not call:
// they reach outside the server process (the network, DNS) or read the
// server's runtime configuration and environment, where credentials live. A
// module that calls one does not compile.
var RefusedBuiltins = []string{
	"http.send",
	"net.lookup_ip_addr",
	"opa.runtime",
}

// Policy is a compiled plan_gate module, prepared once and safe to evaluate
// from many goroutines.
type Policy struct {
	name  string
	query rego.PreparedEvalQuery
	// reads says which top-level keys of input.plan the policy can reach;
	// Decide converts only those parts of the plan.
	reads planReads
}

// planReads is what a policy reads of input.plan: every key (all), or the
// keys named.
type planReads struct {
	all  bool
	keys map[string]bool
}

func (r *planReads) merge(o planReads) {
	r.all = r.all || o.all
	for k := range o.keys {
		if r.keys == nil {
			r.keys = map[string]bool{}
		}
		r.keys[k] = true
	}
}

func (r planReads) reads(key string) bool { return r.all || r.keys[key] }

// analyzeReads finds the top-level keys of input.plan the compiled modules
// can reach. The only way a policy reaches the input document is a
// reference rooted at input, so a policy that refers to input.plan.K only by
// constant keys K cannot observe any other key; any other use of input or
// input.plan (input alone, input.plan alone, input.plan[x] with a variable,
// input[x]) counts as reading everything.
func analyzeReads(modules map[string]*ast.Module) planReads {
	r := planReads{keys: map[string]bool{}}
	var visit func(t *ast.Term) bool
	visit = func(t *ast.Term) bool {
		switch v := t.Value.(type) {
		case ast.Var:
			if v.Equal(ast.InputRootDocument.Value) {
				r.all = true
			}
		case ast.Ref:
			if len(v) == 0 || v[0].Value.Compare(ast.InputRootDocument.Value) != 0 {
				return false
			}
			switch {
			case len(v) == 1:
				r.all = true
			default:
				if s, ok := v[1].Value.(ast.String); !ok {
					r.all = true
				} else if s == "plan" {
					if len(v) == 2 {
						r.all = true
					} else if k, ok := v[2].Value.(ast.String); ok {
						r.keys[string(k)] = true
					} else {
						r.all = true
					}
				}
			}
			// The head is handled; walk the rest for nested references.
			for _, part := range v[1:] {
				ast.WalkTerms(part, visit)
			}
			return true
		}
		return false
	}
	for _, m := range modules {
		ast.WalkTerms(m, visit)
	}
	return r
}

// Name returns the name the policy was compiled under (its file name).
func (p *Policy) Name() string { return p.name }

// PolicyResult is what a plan_gate decided: the messages of its deny rule
// (refuse the apply) and of its hold rule (the apply needs approval), each
// sorted.
type PolicyResult struct {
	Deny, Hold []string
}

// CompilePolicy parses and compiles a plan_gate module (Rego v1) and prepares
// the query data.switchtender.plan once. name is used in error positions,
// e.g. the policy file's path. The module must declare package
// switchtender.plan; a module that does not parse or compile, declares
// another package, or calls a RefusedBuiltins function returns an error
// carrying OPA's message with file:line.
func CompilePolicy(ctx context.Context, name string, module []byte) (*Policy, error) {
	parsed, err := ast.ParseModuleWithOpts(name, string(module), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("compiling plan_gate %s: %w", name, err)
	}
	if got := parsed.Package.Path.String(); got != "data."+PolicyPackage {
		return nil, fmt.Errorf("compiling plan_gate %s:%d: the module declares package %s; a plan_gate must declare package %s",
			name, parsed.Package.Location.Row, trimData(got), PolicyPackage)
	}
	if err := checkRefusedBuiltins(name, parsed); err != nil {
		return nil, err
	}
	// Defence in depth: the refused built-ins are also missing from the
	// compiler's capabilities, and listed as unsafe for evaluation.
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		return slices.Contains(RefusedBuiltins, b.Name)
	})
	unsafe := map[string]struct{}{}
	for _, b := range RefusedBuiltins {
		unsafe[b] = struct{}{}
	}
	compiler := ast.NewCompiler().WithCapabilities(caps)
	compiler.Compile(map[string]*ast.Module{name: parsed})
	if compiler.Failed() {
		return nil, fmt.Errorf("compiling plan_gate %s: %w", name, compiler.Errors)
	}
	r := rego.New(
		rego.Query(PolicyQuery),
		rego.Compiler(compiler),
		rego.SetRegoVersion(ast.RegoV1),
		rego.UnsafeBuiltins(unsafe),
		rego.Capabilities(caps),
		rego.StrictBuiltinErrors(true),
	)
	pq, err := r.PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("compiling plan_gate %s: %w", name, err)
	}
	return &Policy{name: name, query: pq, reads: analyzeReads(compiler.Modules)}, nil
}

// checkRefusedBuiltins names the first call of a RefusedBuiltins function
// in module, with its file:line.
func checkRefusedBuiltins(name string, module *ast.Module) error {
	var found error
	check := func(op ast.Ref, loc *ast.Location) {
		if found == nil && slices.Contains(RefusedBuiltins, op.String()) {
			row := 0
			if loc != nil {
				row = loc.Row
			}
			found = fmt.Errorf("compiling plan_gate %s:%d: a plan_gate may not call %s: it reaches outside the server process (refused built-ins: %s)",
				name, row, op, strings.Join(RefusedBuiltins, ", "))
		}
	}
	ast.WalkExprs(module, func(e *ast.Expr) bool {
		if e.IsCall() {
			check(e.Operator(), e.Location)
		}
		return found != nil
	})
	ast.WalkTerms(module, func(t *ast.Term) bool {
		if c, ok := t.Value.(ast.Call); ok && len(c) > 0 {
			if ref, ok := c[0].Value.(ast.Ref); ok {
				check(ref, t.Location)
			}
		}
		return found != nil
	})
	return found
}

func trimData(path string) string {
	if len(path) > 5 && path[:5] == "data." {
		return path[5:]
	}
	return path
}

// ErrPolicyTimeout is wrapped by Evaluate's error when the evaluation did not
// finish within its timeout.
var ErrPolicyTimeout = errors.New("plan_gate evaluation timed out")

// Evaluate runs the policy on input, shaped {"plan": <tofu show -json
// document>, "summary": {...}, "run": {...}} (see the package doc), and
// returns its deny and hold messages. Evaluation stops after timeout (0 means
// no limit beyond ctx). A timeout, an evaluation error (including a built-in
// function error, evaluated strictly), or a deny/hold that is not a set of
// strings returns an error; the caller must then hold the apply, never pass
// it.
func (p *Policy) Evaluate(ctx context.Context, input map[string]any, timeout time.Duration) (PolicyResult, error) {
	v, err := ast.InterfaceToValue(input)
	if err != nil {
		return PolicyResult{}, fmt.Errorf("plan_gate %s: converting input: %w", p.name, err)
	}
	return p.EvaluateValue(ctx, v, timeout)
}

// EvaluateValue is Evaluate with an input already converted to a Rego value,
// so a caller evaluating several policies on one plan converts it once (see
// newPolicyInput).
func (p *Policy) EvaluateValue(ctx context.Context, input ast.Value, timeout time.Duration) (PolicyResult, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	rs, err := p.query.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return PolicyResult{}, fmt.Errorf("plan_gate %s: %w after %s: %v", p.name, ErrPolicyTimeout, timeout, err)
		}
		return PolicyResult{}, fmt.Errorf("evaluating plan_gate %s: %w", p.name, err)
	}
	var res PolicyResult
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		// The package defines no rules that evaluated: nothing to report.
		return res, nil
	}
	doc, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		return PolicyResult{}, fmt.Errorf("plan_gate %s: %s evaluated to %T, want an object", p.name, PolicyQuery, rs[0].Expressions[0].Value)
	}
	if res.Deny, err = messages(doc, "deny"); err != nil {
		return PolicyResult{}, fmt.Errorf("plan_gate %s: %w", p.name, err)
	}
	if res.Hold, err = messages(doc, "hold"); err != nil {
		return PolicyResult{}, fmt.Errorf("plan_gate %s: %w", p.name, err)
	}
	return res, nil
}

// messages reads the set doc[key] as sorted strings.
func messages(doc map[string]any, key string) ([]string, error) {
	raw, present := doc[key]
	if !present {
		return nil, nil
	}
	set, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %T; declare it as a set of strings: %s contains msg if { ... }", key, raw, key)
	}
	out := make([]string, 0, len(set))
	for _, m := range set {
		s, ok := m.(string)
		if !ok {
			return nil, fmt.Errorf("%s contains a %T; its messages must be strings (the value is not repeated here: it may come from the plan)", key, m)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// RunInfo describes the run a proposal belongs to, as a policy sees it under
// input.run.
type RunInfo struct {
	Template, Project, Kind, Requester string
	// RequesterKind is "person" or "agent".
	RequesterKind string
}

// newPolicyInput builds a plan_gate input value from the plan JSON (the
// output of `tofu show -json PLANFILE`), its summary and the run, without an
// intermediate map for the plan document, converting only the top-level
// plan keys reads names; the rest of the document is still checked to be
// JSON. It returns an error wrapping ErrUnreadablePlan when planJSON is not
// a well-formed JSON object.
func newPolicyInput(planJSON []byte, sum *Summary, run RunInfo, reads planReads) (ast.Value, error) {
	plan, err := jsonObjectToValue(planJSON, reads.reads)
	if err != nil {
		return nil, fmt.Errorf("%w: reading plan JSON for plan_gate: %v", ErrUnreadablePlan, err)
	}
	rest, err := ast.InterfaceToValue(map[string]any{
		"summary": sum.inputMap(),
		"run": map[string]any{
			"template":       run.Template,
			"project":        run.Project,
			"kind":           run.Kind,
			"requester":      run.Requester,
			"requester_kind": run.RequesterKind,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("building plan_gate input: %w", err)
	}
	obj := rest.(ast.Object)
	obj.Insert(ast.StringTerm("plan"), ast.NewTerm(plan))
	return obj, nil
}
