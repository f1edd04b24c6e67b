package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// errDrained ends a worker that drained: it took no new run and finished
// the one it had.
var errDrained = errors.New("the worker drained")

// errJobCancelled is the cause of a job the control node cancelled;
// errLeaseLost of one whose lease the control node ended.
var (
	errJobCancelled = errors.New("cancelled")
	errLeaseLost    = errors.New("the lease was lost")
)

// jobEnd is how a job ended on the worker: its result message, or a
// hand-off (its saved plan, or its scan's evidence, went to the control
// node, which ends the lease itself: no result is sent).
type jobEnd struct {
	result    relay.Msg
	handedOff bool
}

// reported is what the job reported, for the worker's own error.
func (e jobEnd) reported() string {
	if e.handedOff {
		return "its hand-off to the control node"
	}
	return string(e.result.Status)
}

// runningJob is the run a worker is executing.
type runningJob struct {
	run     string
	token   uint64
	cancel  context.CancelCauseFunc
	done    chan jobEnd    // how it ended, once
	verdict chan relay.Msg // the control node's decision on the job's scan, once
}

// session serves one connection to the control node: poll, take offered
// runs one at a time, run them, report. It returns errDrained after a
// drain, or the reason the connection ended; a run still going when the
// connection breaks is interrupted, since its reports could not arrive.
func (w *worker) session(ctx context.Context) error {
	client, c, err := w.dial(ctx)
	if err != nil {
		return err
	}
	defer client.Close()
	w.log.Info("connected to the control node", "control", w.cfg.Control, "pool", w.cfg.Pool, "worker", w.cfg.Name)
	msgs, readErr := make(chan relay.Msg, 64), make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			m, err := c.Recv()
			if err != nil {
				readErr <- err
				return
			}
			select {
			case msgs <- m:
			case <-stop:
				return
			}
		}
	}()
	st := &sessionState{w: w, c: c, drain: w.opts.Drain}
	if err := c.Send(relay.Msg{Type: relay.MsgPoll}); err != nil {
		return err
	}
	return st.loop(ctx, msgs, readErr)
}

// sessionState is what one connection's loop keeps.
type sessionState struct {
	w         *worker
	c         *relay.Conn
	cur       *runningJob
	taken     string // a run it took whose job has not come yet: a drain waits for it
	cancelled string // a taken run cancelled before its job came
	draining  bool
	drain     <-chan struct{}
}

func (st *sessionState) loop(ctx context.Context, msgs <-chan relay.Msg, readErr <-chan error) error {
	beat := time.NewTicker(st.idleBeat())
	defer beat.Stop()
	for {
		var done chan jobEnd
		if st.cur != nil {
			done = st.cur.done
		}
		select {
		case <-beat.C:
			if st.cur == nil { // a job heartbeats its lease itself
				_ = st.c.Send(relay.Msg{Type: relay.MsgHeartbeat})
			}
		case <-ctx.Done():
			return st.stopped(ctx)
		case <-st.drain:
			if st.startDrain() {
				return errDrained
			}
		case err := <-readErr:
			st.stopJob(errors.New("the connection to the control node was lost"))
			return err
		case m := <-msgs:
			st.handle(ctx, m)
			if st.draining && st.idle() {
				return errDrained // a run it had taken was not given to it after all
			}
		case end := <-done:
			if st.jobEnded(end) {
				return errDrained
			}
		}
	}
}

// idleBeat is how often an idle session heartbeats: the worker's idleBeat,
// or 10 s.
func (st *sessionState) idleBeat() time.Duration {
	if st.w.idleBeat <= 0 {
		return 10 * time.Second
	}
	return st.w.idleBeat
}

// idle reports whether the session has no run and is waiting for none it
// took.
func (st *sessionState) idle() bool { return st.cur == nil && st.taken == "" }

// startDrain tells the control node the worker drains, and reports
// whether the session ends now (it has no run and waits for none).
func (st *sessionState) startDrain() bool {
	st.drain, st.draining = nil, true
	_ = st.c.Send(relay.Msg{Type: relay.MsgDrain})
	return st.idle()
}

// jobEnded reports the ended job's result (unless it handed off) and
// polls for the next, or, draining, reports that the session ends.
func (st *sessionState) jobEnded(end jobEnd) bool {
	st.cur = nil
	if !end.handedOff {
		_ = st.c.Send(end.result)
	}
	if st.draining {
		time.Sleep(200 * time.Millisecond) // let the result reach the control node first
		return true
	}
	_ = st.c.Send(relay.Msg{Type: relay.MsgPoll})
	return false
}

// errWorkerStopped ends a worker that was stopped (a second signal) rather
// than drained.
var errWorkerStopped = errors.New("the worker was stopped")

// stopped ends the session when the worker is stopped: a run it has is
// interrupted (its tool gets an interrupt so it can release its state
// lock) and reported, so the run ends now rather than when its lease
// times out.
func (st *sessionState) stopped(ctx context.Context) error {
	if st.cur == nil {
		return errWorkerStopped
	}
	run := st.cur.run
	st.cur.cancel(context.Cause(ctx))
	end := <-st.cur.done
	st.cur = nil
	if !end.handedOff {
		_ = st.c.Send(end.result)
		time.Sleep(200 * time.Millisecond) // let the result reach the control node first
	}
	return &stoppedDuringRun{run: run, status: end.reported()}
}

// stoppedDuringRun is errWorkerStopped with the run it interrupted.
type stoppedDuringRun struct{ run, status string }

func (e *stoppedDuringRun) Error() string {
	return fmt.Sprintf("%v: its run %s was interrupted and reported %s", errWorkerStopped, e.run, e.status)
}

func (e *stoppedDuringRun) Unwrap() error { return errWorkerStopped }

// stopJob interrupts the current run with cause and waits for it to end.
func (st *sessionState) stopJob(cause error) {
	if st.cur != nil {
		st.cur.cancel(cause)
		<-st.cur.done
		st.cur = nil
	}
}

// handle carries out one message from the control node.
func (st *sessionState) handle(ctx context.Context, m relay.Msg) {
	switch m.Type {
	case relay.MsgOffer:
		st.offered(m)
	case relay.MsgJob:
		st.job(ctx, m)
	case relay.MsgCancel:
		if st.holds(m) {
			st.cur.cancel(errJobCancelled)
		} else if st.cur == nil && m.Run == st.taken {
			st.cancelled = m.Run // its job is on its way: it is not started
		}
	case relay.MsgScanPass, relay.MsgScanStop:
		if st.holds(m) {
			select {
			case st.cur.verdict <- m:
			default: // a second answer changes nothing
			}
		}
	case relay.MsgReject:
		st.rejected(m)
	}
}

// holds reports whether m is about the run the worker executes, under its
// lease.
func (st *sessionState) holds(m relay.Msg) bool {
	return st.cur != nil && st.cur.run == m.Run && st.cur.token == m.Token
}

// offered takes an offered run, or declines it while draining or busy.
func (st *sessionState) offered(m relay.Msg) {
	if st.draining || st.cur != nil {
		_ = st.c.Send(relay.Msg{Type: relay.MsgDecline, Run: m.Run})
		return
	}
	st.taken = m.Run
	_ = st.c.Send(relay.Msg{Type: relay.MsgTake, Run: m.Run})
}

// job starts the job of a run it took, unless that run was cancelled
// before the job came.
func (st *sessionState) job(ctx context.Context, m relay.Msg) {
	if st.cur != nil || m.Run != st.taken {
		return // never two at once, and only the run it took
	}
	st.taken = ""
	if st.cancelled == m.Run {
		_ = st.c.Send(relay.Msg{Type: relay.MsgResult, Run: m.Run, Token: m.Token, Exit: -1, Status: store.StatusCancelled, Message: "Cancelled before it started on the worker; nothing ran."})
		_ = st.c.Send(relay.Msg{Type: relay.MsgPoll})
		return
	}
	st.cur = st.w.spawnJob(ctx, st.c, m)
}

// rejected carries out a reject: the run it took is not given to it, or
// the lease it works under was lost.
func (st *sessionState) rejected(m relay.Msg) {
	st.w.log.Warn("the control node rejected a message", "run", m.Run, "reason", m.Message)
	if m.Run == st.taken {
		st.taken = ""
	}
	if st.holds(m) {
		st.cur.cancel(errLeaseLost)
	} else if st.cur == nil && !st.draining {
		_ = st.c.Send(relay.Msg{Type: relay.MsgPoll})
	}
}

// spawnJob runs job in its own goroutine, heartbeating until it ends.
func (w *worker) spawnJob(ctx context.Context, c *relay.Conn, job relay.Msg) *runningJob {
	jctx, cancel := context.WithCancelCause(ctx)
	rj := &runningJob{run: job.Run, token: job.Token, cancel: cancel, done: make(chan jobEnd, 1), verdict: make(chan relay.Msg, 1)}
	every := job.Heartbeat
	if every <= 0 {
		every = 5 * time.Second
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-jctx.Done():
				return
			case <-t.C:
				_ = c.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: job.Run, Token: job.Token})
			}
		}
	}()
	go func() {
		end := w.runJob(jctx, c, job, rj.verdict)
		cancel(nil)
		rj.done <- end
	}()
	return rj
}
