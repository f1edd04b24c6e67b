package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/seal"
	"github.com/switchtender/switchtender/server/logs"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// take leases the run offered to w: it claims the run (queued to running),
// builds what the worker needs sealed to the pool's delivery key, and sends
// the job with a new fencing token. A run cancelled meanwhile, or one that
// cannot be prepared, is answered with reject and the worker polls again.
func (h *relayHub) take(w *relayWorker, c *relay.Conn, runID string) {
	h.mu.Lock()
	if w.offered == nil || w.offered.runID != runID || w.draining {
		h.mu.Unlock()
		_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: runID, Message: "run " + runID + " was not offered to this worker, or it drains and takes no new run"})
		return
	}
	j := *w.offered
	w.offered = nil
	h.token++
	l := &relayLease{job: j, token: h.token, worker: w, last: time.Now(), step: "preparation"}
	h.leases[runID], w.lease = l, l
	h.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	job, err := h.claimJob(l)
	var line []byte
	if err == nil {
		line, err = relay.Encode(job) // a job with a plan takes a while to encode: before the cancel check
		clear(job.Payload)
	}
	if err == nil && h.cancelledBeforeSent(l, c, line) {
		err = fmt.Errorf("run %s was cancelled before its job was sent", runID)
		by := "its requester"
		if r, gerr := h.s.db.GetRun(runID); gerr == nil && r.CancelRequested != "" {
			by = r.CancelRequested
		}
		h.finishLease(l, StatusCancelled, -1, fmt.Sprintf("Cancelled by %s before its job reached worker %s; nothing ran there.", by, w.name))
	}
	if err != nil {
		_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: runID, Token: l.token, Message: err.Error()})
	}
}

// cancelledBeforeSent reports whether a cancel came while the control node
// prepared l's job; otherwise it queues the job's line, in the same step as
// it marks the job sent, so a cancel after it is queued after it too, and
// the lease timeout starts (preparing ran the credential commands, which
// may take longer than a heartbeat).
func (h *relayHub) cancelledBeforeSent(l *relayLease, c *relay.Conn, line []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.cancelPending {
		return true
	}
	l.sent, l.last = true, time.Now()
	if err := c.SendLine(relay.MsgJob, line); err != nil {
		h.s.log.Warn("sending a job to a worker", "worker", l.worker.name, "run", l.job.runID, "err", err)
	}
	return false
}

// claimJob claims the leased run and builds its job message. On an error
// the lease is ended (and the run failed when it was claimed).
func (h *relayHub) claimJob(l *relayLease) (relay.Msg, error) {
	s, w := h.s, l.worker
	if s.holdAtStart(l.job.runID) {
		h.release(l)
		return relay.Msg{}, fmt.Errorf("run %s is held: the rules in force now hold it before anything plans", l.job.runID)
	}
	run, err := h.claim(l.job.runID, w.name)
	if err != nil {
		h.release(l)
		if r, gerr := s.db.GetRun(l.job.runID); gerr == nil && r.Status == StatusRunning && r.CancelRequested != "" {
			s.endCancelledBetweenPhases(r) // its apply phase was cancelled before a worker took it
		}
		return relay.Msg{}, fmt.Errorf("run %s can no longer start (%v)", l.job.runID, err)
	}
	m := mask.New()
	s.maskOwnKeys(m) // the worker's log is masked again here
	s.maskConfigSecrets(m, run)
	l.sink = logs.NewSink(run.ID, s.db, s.broker)
	l.masker, l.out = m, m.NewWriter(l.sink)
	l.kind = run.Kind
	plan, err := h.releasedPlan(run)
	if err != nil {
		h.finishLease(l, StatusFailed, -1, err.Error())
		return relay.Msg{}, err
	}
	payload, sealed, err := h.payload(run, m, plan)
	if err != nil {
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("%v; nothing ran", err))
		return relay.Msg{}, err
	}
	s.workerEvent(run.ID, w.name, "leased", fmt.Sprintf("worker %s of pool %s, fencing token %d", w.name, w.pool, l.token))
	fmt.Fprintf(l.out, "switchtender: leased to worker %s of pool %s\n", w.name, w.pool)
	hb := h.leaseTimeout(w.pool) / 3
	msg := relay.Msg{Type: relay.MsgJob, Run: run.ID, Token: l.token, Kind: string(run.Kind), Project: run.Project,
		Command: run.Command, Tool: run.Tool, Heartbeat: hb, Payload: payload, Grace: s.config().Server.CancelGrace,
		Phase: string(run.Phase), Gated: run.Phase == phasePlan && run.Kind == KindApply && gate.NeedsSavedPlan(s.currentRules(), s.gateRequest(run))}
	msg.Clear = !sealed
	if why, _ := s.scanFor(run); why != "" && run.Phase == phasePlan {
		msg.ScanWhy, l.scanWhy = why, why
		if why == scanForPullRequest {
			msg.Ref, msg.SHA = run.Commit.Ref, run.Commit.SHA
		}
	}
	l.gated, l.applies = msg.Gated, run.Phase == phaseApply
	l.handsPlan = msg.Gated || (run.Kind == KindCheck && run.Phase == phasePlan)
	return msg, nil
}

// markWorker records on r the worker that plans or applies its phase; an
// ungated apply plans and applies in one step, a gated one only plans in
// its plan phase.
func markWorker(r *store.Run, worker string, gated bool) {
	switch {
	case r.Phase == phaseApply:
		r.AppliedBy = worker
	case r.Kind == KindApply && !gated:
		r.PlannedBy, r.AppliedBy = worker, worker
	default:
		r.PlannedBy = worker
	}
}

// payload resolves the run's credentials (command-source ones now, on the
// control node) and variables and seals them, with every value to mask, to
// the pool's delivery key. A pool without one gets a payload in clear only
// when it holds no secret; otherwise the run is refused.
func (h *relayHub) payload(r store.Run, m *mask.Masker, plan *relayPlan) ([]byte, bool, error) {
	s := h.s
	t := s.config().Templates[r.Template]
	if t == nil {
		return nil, false, fmt.Errorf("template %q is no longer configured", r.Template)
	}
	ctx, cancel := context.WithTimeout(context.Background(), credentialCommandTimeout)
	defer cancel()
	// The worker gets this run's own secrets to mask; the secret answers
	// earlier runs of the project gave (which the control node masks in
	// every run of it) stay on the control node, which masks the worker's
	// log again.
	own := mask.New()
	creds, err := s.credentials(ctx, t, r.ID, own)
	if err != nil {
		return nil, false, err
	}
	vars, secrets, err := s.runVars(r, own)
	if err != nil {
		return nil, false, err
	}
	m.Add(own.Values()...)
	if err := s.rememberSecrets(r.Project, secrets, m); err != nil {
		return nil, false, err
	}
	p := relay.Payload{Vars: vars, Env: creds, Secrets: own.Values()}
	if plan != nil {
		p.Plan, p.Digest = plan.plain, plan.digest
		if r.Proposal != nil {
			p.StartFiles = r.Proposal.StartFiles
		}
		defer clear(plan.plain)
	}
	plain, err := json.Marshal(p)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the run's payload: %w", err)
	}
	key := ""
	if pl := s.config().Pools[h.poolOf(r)]; pl != nil {
		key = pl.DeliveryKey
	}
	if key == "" {
		if len(p.Secrets) > 0 || plan != nil {
			clear(plain)
			return nil, false, fmt.Errorf("pool %s has no delivery_key, so the run's credentials and secret answers cannot reach its workers sealed; add delivery_key (switchtender keygen pool) to the pool block", h.poolOf(r))
		}
		return plain, false, nil
	}
	sealed, err := seal.SealTo(key, r.ID, plain)
	clear(plain)
	if err != nil {
		return nil, false, fmt.Errorf("sealing the run's payload to pool %s's delivery key: %w", h.poolOf(r), err)
	}
	return sealed, true, nil
}

// poolOf is the pool whose queue the run's template names ("" for none).
func (h *relayHub) poolOf(r store.Run) string {
	return h.s.poolOf(r.Template)
}

// release drops a lease without ending its run (a run that could not be
// claimed); the worker's working directory is free again.
func (h *relayHub) release(l *relayLease) {
	h.mu.Lock()
	if h.leases[l.job.runID] == l {
		delete(h.leases, l.job.runID)
	}
	if l.worker.lease == l {
		l.worker.lease = nil
	}
	delete(h.busy, l.job.pool+"\x00"+l.job.key)
	h.mu.Unlock()
	h.dispatch(l.job.pool)
}
