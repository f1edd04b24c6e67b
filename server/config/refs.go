package config

import "fmt"

// checkRefs reports every reference to something not declared. Blocks that
// failed to decode are still "declared", so one mistake is not reported
// twice as a missing reference.
func (p *parser) checkRefs(cfg *Config) {
	for _, t := range cfg.Templates {
		p.checkTemplateRefs(t)
	}
	for q, r := range p.queueRefs {
		if !p.has("pool", r.name) {
			p.missing(r, fmt.Sprintf("queue %q", q.Name), "pool", "add a pool block for it, or remove pool to run the queue on the control node")
		}
	}
	for _, r := range cfg.Rules {
		p.checkRuleRefs(cfg, r)
	}
	for _, e := range cfg.Exemptions {
		p.checkExemptionRefs(e)
	}
	p.checkForges(cfg)
}

// has reports whether a kind's name was declared.
func (p *parser) has(kind, name string) bool {
	_, ok := p.declared[kind][name]
	return ok
}

// missing reports r, which names an undeclared kind, in what.
func (p *parser) missing(r ref, what, kind, fix string) {
	p.errorf(r.rng, "Unknown "+kind,
		"%s names %s %q, which is not declared; %s", what, kind, r.name, fix)
}

// allDeclared reports each of refs that names no declared kind.
func (p *parser) allDeclared(refs []ref, what, kind, fix string) {
	for _, x := range refs {
		if !p.has(kind, x.name) {
			p.missing(x, what, kind, fix)
		}
	}
}

func (p *parser) checkTemplateRefs(t *Template) {
	refs := p.tmplRefs[t]
	what := fmt.Sprintf("template %q", t.Name)
	if !p.has("project", t.Project) {
		p.missing(refs.project, what, "project", "add a project block for it or fix the name")
	}
	if refs.queue.name != "" && refs.queue.name != DefaultQueue && !p.has("queue", refs.queue.name) {
		p.missing(refs.queue, what, "queue", "add a queue block for it or fix the name")
	}
	p.allDeclared(refs.credentials, what, "credential", "add a credential block for it or fix the name")
}

func (p *parser) checkRuleRefs(cfg *Config, r *Rule) {
	refs := p.ruleRefs[r]
	what := fmt.Sprintf("rule %q", r.Name)
	p.allDeclared(refs.templates, what, "template", "add the template or fix the name")
	p.allDeclared(refs.projects, what, "project", "add the project or fix the name")
	for _, x := range refs.requesters {
		if !p.has("user", x.name) && !p.has("agent", x.name) {
			p.missing(x, what, "user or agent", "add a user or agent block for it or fix the name")
		}
	}
	for _, x := range refs.approvers {
		p.checkApprover(cfg, x, what)
	}
}

// checkApprover reports an approver that is an agent, is not declared, or
// lacks the approve role.
func (p *parser) checkApprover(cfg *Config, x ref, what string) {
	if p.has("agent", x.name) {
		p.errorf(x.rng, "Agent as approver",
			"%s lists agent %q as an approver; only people approve, so name a user", what, x.name)
		return
	}
	if !p.has("user", x.name) {
		p.missing(x, what, "user", "add a user block for the approver or fix the name")
		return
	}
	if u, ok := cfg.Users[x.name]; ok && !u.Has(RoleApprove) {
		p.errorf(x.rng, "Approver without the approve role",
			"%s lists %q as an approver, but user %q (%s) lacks the \"approve\" role; add \"approve\" to its roles", what, x.name, x.name, u.Line)
	}
}

func (p *parser) checkExemptionRefs(e *Exemption) {
	refs := p.exRefs[e]
	what := fmt.Sprintf("exemption %q", e.Name)
	for _, x := range refs.agents {
		if p.has("user", x.name) {
			p.errorf(x.rng, "User in an exemption",
				"%s names user %q; exemptions cover agents, whose runs are held by default, so name an agent", what, x.name)
			continue
		}
		if !p.has("agent", x.name) {
			p.missing(x, what, "agent", "add an agent block for it or fix the name")
		}
	}
	p.allDeclared(refs.templates, what, "template", "add the template or fix the name")
}
