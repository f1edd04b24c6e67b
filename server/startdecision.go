package server

import (
	"errors"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/store"
)

// A queued run is decided when it starts, under the rules in force then
// (docs/operations.md, "Reload": "a queued run plans under the new rules when it
// starts"): before anything of it runs, the holds a person must release
// before planning (an agent's run, an approval rule covering a dry run or
// check) are decided again, and the scan (scanFor) and a gated apply's
// two steps are decided from the configuration then, on the control node
// and on a relay pool alike. A reload logs, for each queued run, what it
// changed in what the run will do.

// gateRequest describes run r to the gate under lc's exemptions.
func (lc *liveConfig) gateRequest(r store.Run) gate.Request {
	req := gate.Request{
		Template:        r.Template,
		Project:         r.Project,
		Kind:            string(r.Kind),
		Requester:       r.Requester,
		Agent:           r.RequesterKind == RequesterAgent,
		Forge:           r.RequesterKind == store.RequesterForge,
		RequireApproval: r.RequireApproval,
		AIProposal:      r.AIProposal,
	}
	_, req.Exempted = gate.Exempt(lc.exemptions, req)
	return req
}

// holdsBeforePlanning returns why a run must wait for a person before
// anything plans under lc, or nothing. An agent's run is held unless an
// exemption covers it (spec "An apply an AI agent asks for is the
// exception"; "An agent's plan waits for a person ... unless an exemption
// covers it"). A dry run or drift check that an approval rule covers, each
// matched by its own kind, is held too, unless the rule has
// exclude_dry_run: the configuration scan then decides, before the run
// plans (scanFor; spec "What a plan runs, and what the gate reads").
func (lc *liveConfig) holdsBeforePlanning(req gate.Request) []store.Hold {
	var holds []store.Hold
	if req.Agent && !req.Exempted {
		holds = append(holds, store.Hold{Rule: "agent", Reason: req.Requester + " is an agent and no exemption covers this run"})
	}
	what := map[Kind]string{KindPlan: "dry run", KindCheck: "drift check"}[Kind(req.Kind)]
	if what == "" {
		return holds
	}
	for _, r := range lc.rules {
		if r.ExcludeDryRun || !r.WouldHold(req) {
			continue
		}
		holds = append(holds, store.Hold{Rule: r.Name, Reason: "the rule requires approval for this " + what, Approvers: r.Approvers, MinApprovals: r.MinApprovals})
	}
	return holds
}

// scanFor says whether run r is scanned before it plans under lc, why, and
// which holds a finding makes (none for a pull request's plan: a finding
// refuses it). A dry run or check is scanned when a rule would hold it but
// for its exclude_dry_run; one whose scan a person released plans exactly
// the modules scanned, whatever the rules say now.
func (lc *liveConfig) scanFor(r store.Run) (why string, holds []store.Hold) {
	if r.Commit != nil && r.Commit.Ref != "" {
		return scanForPullRequest, nil
	}
	k := r.Kind
	if k != KindPlan && k != KindCheck {
		return "", nil
	}
	req := lc.gateRequest(r)
	for _, rule := range lc.rules {
		full := *rule
		full.ExcludeDryRun = false
		if rule.ExcludeDryRun && full.WouldHold(req) {
			holds = append(holds, store.Hold{Rule: rule.Name, Approvers: rule.Approvers, MinApprovals: rule.MinApprovals,
				Reason: "exclude_dry_run exempts a plan only when the configuration scan finds nothing; it found what is listed, so the rule holds this plan as it would hold the run without the exemption"})
		}
	}
	if len(holds) == 0 && !scanReleased(r) {
		return "", nil
	}
	return scanForExemption, holds
}

// startDecision is what a run in its plan phase does when it starts under
// one configuration: the pre-plan holds no person released yet, why it is
// scanned, and whether an apply is gated (planned, saved and decided on).
type startDecision struct {
	holds []store.Hold
	scan  string
	gated bool
}

// startDecision decides run r's start under lc.
func (lc *liveConfig) startDecision(r store.Run) startDecision {
	req := lc.gateRequest(r)
	d := startDecision{holds: unreleased(r, lc.holdsBeforePlanning(req))}
	d.scan, _ = lc.scanFor(r)
	d.gated = r.Kind == KindApply && gate.NeedsSavedPlan(lc.rules, req)
	return d
}

// String says what the run will do, for the operator log.
func (d startDecision) String() string {
	var parts []string
	if len(d.holds) > 0 {
		var rules []string
		for _, h := range d.holds {
			rules = append(rules, h.Rule)
		}
		parts = append(parts, "held before planning by "+rulesPhrase(rules))
	}
	if d.scan != "" {
		parts = append(parts, "scanned first ("+d.scan+")")
	}
	if d.gated {
		parts = append(parts, "planned and decided on its saved plan")
	}
	if len(parts) == 0 {
		return "runs without a hold or a scan"
	}
	return strings.Join(parts, ", ")
}

// unreleased leaves out of holds the rules a person already released on
// run r before it planned (its request or scan stage).
func unreleased(r store.Run, holds []store.Hold) []store.Hold {
	var released []string
	for _, a := range r.Approvals {
		if a.Decision == DecisionApprove && (a.Stage == StageRequest || a.Stage == StageScan) {
			released = append(released, a.Rules...)
		}
	}
	return slices.DeleteFunc(holds, func(h store.Hold) bool { return slices.Contains(released, h.Rule) })
}

// holdAtStart decides queued run id as it starts, before anything of it
// runs: when the rules now hold it before planning (holds no person
// released), it waits for a person with a request-stage proposal, as it
// would have at launch, and holdAtStart reports true; the caller then
// leaves it. A run in its apply phase, or not queued, is left as it is.
func (s *Server) holdAtStart(id string) bool {
	lc := s.live.Load()
	var holds []store.Hold
	run, err := s.updateAudited(id, func(r *store.Run) error {
		if r.Status != StatusQueued || r.Phase != phasePlan || r.Kind == KindReconcile || r.CancelRequested != "" {
			return errNotHeldAtStart
		}
		if holds = lc.startDecision(*r).holds; len(holds) == 0 {
			return errNotHeldAtStart
		}
		if err := setStatus(r, StatusRunning); err != nil {
			return err
		}
		if err := setStatus(r, StatusAwaitingApproval); err != nil {
			return err
		}
		requestHold(r, holds)
		r.Message = "Held when it started: the rules in force now (the configuration changed since it was queued) hold it before anything plans: " + reasons(holds) + ". A person releases it with the digest `show " + r.ID + "` gives."
		return nil
	}, func(r store.Run) store.AuditEvent {
		return auditEvent(r.ID, "switchtender", string(StatusAwaitingApproval), r.Message)
	})
	if err != nil {
		if !errors.Is(err, errNotHeldAtStart) {
			s.log.Error("deciding a run as it starts", "run", id, "err", err)
		}
		return false
	}
	var rules []string
	for _, h := range holds {
		rules = append(rules, h.Rule)
	}
	s.log.Info("start: the rules in force now hold a queued run before planning", "run", id, "template", run.Template, "kind", run.Kind, "rules", rules)
	return true
}

var errNotHeldAtStart = errors.New("not held at start")

// logQueuedChanges writes to the operator log, for each queued run whose
// start the reload from old to next changes, what it would have done and
// what it will do now.
func (s *Server) logQueuedChanges(old, next *liveConfig) {
	runs, err := s.db.ListRuns()
	if err != nil {
		s.log.Error("reload: listing queued runs", "err", err)
		return
	}
	for _, r := range runs {
		if r.Status != StatusQueued || r.Phase != phasePlan || r.Kind == KindReconcile {
			continue
		}
		before, after := old.startDecision(r).String(), next.startDecision(r).String()
		if before != after {
			s.log.Warn("reload: a queued run will start otherwise under the new rules", "run", r.ID, "template", r.Template,
				"kind", r.Kind, "before", before, "now", after)
		}
	}
}
