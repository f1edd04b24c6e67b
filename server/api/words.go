package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/server/config"
	"github.com/switchtender/switchtender/store"
)

// The sentences the service and its door both print.

// RulesPhrase is "rule a" or "rules a, b".
func RulesPhrase(rules []string) string {
	if len(rules) == 1 {
		return "rule " + rules[0]
	}
	return "rules " + strings.Join(rules, ", ")
}

// RequestedHow is the sentence that says who asked for a run and how:
// "alice (person)", "deploy-bot (agent), as an AI proposal", "octocat
// (forge)" (RequesterKind's words).
func RequestedHow(r store.Run) string {
	how := r.Requester + " (" + RequesterKind(string(r.RequesterKind)) + ")"
	switch {
	case r.AIProposal:
		how += ", as an AI proposal"
	case r.RequireApproval:
		how += ", with require_approval"
	}
	return how
}

// Plural is the word for n things: one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PlanCounts says what proposal p does in tofu's words
// (screentext.PlanCounts): the gate's Add counts pure creates and its
// Destroy every delete.
func PlanCounts(p *store.Proposal) string {
	return screentext.PlanCounts(p.Add, p.Change, p.Destroy, p.Replace, p.Forget)
}

// FindingText is one finding: "address (file:line): reason", each of the
// three escaped as one unit (screentext.Field), so a file name or a block
// label holding a newline or an escape sequence can neither forge a line
// nor hide the reason after it.
func FindingText(f store.Finding) string {
	where := screentext.Field(f.File)
	if f.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, f.Line)
	}
	addr := screentext.Field(f.Address)
	if f.Address == "" {
		addr = "the root module"
	}
	if f.File != "" || f.Line > 0 {
		return fmt.Sprintf("%s (%s): %s", addr, where, screentext.Field(f.Reason))
	}
	return fmt.Sprintf("%s: %s", addr, screentext.Field(f.Reason))
}

// StatusSaid is how a sentence says a run is in status s, after the run
// ("run 7 …"): "is" before a status it stands in ("is queued", "is
// running", "is awaiting approval", "is stale"), and what became of it
// for the others: "succeeded", "failed", "was cancelled", "was
// interrupted", "was rejected", "was refused". A status not in the store's
// vocabulary is "is " and the status.
func StatusSaid(s store.Status) string {
	switch s {
	case store.StatusSucceeded, store.StatusFailed:
		return string(s)
	case store.StatusCancelled, store.StatusInterrupted, store.StatusRejected, store.StatusRefused:
		return "was " + string(s)
	}
	return "is " + strings.ReplaceAll(string(s), "_", " ")
}

// Ended is how a sentence says a run has ended in final status s: "has
// ended (succeeded)"; a status that is not final is StatusSaid's.
func Ended(s store.Status) string {
	if !s.Final() {
		return StatusSaid(s)
	}
	return "has ended (" + string(s) + ")"
}

// ReconcileNote says whether a reconcile can still be proposed from check
// r, and if not why not.
func ReconcileNote(r store.Run) string {
	c := r.Check
	switch {
	case c == nil && store.Status(r.Status).Final():
		return "cannot be proposed: the check kept no plan (it " + StatusSaid(r.Status) + ")"
	case c == nil:
		return "not yet: the check has not finished"
	case !c.Drifted:
		return "cannot be proposed: no drift, so no plan was kept"
	case c.SupersededBy != "":
		return "cannot be proposed: superseded by check " + c.SupersededBy + ", which dropped this plan"
	case c.ReconciledBy != "":
		return "cannot be proposed again: reconciled by run " + c.ReconciledBy
	case !c.Kept:
		return "cannot be proposed: the plan is no longer kept"
	case c.Plan != nil && len(c.Plan.Refusals) > 0:
		return "cannot be proposed: the rules refuse this plan (" + Reasons(c.Plan.Refusals) + ")"
	}
	return "can be proposed: `reconcile " + r.ID + "` proposes applying exactly this plan"
}

// Reasons is the word for n things: one when n is 1, else many.
func Reasons(hs []store.Hold) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s (rule %s)", h.Reason, h.Rule))
	}
	return strings.Join(parts, "; ")
}

// Lookalikes marks the addresses of a plan that a person could take for
// another (screentext.Lookalikes over every action's addresses, sorted).
func Lookalikes(addrs map[string][]string) []screentext.Lookalike {
	var all []string
	for _, as := range addrs {
		all = append(all, as...)
	}
	sort.Strings(all)
	return screentext.Lookalikes(all)
}

// AnswerText renders a default the way a person would type it as an answer.
func AnswerText(v any) string {
	switch v.(type) {
	case []any, map[string]any:
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// SortedTemplates is the word for n things: one when n is 1, else many.
func SortedTemplates(cfg *config.Config) []*config.Template {
	var ts []*config.Template
	for _, t := range cfg.Templates {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *config.Template) int { return strings.Compare(a.Name, b.Name) })
	return ts
}
