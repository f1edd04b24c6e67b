package server

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// leaseMessage carries out a heartbeat, log, step or result of a lease. A
// message whose run has no lease, or whose fencing token or worker is not
// the lease's, is rejected: a worker that lost its lease, or a late copy
// of a message, changes nothing.
func (h *relayHub) leaseMessage(w *relayWorker, c *relay.Conn, m relay.Msg) {
	h.mu.Lock()
	l := h.leases[m.Run]
	ok := l != nil && l.token == m.Token && l.worker == w && l.sink != nil
	if ok {
		l.last = time.Now()
		if m.Type == relay.MsgStep {
			l.noteStep(m)
		}
	}
	h.mu.Unlock()
	if !ok {
		h.rejectLate(w, c, m)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !h.current(l) { // the watcher ended it meanwhile
		h.rejectLate(w, c, m)
		return
	}
	switch m.Type {
	case relay.MsgLog:
		_, _ = l.out.Write([]byte(m.Data)) // masked again on the control node
	case relay.MsgStep:
		h.recordStep(l, m)
	case relay.MsgResult:
		h.result(l, m)
	case relay.MsgScanned:
		h.scanned(l, c, m)
	case relay.MsgPlanning, relay.MsgPlanStart, relay.MsgPlanChunk, relay.MsgPlanEnd:
		h.planHandover(w, l, c, m)
	}
}

// planHandover carries out a message of a saved plan's handover, with
// l.mu held: a job scanned before it plans hands its plan over only after
// its scan, and a job that hands over no plan (a dry run, an apply's apply
// phase) none; either is refused and ends the run failed.
func (h *relayHub) planHandover(w *relayWorker, l *relayLease, c *relay.Conn, m relay.Msg) {
	if l.scanWhy != "" && !l.scanDone {
		_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: m.Run, Token: m.Token, Message: "this job hands over a plan only after its scan"})
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("Worker %s sent a saved plan for a job scanned before it plans without sending its scan; nothing of it was kept.", w.name))
		return
	}
	if !l.handsPlan {
		_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: m.Run, Token: m.Token, Message: "this job hands over no saved plan"})
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("Worker %s sent a saved plan for a job that hands over none (a dry run, or an apply's apply phase); it was refused and nothing of it was kept.", w.name))
		return
	}
	h.planMessage(l, m)
}

// expired reports whether l has had no heartbeat for its pool's timeout.
func (h *relayHub) expired(l *relayLease, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return now.Sub(l.last) > h.timeoutLocked(l.job.pool)
}

// current reports whether l is still its run's lease.
func (h *relayHub) current(l *relayLease) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.leases[l.job.runID] == l
}

// rejectLate answers a message from a lease that is not (or no longer)
// held; a late result is audited.
func (h *relayHub) rejectLate(w *relayWorker, c *relay.Conn, m relay.Msg) {
	why := fmt.Sprintf("run %s holds no lease with fencing token %d for worker %s (the lease was lost or has ended); this %s was rejected and changed nothing", m.Run, m.Token, w.name, m.Type)
	if m.Type == relay.MsgResult {
		h.s.workerEvent(m.Run, w.name, "result rejected", why)
	}
	_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: m.Run, Token: m.Token, Message: why})
}

// noteStep keeps, with h.mu held, what a step message says for the
// lease's end: the step the worker is in (a start) or last ended, and
// whether a step that can take a state lock, or an apply, has started.
// A step is judged at its start (an end says nothing of the lock, so it
// is judged only when its start never came).
func (l *relayLease) noteStep(m relay.Msg) {
	started := m.Finished.IsZero() || !l.inStep || l.step != m.Step
	l.step, l.inStep = m.Step, m.Finished.IsZero()
	if started && l.locks == "" && stepMayLock(m) {
		l.locks = m.Step
	}
	if m.Step == "apply" {
		l.apply = true
	}
}

// stepMayLock reports whether the worker's step m can take a state lock
// that a process killed during it leaves behind. From OpenTofu 1.12's
// commands: plan and apply lock the state (-lock defaults to true); init
// locks states only while it sets up or changes the working directory's
// backend (meta_backend.go, meta_backend_migrate.go), so an init the
// worker found declares and records no backend (NoLock) takes none; state
// pull reads the state without locking it (state_pull.go); show -json
// reads a saved plan file; get, the scan's module download in a private
// copy, touches no state. A step this version does not know may lock.
func stepMayLock(m relay.Msg) bool {
	switch m.Step {
	case "get", "state pull", "show -json":
		return false
	case "init":
		return !m.NoLock
	}
	return true
}

// relaySteps are the tool steps a worker of this version runs and reports
// (the worker's begin, server/worker/tool.go); a report of another ends the lease failed.
var relaySteps = []string{"init", "get", "plan", "apply", "show -json", "state pull"}

// relayMaxSteps bounds the steps a run records from its workers: a run has
// a handful (init, plan, and for an apply init again and apply), so a
// worker that reports more is ended rather than let grow the run's record.
const relayMaxSteps = 32

// recordStep records a tool step the worker reported: its start as a step
// with exit code -1 and no end, which its end then completes (an end with
// no start is added whole). A process the run's steps do not list (Quiet)
// only moves the lease's step.
func (h *relayHub) recordStep(l *relayLease, m relay.Msg) {
	if !slices.Contains(relaySteps, m.Step) {
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("Worker %s reported a step this version does not run (%d bytes of name); the run was ended there. Check the worker's version and host.", l.worker.name, len(m.Step)))
		return
	}
	if m.Quiet {
		return
	}
	errTooMany := errors.New("too many steps")
	if _, err := h.s.db.UpdateRun(l.job.runID, func(r *store.Run) error {
		if m.Finished.IsZero() && len(r.Steps) >= relayMaxSteps {
			return errTooMany
		}
		if m.Finished.IsZero() {
			r.Steps = append(r.Steps, store.Step{Name: m.Step, ExitCode: -1, Started: cmp.Or(m.Started, time.Now())})
			return nil
		}
		r.ExitCode = m.Exit
		if n := len(r.Steps) - 1; n >= 0 && r.Steps[n].Name == m.Step && r.Steps[n].Finished.IsZero() {
			r.Steps[n].ExitCode, r.Steps[n].Finished = m.Exit, m.Finished
			return nil
		}
		r.Steps = append(r.Steps, store.Step{Name: m.Step, ExitCode: m.Exit, Started: m.Started, Finished: m.Finished})
		return nil
	}); errors.Is(err, errTooMany) {
		h.finishLease(l, StatusFailed, -1, fmt.Sprintf("Worker %s reported more steps than a run has (%d); the run was ended there. Check the worker's version and host.", l.worker.name, relayMaxSteps))
	} else if err != nil {
		h.s.log.Error("recording a worker's step", "run", l.job.runID, "err", err)
	}
}

// result ends a leased run as its worker reports: succeeded, failed, or
// cancelled (after a cancel); anything else counts as failed.
func (h *relayHub) result(l *relayLease, m relay.Msg) {
	status, msg, refusal := h.reportedEnd(l, m)
	if refusal != "" {
		h.finishLease(l, StatusFailed, m.Exit, refusal)
		return
	}
	if m.Commit != nil && !l.applies { // an apply phase's commit is its plan's
		if _, err := h.s.db.UpdateRun(l.job.runID, func(r *store.Run) error { recordWorkerCommit(r, *m.Commit); return nil }); err != nil {
			h.s.log.Error("recording a worker's commit", "run", l.job.runID, "err", err)
		}
	}
	h.finishLease(l, status, m.Exit, msg)
}

// reportedEnd is the status and sentence a worker's result m ends l with:
// the status it reports where the job can have it, failed otherwise. A
// success the job cannot have is a refusal instead: the sentence the run
// ends failed with, nothing of it kept.
func (h *relayHub) reportedEnd(l *relayLease, m relay.Msg) (status Status, msg, refusal string) {
	msg = l.masker.String(m.Message)
	if !slices.Contains(endStatuses, m.Status) {
		return StatusFailed, fmt.Sprintf("Worker %s reported status %q, which is not a status a run ends with; the run is marked failed and the worker's report is not taken. Check the worker's version and host.", l.worker.name, string(m.Status)), ""
	}
	switch m.Status {
	case StatusSucceeded:
		return h.reportedSuccess(l, msg)
	case StatusStale:
		if r, err := h.s.db.GetRun(l.job.runID); err == nil && l.applies { // only a saved plan can be stale
			return StatusStale, staleMessage(r), ""
		}
	case StatusRefused:
		if l.scanWhy != "" { // only a scanned job's steps refuse on a worker; anything else counts as failed
			return StatusRefused, msg, ""
		}
	case StatusInterrupted:
		h.mu.Lock()
		l.worker.stopped = true
		h.mu.Unlock()
		return StatusInterrupted, msg, "" // the worker was stopped outright
	case StatusCancelled:
		if r, err := h.s.db.GetRun(l.job.runID); err == nil && r.CancelRequested != "" { // only a cancel cancels
			return StatusCancelled, fmt.Sprintf("Cancelled by %s during %s on worker %s; the tool was sent an interrupt so it could release its state lock.", r.CancelRequested, l.step, l.worker.name), ""
		}
	}
	return StatusFailed, msg, ""
}

// endStatuses are the statuses a run ends with.
var endStatuses = []Status{StatusSucceeded, StatusFailed, StatusCancelled, StatusInterrupted, StatusRejected, StatusRefused, StatusStale}

// reportedSuccess is reportedEnd of a success: refused for a job scanned
// before it plans that sent no scan, and for a gated apply's plan (whose
// saved plan must be handed over); a check's sentence says what it found,
// and an apply phase's names the plan as the control node's own apply does.
func (h *relayHub) reportedSuccess(l *relayLease, msg string) (Status, string, string) {
	if l.scanWhy != "" && !l.scanDone {
		return "", "", fmt.Sprintf("Worker %s reported success for a job scanned before it plans without sending its scan; nothing of it was kept as a plan the rules let through.", l.worker.name)
	}
	if l.gated {
		return "", "", fmt.Sprintf("Worker %s reported success for a gated apply's plan without handing its saved plan over; nothing was proposed or applied.", l.worker.name)
	}
	if l.kind == KindCheck {
		msg = h.noDrift(l)
	}
	if l.applies {
		if r, err := h.s.db.GetRun(l.job.runID); err == nil && r.Proposal != nil {
			msg = fmt.Sprintf("Applied %s. It ran on relay worker %s.", appliedPlan(r, r.Proposal.Digest), l.worker.name)
		}
	}
	return StatusSucceeded, msg, ""
}

// recordWorkerCommit records on r the commit its worker reports it ran. A
// pull request's plan keeps its ref: only the commit the ref named is
// taken, and only when the control node had not resolved it otherwise.
func recordWorkerCommit(r *store.Run, c store.Commit) {
	if r.Commit == nil || r.Commit.Ref == "" {
		r.Commit = &store.Commit{SHA: c.SHA, Dirty: c.Dirty}
		return
	}
	if c.Ref == r.Commit.Ref && c.SHA != "" && r.Commit.SHA == "" {
		r.Commit.SHA = c.SHA
	}
}

// takeBack drops l as its run's lease and reports whether it still was
// it: whatever ends a lease does so once.
func (h *relayHub) takeBack(l *relayLease) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leases[l.job.runID] != l {
		return false
	}
	delete(h.leases, l.job.runID)
	return true
}

// finishLease records how a leased run ended, once: the sentence in the log, the
// status, the audit entry; the lease is dropped and the pool goes on.
func (h *relayHub) finishLease(l *relayLease, status Status, exit int, msg string) {
	if !h.takeBack(l) {
		return
	}
	if status != StatusSucceeded {
		fmt.Fprintf(l.out, "switchtender: %s\n", msg)
	}
	l.out.Flush()
	if err := l.sink.Flush(); err != nil {
		h.s.log.Error("storing the end of a run's log", "run", l.job.runID, "err", err)
	}
	l.sink.Close()
	if _, err := h.s.transitionAudited(l.job.runID, status, func(r *store.Run) error {
		r.Message = msg
		if exit >= 0 {
			r.ExitCode = exit
		}
		return nil
	}, func(store.Run) store.AuditEvent { return auditEvent(l.job.runID, "switchtender", string(status), msg) }); err != nil {
		h.s.log.Error("recording how a relay run ended", "run", l.job.runID, "err", err)
	}
	h.release(l)
}

// expire ends the leases whose worker stopped heartbeating and takes back
// offers nobody answered.
func (h *relayHub) expire(now time.Time) {
	h.mu.Lock()
	lost, unstopped := h.overdueLocked(now)
	pools := h.expireWorkersLocked(now)
	h.mu.Unlock()
	for _, l := range lost {
		l.mu.Lock()
		if h.current(l) && h.expired(l, time.Now()) {
			h.lose(l, now)
		}
		l.mu.Unlock()
	}
	for _, l := range unstopped {
		l.mu.Lock()
		if h.current(l) {
			h.finishLease(l, StatusCancelled, -1, fmt.Sprintf("Cancelled; worker %s did not end the run within cancel_grace and the lease timeout after the cancel, so its lease was taken back and anything it still reports is rejected. Check the state: a state lock may be left.", l.worker.name))
		}
		l.mu.Unlock()
	}
	for _, p := range pools {
		h.dispatch(p)
	}
}

// overdueLocked lists, with h.mu held, the sent leases at now with no
// heartbeat for their pool's timeout (lost) and those still running past
// the time a cancel gave them (unstopped).
func (h *relayHub) overdueLocked(now time.Time) (lost, unstopped []*relayLease) {
	for _, l := range h.leases {
		switch {
		case !l.sent: // the control node still prepares its job
		case l.sink != nil && now.Sub(l.last) > h.timeoutLocked(l.job.pool):
			lost = append(lost, l)
		case l.sink != nil && !l.cancelBy.IsZero() && now.After(l.cancelBy):
			unstopped = append(unstopped, l)
		}
	}
	return lost, unstopped
}

// expireWorkersLocked, with h.mu held, shuts the sessions of workers that
// stopped reading for their pool's timeout and takes back the offers
// unanswered as long; it returns the pools of the offers taken back, in
// the workers' order.
func (h *relayHub) expireWorkersLocked(now time.Time) []string {
	var pools []string
	for _, w := range h.workers {
		if w.conn != nil && !w.conn.Closed() && w.conn.StuckFor(now) > h.timeoutLocked(w.pool) {
			// It stopped reading: its session ends, and its lease (if any)
			// is lost when its heartbeats stop counting.
			go w.conn.Shut()
		}
		if w.offered != nil && now.Sub(w.offeredAt) > h.timeoutLocked(w.pool) {
			h.requeue(w)
			pools = append(pools, w.pool)
		}
	}
	return pools
}

// lose fails a run whose worker stopped heartbeating, naming the step it
// was in and saying whether a state lock may be left (stepMayLock) and
// whether the apply had started; it is never re-run by itself.
func (h *relayHub) lose(l *relayLease, now time.Time) {
	h.mu.Lock()
	step, in, locks, apply := l.step, l.inStep, l.locks, l.apply
	timeout, c := h.timeoutLocked(l.job.pool), l.worker.conn
	h.mu.Unlock()
	where := "during " + step
	if !in && step != "preparation" {
		where = "after " + step + " ended, before it reported another step"
	}
	lock := "no state lock was held: no step that can take one (plan, apply, init with a backend) had started"
	if locks != "" {
		lock = "a state lock may be left (" + locks + " had started): if the next run says the state is locked, make sure the worker stopped, then run `tofu force-unlock LOCK_ID` in the working directory"
	}
	if apply {
		lock += "; the apply had started, so it may have changed infrastructure and the state"
	}
	msg := fmt.Sprintf("Worker %s of pool %s stopped heartbeating %s: no heartbeat for %s (the lease timeout), so it lost its lease and the run failed; %s. Nothing was re-run: check the state, then `rerun %s` if it should go on.",
		l.worker.name, l.job.pool, where, timeout, lock, l.job.runID)
	h.s.workerEvent(l.job.runID, l.worker.name, "worker lost", msg)
	h.finishLease(l, StatusFailed, -1, msg)
	if c != nil {
		_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: l.job.runID, Token: l.token, Message: msg})
	}
}

// timeoutLocked is leaseTimeout with h.mu held.
func (h *relayHub) timeoutLocked(pool string) time.Duration {
	if d := h.timeout[pool]; d > 0 {
		return d
	}
	if p := h.s.config().Pools[pool]; p != nil && p.LeaseTimeout > 0 {
		return p.LeaseTimeout
	}
	return defaultLeaseTimeout
}

// cancel stops a pool's run: a queued one leaves the queue (true, false), a
// leased one's worker is told to interrupt its tool (false, true).
func (h *relayHub) cancel(runID string) (dequeued, signalled bool) {
	if h.dequeue(runID) {
		return true, false
	}
	h.mu.Lock()
	l := h.leases[runID]
	var c *relay.Conn
	if l != nil && !l.sent {
		l.cancelPending = true // take ends it instead of sending its job
		h.mu.Unlock()
		return false, true
	}
	if l != nil {
		c = l.worker.conn
	}
	h.mu.Unlock()
	if c == nil {
		return false, false
	}
	h.mu.Lock()
	if l.cancelBy.IsZero() {
		l.cancelBy = time.Now().Add(h.s.config().Server.CancelGrace + h.timeoutLocked(l.job.pool))
	}
	h.mu.Unlock()
	return false, c.Send(relay.Msg{Type: relay.MsgCancel, Run: runID, Token: l.token}) == nil
}
