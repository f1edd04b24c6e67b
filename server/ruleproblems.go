package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/server/config"
)

// ruleProblems names the rules that can never hold or refuse a run, which
// serve warns about and check reports (a rule's kinds mean what they say,
// see gate.KindMatches, so a rule can be written that nothing matches):
//
//   - exclude_dry_run on a rule whose kinds are only plan and check: it
//     exempts every kind it names;
//   - a rule without require_approval whose kinds are only plan and check:
//     max_destroy and plan_gate weigh a plan that is applied, a dry run and
//     a check apply nothing, and a check's plan is decided as the reconcile
//     it would be;
//   - templates and projects that no configured template satisfies both;
//   - kinds only check and reconcile on templates that all run on pools
//     without a delivery_key, where no check can run.
func ruleProblems(cfg *config.Config) []Problem {
	var out []Problem
	for _, r := range cfg.Rules {
		if msg := ruleNeverMatches(cfg, r); msg != "" {
			out = append(out, Problem{Where: r.Line, What: fmt.Sprintf("rule %s (%s): %s", r.Name, r.Line, msg)})
		}
	}
	return out
}

// ruleNeverMatches says why rule r can never hold or refuse a run, or "".
func ruleNeverMatches(cfg *config.Config, r *config.Rule) string {
	planOnly := len(r.Kinds) > 0 && !slices.ContainsFunc(r.Kinds, func(k string) bool { return k != config.KindPlan && k != config.KindCheck })
	switch {
	case planOnly && r.ExcludeDryRun:
		return fmt.Sprintf("its kinds (%s) are only dry runs and checks, and exclude_dry_run exempts exactly those, so it never covers a run; remove exclude_dry_run, or name apply or reconcile in kinds", strings.Join(r.Kinds, ", "))
	case planOnly && !r.RequireApproval:
		return fmt.Sprintf("its kinds (%s) are only dry runs and checks, which apply nothing, and it holds only on what a plan would apply (max_destroy, plan_gate), so it never holds a run; a check's plan is decided as the reconcile it would be, so name reconcile (or apply) in kinds to weigh it, or set require_approval = true to hold the dry runs or checks themselves", strings.Join(r.Kinds, ", "))
	}
	covered := coveredTemplates(cfg, r)
	if len(covered) == 0 && len(r.Templates) > 0 && len(r.Projects) > 0 {
		return fmt.Sprintf("no configured template is both among its templates (%s) and in its projects (%s), so it never covers a run", strings.Join(r.Templates, ", "), strings.Join(r.Projects, ", "))
	}
	checksOnly := len(r.Kinds) > 0 && !slices.ContainsFunc(r.Kinds, func(k string) bool { return k != config.KindCheck && k != config.KindReconcile })
	if checksOnly && len(covered) > 0 && !slices.ContainsFunc(covered, func(t *config.Template) bool { return canCheck(cfg, t) }) {
		return fmt.Sprintf("its kinds (%s) come only from drift checks, and every template it covers runs on a pool without a delivery_key, where a check is refused; give the pool a delivery_key or remove the rule", strings.Join(r.Kinds, ", "))
	}
	return ""
}

// coveredTemplates are the configured templates rule r's templates and
// projects lists select (an empty list selects every one).
func coveredTemplates(cfg *config.Config, r *config.Rule) []*config.Template {
	var out []*config.Template
	for _, t := range sortedTemplates(cfg) {
		if (len(r.Templates) == 0 || slices.Contains(r.Templates, t.Name)) && (len(r.Projects) == 0 || slices.Contains(r.Projects, t.Project)) {
			out = append(out, t)
		}
	}
	return out
}

// canCheck reports whether a drift check of template t can run: on the
// control node, or on a pool with a delivery key.
func canCheck(cfg *config.Config, t *config.Template) bool {
	q := cfg.Queues[t.Queue]
	if q == nil || q.Pool == "" {
		return true
	}
	p := cfg.Pools[q.Pool]
	return p != nil && p.DeliveryKey != ""
}
