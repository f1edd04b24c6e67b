package api

import (
	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// SavedPlan is the saved plan a run made, as measured (docs/json.md
// "plan"): the digest of the plan file ("sha256:HEX") and the gate's
// counts. Destroy counts every delete, replacements included; a forget is
// never a destroy.
type SavedPlan struct {
	Digest  string `json:"digest"`
	Add     int    `json:"add"`
	Change  int    `json:"change"`
	Destroy int    `json:"destroy"`
	Replace int    `json:"replace"`
	Forget  int    `json:"forget"`
}

// PlanOf is the saved plan run r made, or nil when it made none: a dry
// run's DryPlan (store.DryPlan), a gated run's or a reconcile's plan-stage
// proposal, or the plan a drift check kept (store.Check.Plan, kept still
// or since dropped). A proposal held before planning (stage request or
// scan) saved no plan.
func PlanOf(r store.Run) *SavedPlan {
	switch {
	case r.DryPlan != nil:
		d := r.DryPlan
		return &SavedPlan{Digest: d.Digest, Add: d.Add, Change: d.Change, Destroy: d.Destroy, Replace: d.Replace, Forget: d.Forget}
	case r.Proposal != nil && r.Proposal.Stage == store.StagePlan:
		return proposalPlan(r.Proposal)
	case r.Kind == store.KindCheck && r.Check != nil && r.Check.Plan != nil:
		return proposalPlan(r.Check.Plan)
	}
	return nil
}

// proposalPlan is p's saved plan: its digest and counts.
func proposalPlan(p *store.Proposal) *SavedPlan {
	return &SavedPlan{Digest: p.Digest, Add: p.Add, Change: p.Change, Destroy: p.Destroy, Replace: p.Replace, Forget: p.Forget}
}

// Counts says what p does in tofu's words (screentext.PlanCounts): "1 to
// add, 0 to change, 0 to destroy".
func (p *SavedPlan) Counts() string {
	return screentext.PlanCounts(p.Add, p.Change, p.Destroy, p.Replace, p.Forget)
}
