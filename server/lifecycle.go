package server

import (
	"fmt"
	"time"

	"github.com/switchtender/switchtender/store"
)

// transition moves run id to status to in one store transaction: it reads
// the run, checks the move with [Status.To], lets fn (may be nil) change the
// run and veto the move with an error, sets the status (and FinishedAt for a
// final one), writes, and tells watchers. Every status change the server
// makes goes through here or [Server.transitionAudited].
func (s *Server) transition(id string, to Status, fn func(r *store.Run) error) (store.Run, error) {
	return s.transitionAudited(id, to, fn, nil)
}

// transitionAudited is transition that also appends the audit entry entry
// (may be nil: none) makes of the run as written, in the same transaction,
// so the move and its entry are stored together or not at all.
func (s *Server) transitionAudited(id string, to Status, fn func(r *store.Run) error, entry func(r store.Run) store.AuditEvent) (store.Run, error) {
	return s.updateAudited(id, func(r *store.Run) error {
		if err := r.Status.To(to); err != nil {
			return fmt.Errorf("run %s: %w", r.ID, conflictOf(err))
		}
		if fn != nil {
			if err := fn(r); err != nil {
				return err
			}
		}
		return setStatus(r, to)
	}, entry)
}

// updateAudited updates run id with fn and appends the audit entry entry
// (may be nil: none) makes of the run as written, in one store
// transaction, then tells watchers. Its errors are coded (s.coded).
func (s *Server) updateAudited(id string, fn func(r *store.Run) error, entry func(r store.Run) store.AuditEvent) (store.Run, error) {
	var run store.Run
	err := s.db.Update(func(tx *store.Tx) error {
		var err error
		if run, err = tx.UpdateRun(id, fn); err != nil || entry == nil {
			return err
		}
		return tx.Audit(entry(run))
	})
	if err != nil {
		return store.Run{}, s.coded(id, err)
	}
	s.changed(run)
	return run, nil
}

// auditEvent is the audit entry of actor's action on run runID (""
// for none), stamped now.
func auditEvent(runID, actor, action, detail string) store.AuditEvent {
	return store.AuditEvent{At: time.Now(), RunID: runID, Actor: actor, Action: action, Detail: detail}
}

// changed tells watchers a run changed and keeps the held index current;
// every write of a status calls it.
func (s *Server) changed(r store.Run) {
	s.held.note(s.runDir(r), r)
	s.noteRun(r)
	s.forge.runChanged(r)
	s.broker.RunChanged()
}

// setStatus moves r to status to, guarded by [Status.To], inside a store
// transaction the caller holds; it sets StatusAt, PrevStatus (for the
// operator log, never stored) and FinishedAt for a final status.
func setStatus(r *store.Run, to Status) error {
	if err := r.Status.To(to); err != nil {
		return fmt.Errorf("run %s: %w", r.ID, conflictOf(err))
	}
	r.PrevStatus, r.Status, r.StatusAt = r.Status, to, time.Now()
	if to.Final() {
		r.FinishedAt = r.StatusAt
	}
	return nil
}
