package server

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"time"

	"github.com/switchtender/switchtender/screentext"

	"charm.land/ssh"
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/relay"
	gossh "golang.org/x/crypto/ssh"
)

// ServeRelay is a worker's session, handed over by the front door (which
// keeps the connection open while the worker idles): its key is listed by
// pool. It reads
// the worker's hello, then its messages until the session ends. A worker
// that disconnects keeps its lease until the lease times out, so a short
// network break does not fail a run; a run it was offered goes back to the
// front of the queue.
func (s *Server) ServeRelay(sess ssh.Session, pool string) {
	fp := gossh.FingerprintSHA256(sess.PublicKey())
	if sess.RawCommand() != relay.Command {
		fmt.Fprintf(sess.Stderr(), "switchtender: this key is a relay worker key of pool %s; it runs only the relay, not %q\n", pool, sess.RawCommand())
		_ = sess.Exit(api.ExitRefused)
		return
	}
	c := relay.NewConn(sess, sess)
	w, err := s.relay.hello(c, pool, fp)
	if err != nil {
		busy := errors.Is(err, errNameConnected)
		_ = c.Send(relay.Msg{Type: relay.MsgRefused, Message: err.Error(), Busy: busy})
		_ = sess.Exit(api.ExitRefused)
		return
	}
	c.Queue(func() {
		// The connection first: a write blocked on the worker's window
		// holds the channel, which sess.Close would wait for.
		if conn, ok := sess.Context().Value(ssh.ContextKeyConn).(gossh.Conn); ok {
			_ = conn.Close()
		}
		_ = sess.Close()
	})
	defer c.Shut()
	defer s.relay.disconnected(w, c)
	for {
		m, err := c.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.Warn("relay session ended", "worker", w.name, "pool", pool, "err", err)
			}
			return
		}
		s.relay.handle(w, c, m)
	}
}

// errNameConnected refuses a hello for a name that is connected and alive.
var errNameConnected = errors.New("name in use")

// workerNameRE is what a worker's name may be: it is shown in `workers`,
// `show` and logs.
var workerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// hello reads a worker's first message and registers it: a worker naming
// another pool than its key's is refused, and so is a name another key
// registered (a name is its first key's, so no key takes over another
// worker's lease). A name already connected is
// taken over by the new connection (a worker that reconnects before the
// control node noticed its old connection die); a lease it held stays
// with it, so it is never offered a run twice. It is audited either way.
func (h *relayHub) hello(c *relay.Conn, pool, fp string) (*relayWorker, error) {
	m, err := c.Recv()
	if err != nil || m.Type != relay.MsgHello {
		return nil, fmt.Errorf("a worker starts with hello; nothing else was read")
	}
	who := fmt.Sprintf("worker %q (key %s)", m.Name, fp)
	refuse := func(format string, args ...any) (*relayWorker, error) {
		err := fmt.Errorf(format, args...)
		h.s.workerEvent("", who, "worker refused", err.Error())
		return nil, err
	}
	if err := helloProblem(m, pool); err != nil {
		return refuse("%w", err)
	}
	m.Version = screentext.Field(m.Version)
	if len(m.Version) > 64 {
		m.Version = m.Version[:64]
	}
	w, replaced, err := h.register(c, m, pool, fp)
	if err != nil {
		return refuse("%w", err)
	}
	detail := fmt.Sprintf("pool %s, version %s, key %s, projects %v", pool, m.Version, fp, m.Projects)
	if replaced {
		detail += "; it replaces the earlier connection of the same name, silent for a lease timeout, which was closed"
	}
	h.s.workerEvent("", m.Name, "worker connected", detail)
	if err := c.Send(relay.Msg{Type: relay.MsgWelcome, Pool: pool, Heartbeat: h.leaseTimeout(pool) / 3}); err != nil {
		return nil, err
	}
	return w, nil
}

// helloProblem is what refuses a hello m on a connection whose key pool
// lists, before any worker is looked at: another pool, no name, or a name
// of other characters than a worker's name may hold.
func helloProblem(m relay.Msg, pool string) error {
	if m.Pool != pool {
		return fmt.Errorf("this worker's key is listed by pool %s, not pool %q: fix pool in the worker's file, or list its key in pool %q's workers", pool, m.Pool, m.Pool)
	}
	if m.Name == "" {
		return fmt.Errorf("a worker needs a name (name in its worker block, or a host name)")
	}
	if !workerNameRE.MatchString(m.Name) {
		return fmt.Errorf("a worker's name holds letters, digits, '.', '_' and '-' only, at most 63 of them; rename it in its worker block")
	}
	return nil
}

// register records c as the session of the worker hello m names in pool,
// with key fp, and reports whether it replaced an earlier connection of
// the name. A name another key registered is refused, and so is one
// connected and heard from within the lease timeout (errNameConnected).
func (h *relayHub) register(c *relay.Conn, m relay.Msg, pool, fp string) (*relayWorker, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.workers[pool+"/"+m.Name]
	if w != nil && w.key != fp {
		return nil, false, fmt.Errorf("worker name %q of pool %s belongs to another key (%s); give this worker a name of its own", m.Name, pool, w.key)
	}
	if w != nil && w.conn != nil && w.conn.HeardFor(time.Now()) < h.timeoutLocked(pool) {
		heard := w.conn.HeardFor(time.Now()).Round(time.Second)
		return nil, false, fmt.Errorf("%w: worker %s of pool %s is connected and was heard from %s ago; a second process cannot take its name. Give this worker a name of its own, or stop the other one (this one tries again)", errNameConnected, m.Name, pool, heard)
	}
	replaced := w != nil && w.conn != nil
	if replaced {
		go w.conn.Shut() // silent for a lease timeout: its session ends
	}
	if w == nil {
		w = &relayWorker{name: m.Name, pool: pool, key: fp}
		h.workers[pool+"/"+m.Name] = w
	}
	w.conn, w.version, w.lastSeen, w.polling, w.draining, w.stopped = c, m.Version, time.Now(), false, false, false
	w.projects = slices.Clone(m.Projects)
	return w, replaced, nil
}

// disconnected forgets a worker's session c; a run offered to it goes back
// to the queue, a lease it holds runs on until it times out.
func (h *relayHub) disconnected(w *relayWorker, c *relay.Conn) {
	h.mu.Lock()
	drained, stopped := w.draining && w.lease == nil && !w.stopped, w.stopped
	if w.conn == c {
		w.conn, w.polling = nil, false
		h.requeue(w)
	}
	h.mu.Unlock()
	switch {
	case stopped:
		h.s.workerEvent("", w.name, "worker stopped", "pool "+w.pool+"; it was stopped outright, interrupted its run and reported it, and left")
	case drained:
		h.s.workerEvent("", w.name, "worker drained", "pool "+w.pool+"; it took no new run, finished the one it had, and left")
	default:
		h.s.workerEvent("", w.name, "worker disconnected", "pool "+w.pool)
	}
	h.dispatch(w.pool)
}

// handle carries out one message of a connected worker.
func (h *relayHub) handle(w *relayWorker, c *relay.Conn, m relay.Msg) {
	h.mu.Lock()
	w.lastSeen = time.Now()
	h.mu.Unlock()
	switch m.Type {
	case relay.MsgPoll:
		h.poll(w)
	case relay.MsgDrain:
		h.drain(w)
	case relay.MsgTake:
		h.take(w, c, m.Run)
	case relay.MsgDecline:
		h.mu.Lock()
		if w.offered != nil && w.offered.runID == m.Run {
			h.requeue(w)
		}
		h.mu.Unlock()
		h.dispatch(w.pool)
	case relay.MsgHeartbeat:
		if m.Run != "" {
			h.leaseMessage(w, c, m)
		} // an idle worker's heartbeat only says it is there (lastSeen)
	case relay.MsgLog, relay.MsgStep, relay.MsgResult, relay.MsgPlanning, relay.MsgPlanStart, relay.MsgPlanChunk, relay.MsgPlanEnd, relay.MsgScanned:
		h.leaseMessage(w, c, m)
	default:
		_ = c.Send(relay.Msg{Type: relay.MsgReject, Run: m.Run, Message: fmt.Sprintf("unknown relay message %q", m.Type)})
	}
}

// poll marks w as waiting for work and offers it the next run.
func (h *relayHub) poll(w *relayWorker) {
	h.mu.Lock()
	w.polling = !w.draining
	h.mu.Unlock()
	h.dispatch(w.pool)
}

// drain marks w as taking no new run; it finishes the one it has. It is
// audited as draining now, and as drained when it leaves.
func (h *relayHub) drain(w *relayWorker) {
	h.mu.Lock()
	w.draining, w.polling = true, false
	h.requeue(w) // a run offered and not yet taken goes back to the queue
	run := ""
	if w.lease != nil {
		run = w.lease.job.runID
	}
	h.mu.Unlock()
	detail := "pool " + w.pool + "; it has no run and takes no new one"
	if run != "" {
		detail = "pool " + w.pool + "; it takes no new run and finishes run " + run
	}
	h.s.workerEvent(run, w.name, "worker draining", detail)
	h.dispatch(w.pool)
}
