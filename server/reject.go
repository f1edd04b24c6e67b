package server

import (
	"context"

	"fmt"
	"time"

	"github.com/switchtender/switchtender/exec/mask"

	"github.com/switchtender/switchtender/screentext"
	"github.com/switchtender/switchtender/store"
)

// Reject ends a held run with a reason; its sealed plan is dropped. Only a
// person whom one of the holding rules names (see mayReject) may.
func (s *Server) Reject(ctx context.Context, who Identity, id, reason string) (store.Run, error) {
	who, err := s.current(who)
	if err != nil {
		return store.Run{}, err
	}
	if reason == "" {
		reason = "no reason given"
	}
	reason = s.maskForRun(id, reason)
	// The message and the audit entry show the reason escaped as one value;
	// the configuration's credentials are masked first, as the escaped form
	// is one the operator log's scrubber would not know.
	shown := screentext.Field(s.scrub(reason))
	run, err := s.updateAudited(id, func(r *store.Run) error {
		if err := s.mayReject(*r, who); err != nil {
			return err
		}
		r.Approvals = append(r.Approvals, store.Approval{By: who.Name, Stage: r.Proposal.Stage, Digest: r.Proposal.Digest, Decision: DecisionReject, Reason: reason, At: time.Now()})
		r.Message = fmt.Sprintf("Rejected by %s: %s", screentext.Field(who.Name), shown)
		return setStatus(r, StatusRejected)
	}, func(store.Run) store.AuditEvent { return auditEvent(id, who.Name, "reject", shown) })
	if err != nil {
		return store.Run{}, err
	}
	s.dropHeld(id)
	var rules []string
	for _, h := range run.Proposal.Holds {
		rules = append(rules, h.Rule)
	}
	s.log.Info("rejection", "run", id, "template", run.Template, "by", who.Name, "stage", run.Proposal.Stage,
		"digest", run.Proposal.Digest, "rules", rules, "reason", s.scrub(reason))
	return run, nil
}

// maskForRun masks in text (a reason a person typed) the run's secret
// answers, in every form the masker knows, before it is stored, audited or
// logged: an approver may quote what the run's log showed them masked, or
// what they know. A run whose answers cannot be opened leaves text as it
// is (the rejection must not fail on it).
func (s *Server) maskForRun(id, text string) string {
	r, err := s.getRun(id)
	if err != nil {
		return text
	}
	m := mask.New()
	if _, _, err := s.runVars(r, m); err != nil {
		return text
	}
	return m.String(text)
}
