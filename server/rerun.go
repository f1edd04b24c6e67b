package server

import (
	"context"
	"fmt"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// Rerun submits a new run that repeats run id: the same template, kind,
// approval request and answers, the secret ones taken from the run's sealed
// store and never shown or retyped. The new run records which run it
// repeats and is checked like any launch against the template as it is
// now, so a survey that changed incompatibly refuses it, naming the field;
// an answer that was sealed stays sealed (and unquoted in a refusal) even
// if the field is no longer sensitive.
// Only a run that ended without applying (stale, failed, rejected,
// cancelled, refused, interrupted) or that succeeded may be rerun; who must
// be allowed to launch.
func (s *Server) Rerun(ctx context.Context, who Identity, id string) (store.Run, error) {
	return s.rerun(ctx, who, id, false)
}

// rerun is Rerun; aiProposal marks a repeated apply an AI proposal (the
// MCP tool's rerun), so it waits for a person whatever the rules say.
func (s *Server) rerun(ctx context.Context, who Identity, id string, aiProposal bool) (store.Run, error) {
	old, err := s.getRun(id)
	if err != nil {
		return store.Run{}, err
	}
	if !old.Status.Final() {
		return store.Run{}, errorf(ErrConflict, "run %s %s; rerun repeats a run that ended (cancel it first, or wait)", id, api.StatusSaid(old.Status))
	}
	if old.Answers == nil {
		return store.Run{}, errorf(ErrConflict, "run %s was stored before runs kept their answers for rerun; launch it again with its answers", id)
	}
	answers := map[string]string{}
	for k, v := range old.Answers {
		answers[k] = v
	}
	if len(old.SealedAnswers) > 0 {
		secret, err := openSealedMap(s.key, old.ID, old.SealedAnswers)
		if err != nil {
			return store.Run{}, fmt.Errorf("opening run %s's sealed answers: %w", id, err)
		}
		for k, v := range secret {
			answers[k] = v
		}
	}
	req := LaunchRequest{Template: old.Template, Kind: old.Kind, Answers: answers,
		RequireApproval: old.RequireApproval, AIProposal: old.AIProposal || aiProposal && old.Kind == KindApply, Secret: old.SecretVars}
	if old.Commit != nil && old.Commit.Ref != "" {
		req.Ref = old.Commit.Ref // a pull request's plan plans its ref again, as it names a commit now
	}
	run, err := s.launch(who, req, old.ID)
	clear(answers)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Field != "" {
			return store.Run{}, fieldErrorf(e.Field, "%s — the template %s changed since run %s, so it cannot be rerun as it was; launch it with new answers", e.Msg, old.Template, id)
		}
		return store.Run{}, err
	}
	return run, nil
}
