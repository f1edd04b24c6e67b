package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchtender/switchtender/exec/mask"
	"github.com/switchtender/switchtender/server/logs"
	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
)

// defaultLeaseTimeout is how long a leased run waits for a heartbeat before
// its worker loses the lease (pool lease_timeout overrides it).
const defaultLeaseTimeout = 30 * time.Second

// relayHub is the control node's side of the relay: the queues of the pools,
// the workers connected to them and the leases they hold. A run on a pool's
// queue waits here until a worker of that pool polls, is offered to it, and
// is leased once the worker takes it; nothing is ever re-run by itself.
type relayHub struct {
	s *Server

	mu      sync.Mutex
	queues  map[string][]relayJob    // pool -> runs in arrival order
	busy    map[string]string        // pool+workdir -> the run leased or offered there
	workers map[string]*relayWorker  // pool/name -> worker
	leases  map[string]*relayLease   // run -> its lease
	token   uint64                   // the last fencing token issued
	timeout map[string]time.Duration // pool -> lease timeout (tests shorten it)
	stopped chan struct{}
}

// relayJob is a queued run of a pool, with its working directory key.
type relayJob struct {
	runID, pool, key string
}

// project is the project of the job's working directory (workdirKey).
func (j relayJob) project() string {
	p, _, _ := strings.Cut(j.key, "\x00")
	return p
}

// relayWorker is a worker as the control node knows it.
type relayWorker struct {
	name, pool, version string
	projects            []string    // the projects its file has checkouts of (hello)
	key                 string      // the fingerprint of the key it first connected with: the name is that key's
	conn                *relay.Conn // nil while disconnected
	polling             bool        // it asked for work and has none
	draining            bool        // it takes no new run
	stopped             bool        // it was stopped outright and reported its run interrupted
	offered             *relayJob   // offered, not yet taken or declined
	offeredAt           time.Time
	lease               *relayLease
	lastSeen            time.Time
}

// relayLease is a run leased to one worker under one fencing token. mu
// serialises what changes its run (log, steps, the plan, its end) between
// the worker's session and the lease watcher.
type relayLease struct {
	mu     sync.Mutex
	job    relayJob
	token  uint64
	worker *relayWorker
	kind   Kind
	last   time.Time // the last heartbeat (or message) of the lease
	step   string    // the step the worker last reported started (h.mu)
	inStep bool      // and it has not reported its end (h.mu)
	locks  string    // the first step started that can take a state lock, "" while none has (h.mu)
	apply  bool      // an apply step started: it may have changed infrastructure and state (h.mu)
	sink   *logs.Sink
	masker *mask.Masker
	out    *mask.Writer

	handsPlan bool      // the job hands its saved plan over: a gated apply's plan phase, or a drift check
	cancelBy  time.Time // after a cancel: when the lease is taken back if the worker has not ended the run
	gated     bool      // the job is a gated apply's plan phase: it ends only by handing its plan over
	scanWhy   string    // the job is scanned before it plans, and why: its worker sends the evidence once
	scanDone  bool      // the control node decided on the job's scan
	applies   bool      // the job is an apply phase carrying out a saved plan (only it can be stale)

	sent          bool // the job reached the worker; before, the control node still prepares it (h.mu)
	cancelPending bool // a cancel came before the job was sent: it is not sent (h.mu)

	planFrom   int64             // the log's size when the gated plan's tool started
	plan       []byte            // the saved plan as it arrives: in memory only, never on disk
	planJSON   []byte            // its show -json rendering, as it arrives
	planSize   int64             // the sizes the worker declared
	startFiles map[string]string // the files under the working directory the worker planned in (scan.InputFiles) (plan_start)
	planCommit *store.Commit     // the commit the worker planned at (plan_start)
	jsonSize   int64
}

func newRelayHub(s *Server) *relayHub {
	return &relayHub{s: s, queues: map[string][]relayJob{}, busy: map[string]string{},
		workers: map[string]*relayWorker{}, leases: map[string]*relayLease{},
		token: uint64(time.Now().UnixNano()), timeout: map[string]time.Duration{}, stopped: make(chan struct{})}
}

// leaseTimeout is pool's lease timeout.
func (h *relayHub) leaseTimeout(pool string) time.Duration {
	h.mu.Lock()
	d := h.timeout[pool]
	h.mu.Unlock()
	if d > 0 {
		return d
	}
	if p := h.s.config().Pools[pool]; p != nil && p.LeaseTimeout > 0 {
		return p.LeaseTimeout
	}
	return defaultLeaseTimeout
}

// watchLeases watches leases and offers until ctx ends.
func (h *relayHub) watchLeases(ctx context.Context) {
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				close(h.stopped)
				return
			case now := <-t.C:
				h.expire(now)
			}
		}
	}()
}

// workdirKey is the unit of mutual exclusion on a pool: one run per working
// directory at a time, as on the control node.
func workdirKey(r store.Run) string { return r.Project + "\x00" + r.Command }

// enqueue queues a run's phase on pool and offers it when a worker waits.
func (h *relayHub) enqueue(r store.Run, pool string) {
	h.mu.Lock()
	h.queues[pool] = append(h.queues[pool], relayJob{runID: r.ID, pool: pool, key: workdirKey(r)})
	h.mu.Unlock()
	h.dispatch(pool)
}

// dispatch offers queued runs of pool to its polling workers, oldest run
// first, never two in one working directory.
func (h *relayHub) dispatch(pool string) {
	type offer struct {
		w *relayWorker
		c *relay.Conn
		j relayJob
	}
	var offers []offer
	h.mu.Lock()
	for _, w := range h.idleWorkers(pool) {
		j, ok := h.nextJob(pool, w)
		if !ok {
			continue
		}
		w.polling, w.offered, w.offeredAt = false, &j, time.Now()
		h.busy[pool+"\x00"+j.key] = j.runID
		offers = append(offers, offer{w, w.conn, j})
	}
	h.mu.Unlock()
	for _, o := range offers {
		if err := o.c.Send(relay.Msg{Type: relay.MsgOffer, Run: o.j.runID}); err != nil {
			h.s.log.Warn("offering a run to a worker", "worker", o.w.name, "run", o.j.runID, "err", err)
		}
	}
}

// idleWorkers lists pool's workers waiting for work, by name; h.mu held.
func (h *relayHub) idleWorkers(pool string) []*relayWorker {
	var out []*relayWorker
	for _, w := range h.workers {
		if w.pool == pool && w.conn != nil && w.polling && !w.draining && w.offered == nil && w.lease == nil {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *relayWorker) int { return strings.Compare(a.name, b.name) })
	return out
}

// nextJob removes and returns pool's oldest run whose working directory is
// free and whose project w has a checkout of; h.mu held.
func (h *relayHub) nextJob(pool string, w *relayWorker) (relayJob, bool) {
	q := h.queues[pool]
	for i, j := range q {
		if _, busy := h.busy[pool+"\x00"+j.key]; busy || !slices.Contains(w.projects, j.project()) {
			continue
		}
		h.queues[pool] = append(q[:i:i], q[i+1:]...)
		return j, true
	}
	return relayJob{}, false
}

// requeue puts an offered run that was not taken back at the front of its
// pool's queue; h.mu held.
func (h *relayHub) requeue(w *relayWorker) {
	if w.offered == nil {
		return
	}
	j := *w.offered
	w.offered = nil
	delete(h.busy, j.pool+"\x00"+j.key)
	h.queues[j.pool] = append([]relayJob{j}, h.queues[j.pool]...)
}

// dequeue removes a queued run (a cancel), or takes back the offer of it
// no worker took yet; it reports whether it did either.
func (h *relayHub) dequeue(runID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.workers {
		if w.offered != nil && w.offered.runID == runID {
			delete(h.busy, w.offered.pool+"\x00"+w.offered.key)
			w.offered = nil // its take is answered with reject, and it polls again
			return true
		}
	}
	for pool, q := range h.queues {
		for i, j := range q {
			if j.runID == runID {
				h.queues[pool] = append(q[:i:i], q[i+1:]...)
				return true
			}
		}
	}
	return false
}

// waitReason says what a run queued on a pool waits for, or "".
func (h *relayHub) waitReason(runID string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for pool, q := range h.queues {
		for _, j := range q {
			if j.runID != runID {
				continue
			}
			if other, busy := h.busy[pool+"\x00"+j.key]; busy {
				return fmt.Sprintf("waiting behind run %s in the same working directory on pool %s", other, pool)
			}
			if !h.someWorkerHas(pool, "") {
				return fmt.Sprintf("waiting for a worker of pool %s: no worker of pool %s is connected", pool, pool)
			}
			if !h.someWorkerHas(pool, j.project()) {
				return fmt.Sprintf("waiting for a worker of pool %s whose file has a checkout of project %s (none connected has one)", pool, j.project())
			}
			return fmt.Sprintf("waiting for a free worker of pool %s", pool)
		}
	}
	return ""
}

// someWorkerHas reports whether a connected worker of pool has project
// (any worker of it for ""); h.mu held.
func (h *relayHub) someWorkerHas(pool, project string) bool {
	for _, w := range h.workers {
		if w.pool == pool && w.conn != nil && (project == "" || slices.Contains(w.projects, project)) {
			return true
		}
	}
	return false
}

// poolOf is the pool whose workers execute a template's queue, or "" when
// the control node does (or the template is gone).
func (s *Server) poolOf(template string) string {
	t := s.config().Templates[template]
	if t == nil {
		return ""
	}
	if q := s.config().Queues[t.Queue]; q != nil {
		return q.Pool
	}
	return ""
}

// workerEvent records a relay worker's event (connected, refused, lost,
// drained, a lease, a rejected result) in the audit trail and the operator
// log alike, one record per worker event (docs/monitoring.md, "The operator log").
func (s *Server) workerEvent(runID, worker, action, detail string) {
	s.audit(runID, worker, action, detail)
	s.log.Info(action, "worker", worker, "run", runID, "detail", s.scrub(detail))
}
