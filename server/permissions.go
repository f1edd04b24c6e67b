package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// Who may approve, reject and cancel: one function each, used by the SSH
// commands and the console alike.

// pendingHolds returns the holds of r's current proposal that no approval
// has released yet: a hold is released by an approval of the same stage and
// digest that names its rule. Nil when r holds no proposal.
func pendingHolds(r store.Run) []store.Hold {
	p := r.Proposal
	if p == nil {
		return nil
	}
	released := map[string]bool{}
	for _, a := range r.Approvals {
		if a.Decision == DecisionApprove && a.Stage == p.Stage && a.Digest == p.Digest {
			for _, rule := range a.Rules {
				released[rule] = true
			}
		}
	}
	var out []store.Hold
	for _, h := range p.Holds {
		if !released[h.Rule] {
			out = append(out, h)
		}
	}
	return out
}

// releasedBy returns who released rule on r's current proposal, or "".
func releasedBy(r store.Run, rule string) string {
	p := r.Proposal
	if p == nil {
		return ""
	}
	for _, a := range r.Approvals {
		if a.Decision == DecisionApprove && a.Stage == p.Stage && a.Digest == p.Digest && slices.Contains(a.Rules, rule) {
			return a.By
		}
	}
	return ""
}

// names reports whether who may release h: one of its approvers, or anyone
// with the approve role when the rule names none.
func (h holdOf) names(who string) bool {
	return len(h.Approvers) == 0 || slices.Contains(h.Approvers, who)
}

type holdOf store.Hold

// releasable returns the rules of r's pending holds that who may release.
func releasable(r store.Run, who Identity) []string {
	var rules []string
	for _, h := range pendingHolds(r) {
		if holdOf(h).names(who.Name) {
			rules = append(rules, h.Rule)
		}
	}
	return rules
}

// isSelf reports whether who asked for r as a person, or under the same
// name as the forge account that asked (the merger) or wrote the pull
// request (its author): a forge login is taken to be the user of that name
// (docs/forges.md), so neither may approve the change they made or merged.
func isSelf(r store.Run, who Identity) bool {
	if who.Agent {
		return false
	}
	if r.RequesterKind == store.RequesterForge {
		return r.Requester == who.Name || r.PullRequest != nil && r.PullRequest.Author == who.Name
	}
	return r.RequesterKind == RequesterPerson && r.Requester == who.Name
}

// mayApprove says whether who may release anything of r's held proposal now:
// nil, or a coded refusal that says why and what to do. It does not check
// the digest; Approve does.
func (s *Server) mayApprove(r store.Run, who Identity) error {
	switch {
	case who.Agent:
		return errorf(ErrForbidden, "agents cannot approve; a person with the approve role must")
	case !who.Has("approve"):
		return errorf(ErrForbidden, "%s may not approve: the approve role is missing from user %q in the configuration", who.Name, who.Name)
	case r.Status != StatusAwaitingApproval || r.Proposal == nil:
		return notHeld(r)
	case r.Proposal.Stale:
		return errorf(ErrConflict, "run %s's plan is stale: %s", r.ID, r.Proposal.StaleReason)
	case r.Proposal.Used:
		return errorf(ErrConflict, "run %s's plan was already used", r.ID)
	case isSelf(r, who) && !s.config().Server.AllowSelfApproval:
		return selfRefusal(r, who)
	}
	if len(releasable(r, who)) > 0 {
		return nil
	}
	var waits []string
	for _, h := range pendingHolds(r) {
		waits = append(waits, fmt.Sprintf("rule %s waits for %s", h.Rule, s.waitsForIn(r, h)))
	}
	for _, h := range r.Proposal.Holds {
		if by := releasedBy(r, h.Rule); by == who.Name {
			return errorf(ErrConflict, "%s already released rule %s of run %s; %s", who.Name, h.Rule, r.ID, strings.Join(waits, "; "))
		}
	}
	return errorf(ErrForbidden, "%s is not among the approvers of any rule that still holds run %s: %s", who.Name, r.ID, strings.Join(waits, "; "))
}

// mayReject says whether who may turn r's held proposal down: a person with
// the approve role whom a holding rule names (or any such person for a rule
// that names nobody). The requester may always cancel instead.
func (s *Server) mayReject(r store.Run, who Identity) error {
	switch {
	case who.Agent || !who.Has("approve"):
		return errorf(ErrForbidden, "%s may not reject: only people with the approve role can", who.Name)
	case r.Status != StatusAwaitingApproval || r.Proposal == nil:
		return notHeld(r)
	}
	var named []string
	for _, h := range pendingHolds(r) {
		if holdOf(h).names(who.Name) {
			return nil
		}
		named = append(named, h.Approvers...)
	}
	slices.Sort(named)
	return errorf(ErrForbidden, "%s may not reject run %s: none of the rules that still hold it names them (their approvers: %s); they may reject it, and its requester or a person with the approve role may cancel it", who.Name, r.ID, strings.Join(slices.Compact(named), ", "))
}

// mayCancel says whether who may cancel r: the requester their own run, a
// person with the approve role any run; a run that ended cannot be.
func (s *Server) mayCancel(r store.Run, who Identity) error {
	own := r.Requester == who.Name && (r.RequesterKind == RequesterAgent) == who.Agent
	if !own && (who.Agent || !who.Has("approve")) {
		return errorf(ErrForbidden, "%s may cancel only runs they asked for; run %s was asked for by %s (people with the approve role may cancel any run)", who.Name, r.ID, r.Requester)
	}
	if r.Status.Final() {
		return errorf(ErrConflict, "run %s already ended (%s)", r.ID, r.Status)
	}
	return nil
}

// waitingFor reports whether who can release something of r now: the mark
// "waiting for you" in the run list.
func (s *Server) waitingFor(r store.Run, who Identity) bool {
	return s.mayApprove(r, who) == nil
}

// waitsFor names who may release h, for people.
func waitsFor(h store.Hold) string {
	if len(h.Approvers) == 0 {
		return "anyone with the approve role"
	}
	return strings.Join(h.Approvers, " or ")
}

// waitsForIn is waitsFor for a hold of run r: an approver who asked for the
// run may not release it (unless allow_self_approval), so a hold whose only
// approvers asked says that no one can.
func (s *Server) waitsForIn(r store.Run, h store.Hold) string {
	if len(h.Approvers) == 0 || s.config().Server.AllowSelfApproval || r.RequesterKind != RequesterPerson {
		return waitsFor(h)
	}
	others := slices.DeleteFunc(slices.Clone(h.Approvers), func(a string) bool { return a == r.Requester })
	if len(others) == 0 {
		return "no one who may: its only approver " + r.Requester + " asked for this run (allow_self_approval is off); cancel it, or have an operator add an approver"
	}
	return strings.Join(others, " or ")
}

// HoldView is one rule that holds a proposal ([api.HoldView]).
type HoldView = api.HoldView

// holdViews lists the rules that hold r's current proposal, released or not,
// in the order the gate gave them.
func (s *Server) holdViews(r store.Run) []HoldView {
	if r.Proposal == nil {
		return nil
	}
	var out []HoldView
	for _, h := range r.Proposal.Holds {
		v := HoldView{Rule: h.Rule, Reason: h.Reason, Approvers: h.Approvers, ReleasedBy: releasedBy(r, h.Rule)}
		if v.ReleasedBy == "" && r.Status == StatusAwaitingApproval {
			v.WaitsFor = s.waitsForIn(r, h)
		}
		out = append(out, v)
	}
	return out
}

// selfRefusal is the refusal of who's approval of a run they asked for
// (or, for a merge's apply, merged or wrote).
func selfRefusal(r store.Run, who Identity) error {
	if r.RequesterKind == store.RequesterForge {
		return errorf(ErrForbidden, "%s merged or wrote the pull request whose merge proposed run %s (as the forge names them) and cannot approve it; another approver must (allow_self_approval is off)", who.Name, r.ID)
	}
	return errorf(ErrForbidden, "%s asked for run %s and cannot approve it; another approver must (allow_self_approval is off)", who.Name, r.ID)
}
