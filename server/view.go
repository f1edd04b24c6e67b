package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// Refreshed returns r after checking whether its held plan went stale (so
// a stale plan is never shown as approvable); r itself when it holds
// nothing or the check fails (logged).
func (s *Server) Refreshed(r store.Run) store.Run {
	if r.Status != StatusAwaitingApproval {
		return r
	}
	if err := s.checkStale(r); err != nil {
		s.log.Error("checking whether a held plan is stale", "run", r.ID, "err", err)
		return r
	}
	if fresh, err := s.getRun(r.ID); err == nil {
		return fresh
	}
	return r
}

// View is r as who sees it; withPlan keeps tofu's plan text and adds the
// change set of its saved plan (Changes; from memory or its sealed blob,
// never a tool).
func (s *Server) View(r store.Run, who Identity, withPlan bool) api.RunView {
	why := s.unapprovable(r) // before the sealed answers are hidden: it opens them
	r.SealedVars, r.SealedAnswers = nil, nil
	v := api.RunView{Holds: s.holdViews(r), Findings: []store.Finding{}, JSONPhase: s.jsonPhase(r), Unapprovable: why}
	if r.Status == StatusQueued && s.sched != nil {
		v.WaitsBehind = s.sched.WaitReason(r.ID)
		if v.WaitsBehind == "" {
			v.WaitsBehind = s.relay.waitReason(r.ID)
		}
	}
	if r.Scan != nil && len(r.Scan.Findings) > 0 {
		v.Findings = r.Scan.Findings
	}
	if r.Proposal != nil {
		s.viewProposal(&v, &r, who, withPlan)
	}
	if r.Kind == KindCheck {
		viewCheck(&v, &r, withPlan)
	}
	if v.Plan = api.PlanOf(r); r.DryPlan != nil {
		v.Counts = v.Plan.Counts()
	}
	if withPlan {
		v.Changes = s.viewChanges(r)
	}
	v.Run = r
	return v
}

// viewProposal fills v with what r's proposal shows who, and leaves in r a
// copy of the proposal without the server's own records (and without the
// plan text unless withPlan). v.Unapprovable must already be set.
func (s *Server) viewProposal(v *api.RunView, r *store.Run, who Identity, withPlan bool) {
	p := r.Proposal
	v.Lookalikes = api.Lookalikes(p.Addresses)
	v.Stale, v.StaleReason = p.Stale, p.StaleReason
	if p.Stage == StagePlan {
		v.Counts = planCounts(p)
	}
	cp := *p
	cp.StartFiles = nil // the server's own record, compared at apply; not part of the view
	if !withPlan {
		cp.PlanText = ""
	}
	r.Proposal = &cp
	if st := r.Status; st == StatusAwaitingApproval || st == StatusStale {
		v.NewerProposal = s.newerProposal(*r)
	}
	if v.Unapprovable != "" {
		r.Message = "Cannot be approved: " + v.Unapprovable + "."
	} else if r.Status == StatusAwaitingApproval {
		v.Waiting = fmt.Sprintf("approve %s --digest %s", r.ID, p.Digest)
		v.WaitingForYou = s.waitingFor(*r, who)
	}
}

// viewCheck fills v with a drift check's reconcile note and the lookalike
// addresses of the plan it kept, and drops that plan's text from r unless
// withPlan.
func viewCheck(v *api.RunView, r *store.Run, withPlan bool) {
	v.Reconcile = reconcileNote(*r)
	c := r.Check
	if c == nil || c.Plan == nil {
		return
	}
	if r.Proposal == nil {
		v.Lookalikes = api.Lookalikes(c.Plan.Addresses)
	}
	if !withPlan {
		cc, cp := *c, *c.Plan
		cp.PlanText = ""
		cc.Plan = &cp
		r.Check = &cc
	}
}

// jsonPhase says what a run is doing or did with the tool, for JSON:
// "apply" once it applies (a released saved plan, or an apply no rule
// covers, which plans and applies in one step), "plan" otherwise.
func (s *Server) jsonPhase(r store.Run) string {
	if r.Phase == phaseApply {
		return string(phaseApply)
	}
	if r.Kind == KindApply && r.Proposal == nil && !gate.NeedsSavedPlan(s.currentRules(), s.gateRequest(r)) {
		return string(phaseApply)
	}
	return string(phasePlan)
}

// Workers is every relay worker seen since the start, by pool and name.
func (s *Server) Workers() []api.WorkerView { return s.relay.list() }

// list is every worker seen, by pool and name.
func (h *relayHub) list() []api.WorkerView {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []api.WorkerView
	for _, w := range h.workers {
		v := api.WorkerView{Name: w.name, Pool: w.pool, Version: w.version, LastSeen: w.lastSeen, State: "idle"}
		if w.lease != nil {
			v.Run, v.State = w.lease.job.runID, "running"
		}
		switch {
		case w.conn == nil:
			v.State = "disconnected"
		case w.draining:
			v.State = "draining"
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b api.WorkerView) int { return strings.Compare(a.Pool+"/"+a.Name, b.Pool+"/"+b.Name) })
	return out
}
