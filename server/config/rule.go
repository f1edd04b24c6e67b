package config

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/switchtender/switchtender/gate"
)

var kinds = []string{KindApply, KindPlan, KindCheck, KindReconcile}

func (p *parser) kinds(c *hcl.BodyContent, what string) ([]string, bool) {
	rs, a, ok := p.strList(c, "kinds")
	if a == nil {
		return nil, true
	}
	if !ok {
		return nil, false
	}
	good := true
	for _, r := range rs {
		known := false
		for _, k := range kinds {
			known = known || r.name == k
		}
		if !known {
			p.errorf(r.rng, "Unknown kind", "%s names kind %q; kinds are %s", what, r.name, quoteList(kinds))
			good = false
		}
	}
	return names(rs), p.noDuplicates(rs, "kinds") && good
}

func (p *parser) rule(b *hcl.Block, name string) *Rule {
	c := p.content(b, ruleSchema)
	what := fmt.Sprintf("rule %q", name)
	r := &Rule{Name: name, Line: p.line(b.DefRange)}
	refs := &ruleRefs{}
	good := p.ruleLists(c, r, refs)
	if slices.Contains(gate.ReservedRuleNames, name) {
		p.errorf(b.LabelRanges[0], "Reserved rule name",
			"rule %q takes a name the server uses for its own holds (%s); give the rule another name", name, strings.Join(gate.ReservedRuleNames, ", "))
		good = false
	}
	var ok bool
	if r.Kinds, ok = p.kinds(c, what); !ok {
		good = false
	}
	good = p.maxDestroy(c, r) && good
	good = p.planGate(c, r, what) && good
	if v, ok := p.boolean(c, "require_approval"); ok {
		r.RequireApproval = v
	}
	if v, ok := p.boolean(c, "exclude_dry_run"); ok {
		r.ExcludeDryRun = v
	}
	if good && r.MaxDestroy == nil && r.PlanGate == "" && !r.RequireApproval {
		p.errorf(b.DefRange, "Rule does nothing",
			"%s sets none of max_destroy, plan_gate and require_approval = true, so it never holds a run; add one or remove the rule", what)
		good = false
	}
	if !good {
		return nil
	}
	p.ruleRefs[r] = refs
	return r
}

// ruleLists reads the rule's lists of names: what it matches and who
// approves.
func (p *parser) ruleLists(c *hcl.BodyContent, r *Rule, refs *ruleRefs) bool {
	good := true
	for _, l := range []struct {
		attr string
		dst  *[]string
		refs *[]ref
	}{
		{"templates", &r.Templates, &refs.templates},
		{"projects", &r.Projects, &refs.projects},
		{"requesters", &r.Requesters, &refs.requesters},
		{"approvers", &r.Approvers, &refs.approvers},
	} {
		rs, a, ok := p.strList(c, l.attr)
		if a != nil && !ok {
			good = false
			continue
		}
		good = p.noDuplicates(rs, l.attr) && good
		*l.dst = names(rs)
		*l.refs = rs
	}
	return good
}

func (p *parser) maxDestroy(c *hcl.BodyContent, r *Rule) bool {
	v, a, ok := p.integer(c, "max_destroy")
	if !ok {
		return a == nil
	}
	r.MaxDestroy = &v
	if v < 0 {
		p.errorf(a.Expr.Range(), "Invalid max_destroy", "max_destroy = %d; give 0 or more (0 holds any apply that destroys something)", v)
		return false
	}
	return true
}

// planGate reads plan_gate, the path of a policy file that must exist.
func (p *parser) planGate(c *hcl.BodyContent, r *Rule, what string) bool {
	v, a, ok := p.str(c, "plan_gate")
	if !ok {
		return a == nil
	}
	abs := p.resolve(v)
	fi, err := os.Stat(abs)
	r.PlanGate = abs
	switch {
	case v == "":
		p.errorf(a.Expr.Range(), "Empty plan_gate", "%s has an empty plan_gate; give the path of a .rego policy file", what)
		return false
	case err != nil:
		p.errorf(a.Expr.Range(), "Policy file not found",
			"%s plan_gate %s cannot be read (%v); write the policy there or fix the path (relative paths start at %s)", what, abs, err, p.baseDir)
		return false
	case !fi.Mode().IsRegular():
		p.errorf(a.Expr.Range(), "Policy is not a file", "%s plan_gate %s is not a regular file; give the path of a .rego file", what, abs)
		return false
	}
	return true
}

func (p *parser) exemption(b *hcl.Block, name string) *Exemption {
	c := p.content(b, exemptionSchema)
	what := fmt.Sprintf("exemption %q", name)
	e := &Exemption{Name: name, Line: p.line(b.DefRange)}
	refs := &exemptionRefs{}
	good := true
	if rs, a, ok := p.strList(c, "agents"); ok {
		if len(rs) == 0 {
			p.errorf(a.Expr.Range(), "No agents", "%s has an empty agents list; name the agents it exempts", what)
			good = false
		}
		good = p.noDuplicates(rs, "agents") && good
		e.Agents, refs.agents = names(rs), rs
	} else {
		good = false
	}
	if rs, a, ok := p.strList(c, "templates"); ok {
		good = p.noDuplicates(rs, "templates") && good
		e.Templates, refs.templates = names(rs), rs
	} else if a != nil {
		good = false
	}
	var ok bool
	if e.Kinds, ok = p.kinds(c, what); !ok {
		good = false
	}
	if !good {
		return nil
	}
	p.exRefs[e] = refs
	return e
}
