package server

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// planMessage receives a gated plan from the worker: where its text starts
// in the log, its declared sizes (a plan over relay.PlanLimit fails the run
// with its size and the limit), its parts, and its end, when the control
// node seals it and the rules decide. The plan is held only in memory.
func (h *relayHub) planMessage(l *relayLease, m relay.Msg) {
	switch m.Type {
	case relay.MsgPlanning:
		l.out.Flush()
		_ = l.sink.Flush()
		l.planFrom, _ = h.s.db.LogSize(l.job.runID)
	case relay.MsgPlanStart:
		if m.Size > relay.PlanLimit {
			h.finishLease(l, StatusFailed, -1, planTooLarge(l.kind, m.Size))
			return
		}
		if m.Size < 0 || m.JSONSize < 0 || m.JSONSize > relay.JSONLimit {
			h.finishLease(l, StatusFailed, -1, fmt.Sprintf("The worker declared a plan rendering of %d bytes, over the %d the control node reads; nothing was applied.", m.JSONSize, relay.JSONLimit))
			return
		}
		l.planSize, l.jsonSize = m.Size, m.JSONSize
		l.startFiles, l.planCommit = m.StartFiles, m.Commit
		if l.startFiles == nil {
			l.startFiles = map[string]string{} // none said: the apply finds none or starts nothing
		}
		clear(l.plan)
		// Both grow as they arrive: a declared size reserves nothing.
		l.plan, l.planJSON = make([]byte, 0, min(m.Size, 1<<20)), nil
	case relay.MsgPlanChunk:
		h.planChunk(l, m)
	case relay.MsgPlanEnd:
		h.planned(l)
	}
}

// planChunk appends a part, refusing more than the worker declared.
func (h *relayHub) planChunk(l *relayLease, m relay.Msg) {
	switch {
	case m.Part == "plan" && int64(len(l.plan)+len(m.Blob)) <= l.planSize:
		l.plan = append(l.plan, m.Blob...)
	case m.Part == "json" && int64(len(l.planJSON)+len(m.Blob)) <= l.jsonSize:
		l.planJSON = append(l.planJSON, m.Blob...)
	default:
		size := int64(len(l.plan) + len(m.Blob))
		msg := fmt.Sprintf("The worker sent more of the saved plan than it declared (%d bytes); nothing was applied.", size)
		if size > relay.PlanLimit {
			msg = planTooLarge(l.kind, size)
		}
		clear(l.plan)
		h.finishLease(l, StatusFailed, -1, msg)
	}
}

// planned seals the received plan with the server key (its plaintext only
// in memory), measures it and lets the rules decide, as the control node's
// own steps do: refused, held for approval, or passed on to an apply phase
// that any worker of the pool may take.
func (h *relayHub) planned(l *relayLease) {
	defer func() { clear(l.plan); clear(l.planJSON); l.plan, l.planJSON = nil, nil }()
	if int64(len(l.plan)) != l.planSize || int64(len(l.planJSON)) != l.jsonSize || l.planSize == 0 {
		h.finishLease(l, StatusFailed, -1, "The worker's saved plan arrived incomplete; nothing was applied.")
		return
	}
	if l.planCommit != nil {
		if _, err := h.s.db.UpdateRun(l.job.runID, func(r *store.Run) error { recordWorkerCommit(r, *l.planCommit); return nil }); err != nil {
			h.s.log.Error("recording a worker's commit", "run", l.job.runID, "err", err)
		}
	}
	run, err := h.s.db.GetRun(l.job.runID)
	if err != nil {
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("reading the run: %v", err))
		return
	}
	if run.CancelRequested != "" {
		h.finishLease(l, StatusCancelled, -1, fmt.Sprintf("Cancelled by %s before its plan was handed over; the plan was not kept and nothing was applied.", run.CancelRequested))
		return
	}
	x := h.execution(l, run, "seal")
	x.planJSON = l.planJSON
	if err := gate.RenderingNamesItsAddresses(l.planJSON); err != nil { // before anything reads it
		h.endWith(l, x, end(StatusRefused, -1, "The worker's rendering of the saved plan is not the plan's: %v. The rules decide on what the plan does, so it is refused; nothing was applied. Check worker %s.", err, run.PlannedBy))
		return
	}
	_ = l.sink.Flush()
	x.planText = h.s.logText(run.ID, l.planFrom)
	if run.Kind == KindCheck {
		x.current = "keep"
		err = checkMeasureStep(context.Background(), x)
		if err == nil {
			err = renderingIsThePlans(x, l.plan)
		}
		if err == nil {
			err = keepPlan(x, l.plan)
		}
		h.endWith(l, x, err)
		return
	}
	err = h.sealInMemory(x, l.plan)
	if err == nil {
		_ = measureStep(context.Background(), x)
		err = renderingIsThePlans(x, l.plan)
	}
	if err == nil {
		x.current = "decide"
		err = decideStep(context.Background(), x)
	}
	if err != nil {
		h.endWith(l, x, err)
		return
	}
	h.passOn(l, x.run)
}

// execution is the control node's side of a leased run, for the
// executor's own steps and end: the lease's log and masker, and the run's
// private directory on the control node (where nothing of a relayed run is
// written; its end wipes there, never elsewhere).
func (h *relayHub) execution(l *relayLease, run store.Run, current string) *execution {
	return &execution{s: h.s, run: run, masker: l.masker, sink: l.sink, out: l.out, current: current,
		private: filepath.Join(h.s.runsDir, run.ID), startFiles: l.startFiles}
}

// renderingIsThePlans refuses a plan whose rendering (the show -json the
// worker sent, which the rules read) does not name, per action, the
// resource instances the plan file itself changes (its protobuf, read here): the gate decides on what the
// plan does, not on what a worker says it does. A rendering the gate could
// not read at all holds the run anyway (summary nil).
func renderingIsThePlans(x *execution, plan []byte) error {
	if x.summary == nil {
		return nil
	}
	file, err := gate.PlanFileChanges(plan)
	if err != nil {
		return end(StatusRefused, -1, "The saved plan's own changes cannot be read to check the worker's rendering of it (%v); nothing was applied.", err)
	}
	if ok, why := gate.SameChanges(x.summary, file); !ok {
		return end(StatusRefused, -1, "The worker's rendering of the saved plan is not the plan's: %s. The rules decide on what the plan does, so it is refused; nothing was applied. Check worker %s.", why, x.run.PlannedBy)
	}
	return nil
}

// sealInMemory digests the plan, reads the state it was made from, and
// stores it sealed bound to the run; nothing of it touches the disk in
// clear.
func (h *relayHub) sealInMemory(x *execution, plan []byte) error {
	if err := x.sealPlan(plan); err != nil {
		return err
	}
	x.say("the saved plan (%d bytes) arrived from worker %s and was sealed with the server key", len(plan), h.workerOf(x.run.ID))
	return nil
}

// workerOf names the worker holding run id's lease.
func (h *relayHub) workerOf(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.leases[id]; l != nil {
		return l.worker.name
	}
	return "(none)"
}

// endWith ends a leased run through the executor's own end (the held
// proposal, the refusal, the failure), then drops the lease.
func (h *relayHub) endWith(l *relayLease, x *execution, err error) {
	if !h.takeBack(l) {
		return
	}
	x.recordEnd(context.Background(), err)
	l.sink.Close()
	h.release(l)
}

// passOn queues the apply phase of a plan no rule held: the run stays
// running and goes to the pool's next free worker with the saved plan.
func (h *relayHub) passOn(l *relayLease, r store.Run) {
	if !h.takeBack(l) {
		return
	}
	l.out.Flush()
	_ = l.sink.Flush()
	l.sink.Close()
	h.release(l)
	if now, err := h.s.db.GetRun(r.ID); err == nil && now.CancelRequested != "" {
		h.s.endCancelledBetweenPhases(now) // cancelled while the rules decided
		return
	}
	h.enqueue(r, l.job.pool)
}

// claim takes a leased run for worker: a queued run starts running; a
// running one in its apply phase (a plan no rule held, passed on) goes on.
func (h *relayHub) claim(id, worker string) (store.Run, error) {
	r, err := h.s.db.GetRun(id)
	if err == nil && r.Status == StatusRunning && r.Phase == phaseApply {
		r, err = h.s.db.UpdateRun(id, func(r *store.Run) error {
			if r.Status != StatusRunning {
				return fmt.Errorf("run %s %s", r.ID, api.StatusSaid(r.Status))
			}
			if r.CancelRequested != "" {
				return fmt.Errorf("run %s was cancelled by %s", r.ID, r.CancelRequested)
			}
			markWorker(r, worker, true)
			return nil
		})
		if err == nil {
			h.s.changed(r)
		}
		return r, err
	}
	return h.s.transition(id, StatusRunning, func(r *store.Run) error {
		if r.StartedAt.IsZero() {
			r.StartedAt = time.Now()
		}
		markWorker(r, worker, r.Kind == KindApply && gate.NeedsSavedPlan(h.s.currentRules(), h.s.gateRequest(*r)))
		return nil
	})
}

// relayPlan is a released plan on its way to the apply's worker.
type relayPlan struct {
	plain  []byte
	digest string
}

// releasedPlan is what an apply phase carries out, checked as verifyStep
// checks it: the proposal's plan, used once, whose digest the release
// covers, opened from its seal in memory. Nil for a plan phase.
func (h *relayHub) releasedPlan(r store.Run) (*relayPlan, error) {
	if r.Phase != phaseApply {
		return nil, nil
	}
	run, approved, why := h.s.useReleasedPlan(r.ID)
	if why != "" {
		return nil, sentenceError(why)
	}
	plain, err := h.s.openSealedPlan(run.ID, approved)
	if err != nil {
		return nil, err
	}
	return &relayPlan{plain: plain, digest: approved}, nil
}

// noDrift records a relay check that found no drift, as checkPlanStep does:
// earlier checks' plans are dropped and the check keeps none.
func (h *relayHub) noDrift(l *relayLease) string {
	if r, err := h.s.db.GetRun(l.job.runID); err == nil {
		h.s.supersedeChecks(r)
	}
	h.s.recordCheck(l.job.runID, &store.Check{CheckedAt: time.Now()})
	return "No drift: the state matches the configuration, so this check kept no plan and there is nothing to reconcile."
}
