package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchtender/switchtender/store"
)

// errCancelled is the cause a run's context carries when someone cancelled
// it; errShutdown when the server stopped under it. The executor tells the
// two apart by the cause alone.
type cancelCause struct{ by string }

func (c cancelCause) Error() string { return "cancelled by " + c.by }

var errShutdown = errors.New("the server is stopping")

// Cancel stops a run: a queued one never starts; a held one is ended and its
// sealed plan dropped; a running one is marked in the same transaction and
// its tool gets an interrupt first, a kill only after cancel_grace, and the
// executor ends it cancelled. See mayCancel for who may.
func (s *Server) Cancel(ctx context.Context, who Identity, id string) (store.Run, error) {
	run, _, err := s.cancelRun(ctx, who, id)
	return run, err
}

// cancelRun is Cancel that also returns the status the run had when the
// cancel took hold (queued, running or awaiting_approval), so a reply can
// say what it did.
func (s *Server) cancelRun(ctx context.Context, who Identity, id string) (store.Run, Status, error) {
	who, err := s.current(who)
	if err != nil {
		return store.Run{}, "", err
	}
	msg := "Cancelled by " + who.Name + " before it ran further."
	var running bool
	var was Status
	run, err := s.updateAudited(id, func(r *store.Run) error {
		if err := s.mayCancel(*r, who); err != nil {
			return err
		}
		was = r.Status
		running = was == StatusRunning
		if running {
			if r.CancelRequested == "" {
				r.CancelRequested = who.Name
			}
			return nil
		}
		r.Message = msg
		return setStatus(r, StatusCancelled)
	}, func(store.Run) store.AuditEvent {
		if running {
			return auditEvent(id, who.Name, "cancel", "cancel requested while it ran: it is interrupted, or ended if no worker holds it")
		}
		return auditEvent(id, who.Name, string(StatusCancelled), msg)
	})
	if err != nil {
		return store.Run{}, "", err
	}
	if running {
		s.sched.Cancel(id, cancelCause{by: who.Name})
		if dequeued, _ := s.relay.cancel(id); dequeued {
			// A pool run between its phases waits in the pool's queue with
			// status running and no worker: it ends here.
			return s.endDequeued(run, who)
		}
		return run, was, nil
	}
	s.sched.Cancel(id, cancelCause{by: who.Name})
	s.relay.dequeue(id)
	s.dropHeld(id)
	return run, was, nil
}

// endDequeued ends as cancelled a running pool run that the cancel took
// out of its pool's queue (no worker held it): nothing more runs for it.
func (s *Server) endDequeued(run store.Run, who Identity) (store.Run, Status, error) {
	msg := fmt.Sprintf("Cancelled by %s while it waited for a worker of its pool; nothing more ran.", who.Name)
	ended, err := s.endCancelled(run.ID, who.Name, msg)
	if err != nil {
		return run, StatusRunning, err
	}
	return ended, StatusQueued, nil
}

// endCancelledBetweenPhases ends as cancelled a pool run whose cancel came
// while no worker held it and the cancel could not take it out of a queue
// (the rules were deciding on its plan, or a worker was about to take its
// apply phase): nothing more runs for it.
func (s *Server) endCancelledBetweenPhases(r store.Run) {
	msg := fmt.Sprintf("Cancelled by %s between its plan and its apply; nothing was applied.", r.CancelRequested)
	if _, err := s.endCancelled(r.ID, "switchtender", msg); err != nil {
		s.log.Error("ending a cancelled run", "run", r.ID, "err", err)
	}
}

// endCancelled ends run id cancelled with msg, drops what it held, and
// audits it as by's act.
func (s *Server) endCancelled(id, by, msg string) (store.Run, error) {
	ended, err := s.transitionAudited(id, StatusCancelled, func(r *store.Run) error { r.Message = msg; return nil },
		func(store.Run) store.AuditEvent { return auditEvent(id, by, string(StatusCancelled), msg) })
	if err != nil {
		return store.Run{}, err
	}
	s.dropHeld(id)
	return ended, nil
}
