package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/switchtender/switchtender/screentext"
)

// Outcome is what the rules decided on a proposal.
type Outcome int

const (
	// Pass: nothing holds the proposal; the apply carries out the saved plan.
	Pass Outcome = iota
	// Hold: the proposal waits for an approver to release its digest.
	Hold
	// Refuse: a plan_gate denied the apply; no approval releases it.
	Refuse
)

// String returns "pass", "hold" or "refuse".
func (o Outcome) String() string {
	switch o {
	case Pass:
		return "pass"
	case Hold:
		return "hold"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Run kinds a Request carries, each matched by a rule's Kinds as itself:
// KindDryRun and KindCheck both run tofu plan only, so a rule with
// ExcludeDryRun does not cover them; a KindReconcile applies a drift
// check's plan, so a rule whose Kinds name KindApply covers it too (see
// KindMatches).
const (
	KindApply     = "apply"
	KindDryRun    = "plan"
	KindCheck     = "check"
	KindReconcile = "reconcile"
)

// Rule is one configured rule block. Empty selector lists match anything.
type Rule struct {
	Name string
	// Templates, Projects, Kinds, Requesters select the runs the rule
	// covers; an empty list matches any value.
	Templates, Projects, Kinds, Requesters []string
	// MaxDestroy holds a proposal whose plan destroys more resources than
	// this (Summary.Destroy); nil means no limit.
	MaxDestroy *int
	// Policy is the compiled plan_gate, nil when the rule has none.
	Policy *Policy
	// PolicyErr is why the rule's plan_gate did not compile; the rule then
	// holds every proposal it covers, showing this error (fails closed).
	PolicyErr error
	// RequireApproval holds every proposal the rule covers.
	RequireApproval bool
	// Approvers may release what this rule holds; empty means anyone with
	// the approve role. A rule with approvers and no plan-content condition
	// (no MaxDestroy, no plan_gate) holds every proposal it covers; with a
	// plan-content condition, approvers only name who releases its holds.
	Approvers []string
	// MinApprovals is how many different people Approvers names must
	// approve the same digest to release the rule's hold; 0 means 1.
	MinApprovals int
	// ExcludeDryRun exempts dry runs and drift checks (KindDryRun,
	// KindCheck) from the rule.
	ExcludeDryRun bool
}

// Request is the run a proposal comes from.
type Request struct {
	Template, Project, Kind, Requester string
	// Agent reports that the requester is an AI agent, not a person.
	Agent bool
	// Forge reports that the requester is a forge account (a pull
	// request's author or merger), not a user of the configuration.
	Forge bool
	// Exempted reports that an exemption covers this agent's request (set
	// it from Exempt); the request then takes a person's path.
	Exempted bool
	// RequireApproval and AIProposal report that the submission itself asks
	// for approval (--require-approval, or an AI proposal).
	RequireApproval, AIProposal bool
}

func (req Request) requesterKind() string {
	switch {
	case req.Agent:
		return "agent"
	case req.Forge:
		return "forge"
	}
	return "person"
}

func matches(list []string, v string) bool {
	return len(list) == 0 || slices.Contains(list, v)
}

// KindMatches reports whether a rule whose kinds list is kinds covers a run
// of kind: an empty list covers every kind, and a list covers each kind it
// names. A reconcile is the apply of a drift check's plan, so "apply"
// covers reconciles as well as applies, and "reconcile" covers reconciles
// alone. "plan" is a dry run only and "check" a drift check only, before
// planning (holds, the scan) as at the decision.
func KindMatches(kinds []string, kind string) bool {
	return matches(kinds, kind) || kind == KindReconcile && slices.Contains(kinds, KindApply)
}

// Covers reports whether the rule applies to req: its template, project,
// kind and requester each match the rule's lists (empty = any), and it is not
// a dry run or drift check under ExcludeDryRun.
func (r *Rule) Covers(req Request) bool {
	if r.ExcludeDryRun && (req.Kind == KindDryRun || req.Kind == KindCheck) {
		return false
	}
	return matches(r.Templates, req.Template) && matches(r.Projects, req.Project) &&
		KindMatches(r.Kinds, req.Kind) && matches(r.Requesters, req.Requester)
}

// ExemptsDryRun reports whether the rule would cover req but for
// exclude_dry_run: req is a dry run or drift check the rule lets through.
// The spec has the configuration scanned for data sources that act before
// such an exemption is relied on ("What a plan runs, and what the gate
// reads"); the caller runs that scan when this is true.
func (r *Rule) ExemptsDryRun(req Request) bool {
	if !r.ExcludeDryRun || (req.Kind != KindDryRun && req.Kind != KindCheck) {
		return false
	}
	return matches(r.Templates, req.Template) && matches(r.Projects, req.Project) &&
		KindMatches(r.Kinds, req.Kind) && matches(r.Requesters, req.Requester)
}

// PlanContent reports whether the rule decides on what the plan contains:
// it has max_destroy or a plan_gate (compiled or failed to compile).
func (r *Rule) PlanContent() bool {
	return r.MaxDestroy != nil || r.Policy != nil || r.PolicyErr != nil
}

// WouldHold reports whether the rule, as an approval rule, holds req
// whatever its plan contains: it covers req and requires approval, or names
// approvers without a plan-content condition.
func (r *Rule) WouldHold(req Request) bool {
	if !r.Covers(req) {
		return false
	}
	return r.RequireApproval || (len(r.Approvers) > 0 && !r.PlanContent())
}

// NeedsSavedPlan reports whether an apply runs in two steps (plan -out, then
// apply of the saved plan) rather than apply -auto-approve (spec: "A gated
// apply carries out the approved plan"): a plan-content rule covers it, an
// approval rule would hold it, its submission asks for approval
// (RequireApproval, AIProposal), or an agent asks for it without an
// exemption.
func NeedsSavedPlan(rules []*Rule, req Request) bool {
	if req.RequireApproval || req.AIProposal || (req.Agent && !req.Exempted) {
		return true
	}
	for _, r := range rules {
		if r.Covers(req) && (r.PlanContent() || r.WouldHold(req)) {
			return true
		}
	}
	return false
}

// Exemption lets an agent's runs take a person's path ("agent runs are held
// by default"). Empty lists match anything, except Agents: an exemption
// names the agents it covers.
type Exemption struct {
	Name                     string
	Agents, Templates, Kinds []string
}

// Exempt returns the first exemption that covers req's agent, template and
// kind. A request from a person is never exempted (it needs none).
func Exempt(ex []*Exemption, req Request) (*Exemption, bool) {
	if !req.Agent {
		return nil, false
	}
	for _, e := range ex {
		if len(e.Agents) > 0 && slices.Contains(e.Agents, req.Requester) &&
			matches(e.Templates, req.Template) && matches(e.Kinds, req.Kind) {
			return e, true
		}
	}
	return nil, false
}

// ReservedRuleNames are the names of the holds the server makes itself
// (see Reason). A configured rule may not take one: releases are recorded
// by rule name, so a rule named like one would be released with it.
var ReservedRuleNames = []string{"require_approval", "ai_proposal", "agent", "gate", "reconcile"}

// Reason says why a proposal is held or refused. Rule is the rule's name,
// or for a reason that is not a configured rule's: "require_approval" or
// "ai_proposal" (the submission asks for approval), "agent" (an agent asked
// and no exemption covers it), "gate" (the plan could not be read),
// "reconcile" (a reconcile of a drift check's plan, always held).
type Reason struct {
	Rule, Reason string
	// Approvers may release this hold; empty means anyone with the approve
	// role.
	Approvers []string
	// MinApprovals is how many different people must approve (0 means 1).
	MinApprovals int
}

// Decision is the rules' decision on a planned proposal, with every reason
// found (the gate does not stop at the first), in rule order.
type Decision struct {
	Outcome         Outcome
	Holds, Refusals []Reason
}

// Decide decides on the apply a saved plan proposes (spec: "A gated apply
// carries out the approved plan", "An apply an AI agent asks for").
// planJSON is `tofu show -json PLANFILE`; sum is AnalyzePlan's result for it,
// or nil to have Decide analyse it; timeout bounds each plan_gate
// evaluation.
//
// For each rule covering req: a plan destroying more than MaxDestroy holds;
// a plan_gate's deny refuses and its hold holds; a plan_gate that failed to
// compile or to evaluate (error, timeout) holds with the error; an approval
// rule (WouldHold) holds. A submission asking for approval holds whatever the
// rules say; an agent's request holds unless an exemption covers it
// (req.Exempted). A plan that cannot be read holds (fails closed). For a
// reconcile (req.Kind KindReconcile) every check that cannot run — the plan
// unreadable, a plan_gate that does not compile, cannot read its input,
// errors or times out — refuses instead of holding: a drift check's plan
// is proposed again by a new check, never released past a rule that could
// not weigh it. Any refusal makes the outcome Refuse, else any hold makes
// it Hold, else Pass.
func Decide(ctx context.Context, req Request, planJSON []byte, sum *Summary, rules []*Rule, timeout time.Duration) Decision {
	x := &decider{req: req}
	x.requestHolds()
	if sum == nil {
		var err error
		if sum, err = AnalyzePlan(planJSON); err != nil {
			x.cannotRun("gate", fmt.Sprintf("the gate cannot read the plan, so it holds the apply: %v", err), nil)
		}
	}
	in := &lazyInput{planJSON: planJSON, sum: sum, reads: coveringReads(rules, req), run: RunInfo{
		Template: req.Template, Project: req.Project, Kind: req.Kind,
		Requester: req.Requester, RequesterKind: req.requesterKind(),
	}}
	for _, r := range rules {
		if r.Covers(req) {
			n := len(x.d.Holds)
			x.weigh(ctx, r, sum, in, timeout)
			for i := n; i < len(x.d.Holds); i++ {
				x.d.Holds[i].MinApprovals = r.MinApprovals
			}
		}
	}
	switch {
	case len(x.d.Refusals) > 0:
		x.d.Outcome = Refuse
	case len(x.d.Holds) > 0:
		x.d.Outcome = Hold
	default:
		x.d.Outcome = Pass
	}
	return x.d
}

// decider gathers the reasons Decide finds for one request.
type decider struct {
	req Request
	d   Decision
}

func (x *decider) hold(rule, reason string, approvers []string) {
	x.d.Holds = append(x.d.Holds, Reason{Rule: rule, Reason: reason, Approvers: approvers})
}

// cannotRun is a check that could not weigh the plan: it holds an apply and
// refuses a reconcile (fails closed).
func (x *decider) cannotRun(rule, reason string, approvers []string) {
	if x.req.Kind == KindReconcile {
		reason = strings.Replace(reason, "so the rule holds the apply", "so the rule refuses the reconcile", 1)
		reason = strings.Replace(reason, "so it holds the apply", "so it refuses the reconcile", 1)
		x.d.Refusals = append(x.d.Refusals, Reason{Rule: rule, Reason: reason + " (a reconcile is refused, never held, when a rule cannot weigh its plan)"})
		return
	}
	x.hold(rule, reason, approvers)
}

// requestHolds holds for what the request itself says, whatever the rules
// say: a submission asking for approval, an AI's proposal, an agent's
// request no exemption covers.
func (x *decider) requestHolds() {
	req := x.req
	switch {
	case req.RequireApproval && req.Forge:
		x.hold("require_approval", "a merge on the forge proposed this apply, and a merge is not an approval: it waits for a person whatever the rules say", nil)
	case req.RequireApproval:
		x.hold("require_approval", "the submission asks for approval (require_approval): the apply waits for a person whatever the rules say", nil)
	}
	if req.AIProposal {
		x.hold("ai_proposal", "an AI proposed this apply: it waits for a person whatever the rules say", nil)
	}
	if req.Agent && !req.Exempted {
		what := req.Kind
		if what == "" {
			what = "run"
		}
		x.hold("agent", fmt.Sprintf("agent %s asked for this %s: an agent's proposal waits for a person unless an exemption covers it", req.Requester, what), nil)
	}
}

// weigh applies one rule covering the request: max_destroy, then its
// plan_gate, then its approval requirement. sum is nil when the plan cannot
// be read.
func (x *decider) weigh(ctx context.Context, r *Rule, sum *Summary, in *lazyInput, timeout time.Duration) {
	if r.MaxDestroy != nil && sum != nil && sum.Destroy > *r.MaxDestroy {
		x.hold(r.Name, fmt.Sprintf("plan destroys %d %s; max_destroy is %d (%s)",
			sum.Destroy, plural(sum.Destroy, "resource", "resources"), *r.MaxDestroy, listAddresses(sum.DestroyedAddresses(), 10)), r.Approvers)
	}
	if r.MaxDestroy != nil && sum == nil {
		x.cannotRun(r.Name, "max_destroy cannot be checked: the plan cannot be read", r.Approvers)
	}
	switch {
	case r.PolicyErr != nil:
		x.cannotRun(r.Name, fmt.Sprintf("plan_gate does not compile, so the rule holds the apply: %v", r.PolicyErr), r.Approvers)
	case r.Policy != nil && sum == nil:
		x.cannotRun(r.Name, fmt.Sprintf("plan_gate %s cannot run: the plan cannot be read", r.Policy.Name()), r.Approvers)
	case r.Policy != nil:
		x.evaluate(ctx, r, in, timeout)
	}
	if r.WouldHold(x.req) {
		x.hold(r.Name, "the rule requires approval", r.Approvers)
	}
}

// evaluate runs the rule's plan_gate on the policy input: each deny refuses
// and each hold holds; an input or evaluation error cannot run.
func (x *decider) evaluate(ctx context.Context, r *Rule, in *lazyInput, timeout time.Duration) {
	input, err := in.value()
	if err != nil {
		x.cannotRun(r.Name, fmt.Sprintf("plan_gate %s cannot run: %v", r.Policy.Name(), err), r.Approvers)
		return
	}
	res, err := r.Policy.EvaluateValue(ctx, input, timeout)
	if err != nil {
		x.cannotRun(r.Name, fmt.Sprintf("plan_gate failed, so the rule holds the apply: %v", err), r.Approvers)
		return
	}
	// A message may quote plan values; it is escaped as one value so the
	// Sentence every screen shows it through reads as it is.
	for _, m := range res.Deny {
		x.d.Refusals = append(x.d.Refusals, Reason{Rule: r.Name, Reason: screentext.Field(m)})
	}
	for _, m := range res.Hold {
		x.hold(r.Name, screentext.Field(m), r.Approvers)
	}
}

// coveringReads merges the parts of the plan that the policies of the rules
// covering req read, so the input converts them once.
func coveringReads(rules []*Rule, req Request) planReads {
	var reads planReads
	for _, r := range rules {
		if r.Policy != nil && r.Covers(req) {
			reads.merge(r.Policy.reads)
		}
	}
	return reads
}

// lazyInput is the policy input for a plan, built on first use and then
// shared by every plan_gate.
type lazyInput struct {
	planJSON []byte
	sum      *Summary
	run      RunInfo
	reads    planReads
	built    bool
	input    ast.Value
	err      error
}

// value returns the input, building it the first time.
func (in *lazyInput) value() (ast.Value, error) {
	if !in.built {
		in.built = true
		in.input, in.err = newPolicyInput(in.planJSON, in.sum, in.run, in.reads)
	}
	return in.input, in.err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// listAddresses joins up to max addresses, noting how many more there are.
func listAddresses(addrs []string, max int) string {
	if len(addrs) <= max {
		return strings.Join(addrs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(addrs[:max], ", "), len(addrs)-max)
}
