package server

import (
	"context"
	"fmt"
	"time"

	"github.com/switchtender/switchtender/store"
)

// Reject ends a held run with a reason; its sealed plan is dropped. Only a
// person whom one of the holding rules names (see mayReject) may.
func (s *Server) Reject(ctx context.Context, who Identity, id, reason string) (store.Run, error) {
	if reason == "" {
		reason = "no reason given"
	}
	run, err := s.db.UpdateRun(id, func(r *store.Run) error {
		if err := s.mayReject(*r, who); err != nil {
			return err
		}
		r.Approvals = append(r.Approvals, store.Approval{By: who.Name, Stage: r.Proposal.Stage, Digest: r.Proposal.Digest, Decision: string(DecisionReject), Reason: reason, At: time.Now()})
		r.Message = fmt.Sprintf("Rejected by %s: %s", who.Name, reason)
		return setStatus(r, StatusRejected)
	})
	if err != nil {
		return store.Run{}, s.coded(id, err)
	}
	s.changed(run)
	s.dropSealedPlan(id)
	s.audit(id, who.Name, "reject", reason)
	var rules []string
	for _, h := range run.Proposal.Holds {
		rules = append(rules, h.Rule)
	}
	s.log.Info("rejection", "run", id, "template", run.Template, "by", who.Name, "stage", run.Proposal.Stage,
		"digest", run.Proposal.Digest, "rules", rules, "reason", s.scrub(reason))
	return run, nil
}
