package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/store"
)

// One decision, carried forward: a reconcile is decided on the plan its
// check kept — the rendering (`tofu show -json`) the check sealed beside
// it, read by the rules now with the reconcile's own requester and kind —
// and the decision the check recorded for its plan is the floor. Every rule
// that held the check's plan holds the reconcile, released by the same
// approvers; every rule that refused it refuses the reconcile; a refusal is
// never turned into a hold; and a rule that cannot weigh the plan refuses a
// reconcile (gate.Decide fails closed that way for KindReconcile).

// serverHolds are holds the server makes about the one who asked, not
// about the plan; a check's are not carried to its reconcile, which is
// decided again for its own requester.
var serverHolds = []string{"agent", "require_approval", "ai_proposal"}

// openKeptRendering unseals the rendering check kept beside its plan, bound
// to the check and the plan's digest. A check that kept none (one kept
// before renderings were kept) cannot be reconciled: the rules would decide
// on less than the plan.
func (s *Server) openKeptRendering(check store.Run) ([]byte, error) {
	digest := check.Check.Plan.Digest
	blob, err := s.db.GetBlob(blobDriftRendering, check.ID)
	if err != nil {
		return nil, errorf(ErrConflict, "check %s kept no rendering of its plan for the rules to read, so no reconcile can be decided on it; run the check again (`launch %s --check`) and propose the reconcile from the new check", check.ID, check.Template)
	}
	plain, _, err := seal.Open(s.key, renderingBinding(check.ID, digest), blob)
	if err != nil {
		return nil, errorf(ErrConflict, "check %s's kept rendering of its plan does not open as the rendering of plan %s (%v); run the check again", check.ID, digest, err)
	}
	return plain, nil
}

// reconcileMasker is the masker of the texts of a reconcile of check: what
// the check's own masker knew and can be known again without running
// anything — the server's own keys, the configuration's secrets a pull
// request's check meets, the template's credential values, the check's
// secret answers (every form, secretForms) and those earlier runs of the
// project were given — and the values the plan's rendering marks
// sensitive. A command-source credential's output is not known again: the
// reconcile shows the change set the check's masker masked
// (carriedChanges). An error says the check's or the project's sealed
// answers cannot be opened.
func (s *Server) reconcileMasker(check store.Run, rendering []byte) (*mask.Masker, error) {
	m := mask.New()
	s.maskOwnKeys(m)
	s.maskConfigSecrets(m, check)
	s.maskCredentialValues(m, check.Template)
	if _, _, err := s.runVars(check, m); err != nil {
		return nil, fmt.Errorf("check %s: %w", check.ID, err)
	}
	if len(check.SealedAnswers) > 0 {
		typed, err := openSealedMap(s.key, check.ID, check.SealedAnswers)
		if err != nil {
			return nil, fmt.Errorf("opening check %s's sealed answers: %w", check.ID, err)
		}
		for _, v := range typed {
			m.Add(secretForms(v)...)
		}
		clear(typed)
	}
	known, err := s.rememberedSecrets(check.Project)
	if err != nil {
		return nil, err
	}
	m.Add(known...)
	if sens, err := gate.SensitiveValues(rendering); err == nil {
		m.Add(sens...)
	}
	return m, nil
}

// maskCredentialValues adds to m the values template's credentials hold
// in the configuration (env values and tokens), as a run's credentials
// step does; a command-source credential's output is known only to the run
// that ran it.
func (s *Server) maskCredentialValues(m *mask.Masker, template string) {
	cfg := s.config()
	t := cfg.Templates[template]
	if t == nil {
		return
	}
	for _, name := range t.Credentials {
		c := cfg.Credentials[name]
		if c == nil {
			continue
		}
		for _, v := range c.Env {
			m.Add(v)
		}
		m.Add(c.Token)
	}
}

// reconcileDecision decides reconcile r of check on rendering, with the
// check's recorded decision as the floor, and returns the holds the
// reconcile carries besides the reconcile hold. A refusal — the rules now,
// or the check's — is an ErrConflict naming every reason; nothing is then
// proposed. The rules' reasons are masked with m (reconcileMasker).
func (s *Server) reconcileDecision(ctx context.Context, check store.Run, r store.Run, rendering []byte, m *mask.Masker) ([]store.Hold, error) {
	req := s.gateRequest(r)
	req.Kind = string(KindReconcile)
	dec := gate.Decide(ctx, req, rendering, nil, s.currentRules(), s.policyTime)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("deciding the reconcile: %w", err)
	}
	floor := check.Check.Plan
	refusals := slices.Clone(floor.Refusals)
	for _, h := range dec.Refusals {
		refusals = addHold(refusals, store.Hold{Rule: h.Rule, Reason: m.String(h.Reason)})
	}
	if len(refusals) > 0 {
		return nil, errorf(ErrConflict, "the rules refuse applying check %s's plan as a reconcile: %s. Nothing was proposed; no approval can release a refused plan", check.ID, reasons(refusals))
	}
	var now []store.Hold
	for _, h := range dec.Holds {
		now = append(now, store.Hold{Rule: h.Rule, Reason: m.String(h.Reason), Approvers: h.Approvers, MinApprovals: h.MinApprovals})
	}
	holds, err := carryForward(floor.Holds, now)
	if err != nil {
		return nil, errorf(ErrConflict, "check %s's plan cannot be proposed as a reconcile: %v", check.ID, err)
	}
	return holds, nil
}

// carryForward merges the holds a check's plan was decided with (floor)
// and those of its reconcile's own decision (now), floor first, leaving out
// the server's holds about the check's requester (serverHolds) and
// repeated reasons. A rule named in both is released by the approvers both
// allow: where each names approvers, those named by every one; where one
// names none (anyone with the approve role), the other's. A rule whose
// approvers have no one in common is an error: no one could release it as
// both decisions require.
func carryForward(floor, now []store.Hold) ([]store.Hold, error) {
	var all []store.Hold
	for _, h := range floor {
		if !slices.Contains(serverHolds, h.Rule) {
			all = append(all, h)
		}
	}
	all = append(all, now...)
	who := map[string][]string{}
	for _, h := range all {
		a, seen := who[h.Rule]
		switch {
		case !seen || len(a) == 0:
			who[h.Rule] = h.Approvers
		case len(h.Approvers) > 0:
			both := slices.DeleteFunc(slices.Clone(a), func(n string) bool { return !slices.Contains(h.Approvers, n) })
			if len(both) == 0 {
				return nil, fmt.Errorf("rule %s held the check's plan for %s and holds the reconcile for %s, and no one is both; run the check again under the rules now", h.Rule, strings.Join(a, " or "), strings.Join(h.Approvers, " or "))
			}
			who[h.Rule] = both
		}
	}
	var out []store.Hold
	for _, h := range all {
		h.Approvers = who[h.Rule]
		out = addHold(out, h)
	}
	return out, nil
}

// addHold appends h to hs unless a hold of the same rule with the same
// reason is there already.
func addHold(hs []store.Hold, h store.Hold) []store.Hold {
	if slices.ContainsFunc(hs, func(o store.Hold) bool { return o.Rule == h.Rule && o.Reason == h.Reason }) {
		return hs
	}
	return append(hs, h)
}
