package schedule

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedJobs is a hand-written job function for the scheduler: every job
// announces its start on started, then blocks until the test releases it by
// run ID (or its context ends, when waitCtx is set). It records, with atomic
// counters, how many jobs run at once overall and per working directory, so
// an overlap the scheduler should have prevented is seen, not assumed.
type gatedJobs struct {
	t       *testing.T
	started chan string // run IDs, in the order jobs start

	mu       sync.Mutex
	release  map[string]chan struct{}
	perDir   map[string]*atomic.Int32
	order    map[string][]string // working directory -> run IDs in start order
	ctxErr   map[string]error    // run ID -> ctx.Err() when the job returned
	overlaps []string            // descriptions of same-directory overlaps

	running atomic.Int32
	peak    atomic.Int32
	waitCtx bool // return when the job's context ends as well as on release; set before start
	closed  bool // every gate is open (test cleanup); guarded by mu
}

func newGatedJobs(t *testing.T) *gatedJobs {
	return &gatedJobs{
		t:       t,
		started: make(chan string, 100),
		release: map[string]chan struct{}{},
		perDir:  map[string]*atomic.Int32{},
		order:   map[string][]string{},
		ctxErr:  map[string]error{},
	}
}

// gate returns the release channel of a run, creating it on first use.
func (g *gatedJobs) gate(runID string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.release[runID]
	if !ok {
		ch = make(chan struct{})
		if g.closed {
			close(ch)
		}
		g.release[runID] = ch
	}
	return ch
}

func (g *gatedJobs) exec(ctx context.Context, j Job) {
	g.mu.Lock()
	c, ok := g.perDir[j.Workdir]
	if !ok {
		c = new(atomic.Int32)
		g.perDir[j.Workdir] = c
	}
	g.order[j.Workdir] = append(g.order[j.Workdir], j.RunID)
	g.mu.Unlock()

	if n := c.Add(1); n > 1 {
		g.mu.Lock()
		g.overlaps = append(g.overlaps, fmt.Sprintf("run %s started while %d other job(s) ran in %s", j.RunID, n-1, j.Workdir))
		g.mu.Unlock()
	}
	n := g.running.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	g.started <- j.RunID
	if g.waitCtx {
		select {
		case <-g.gate(j.RunID):
		case <-ctx.Done():
		}
	} else {
		<-g.gate(j.RunID)
	}
	g.mu.Lock()
	g.ctxErr[j.RunID] = ctx.Err()
	g.mu.Unlock()
	g.running.Add(-1)
	c.Add(-1)
}

// free releases a run's job.
func (g *gatedJobs) free(runID string) { close(g.gate(runID)) }

// next waits for the next job to start and returns its run ID.
func (g *gatedJobs) next() string {
	g.t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(10 * time.Second):
		g.t.Fatalf("no job started within 10s")
		return ""
	}
}

// expect waits for the next start and fails unless it is runID.
func (g *gatedJobs) expect(runID string) {
	g.t.Helper()
	if got := g.next(); got != runID {
		g.t.Fatalf("job %s started, want %s", got, runID)
	}
}

// expectSet waits for len(ids) starts and fails unless they are exactly ids
// in some order.
func (g *gatedJobs) expectSet(ids ...string) {
	g.t.Helper()
	var got []string
	for range ids {
		got = append(got, g.next())
	}
	slices.Sort(got)
	want := slices.Clone(ids)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		g.t.Fatalf("jobs %v started, want %v", got, want)
	}
}

func (g *gatedJobs) checkNoOverlap() {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, o := range g.overlaps {
		g.t.Errorf("two jobs in one working directory at once: %s", o)
	}
}

// queued lists the run IDs still waiting in the scheduler's queue. Enqueue
// dispatches synchronously, so right after it returns a job is either in this
// list or already handed to a goroutine: a deterministic view, no sleeping.
func queued(s *Queue) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, j := range s.queue {
		ids = append(ids, j.RunID)
	}
	return ids
}

// startScheduler starts s and stops it at cleanup, releasing every job
// first so that stop can return.
func startScheduler(t *testing.T, s *Queue, g *gatedJobs) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	t.Cleanup(func() {
		cancel()
		g.mu.Lock()
		g.closed = true
		for _, ch := range g.release {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
		g.mu.Unlock()
		s.Stop()
	})
	return cancel
}

// Two jobs in the same working directory never run at once: the second
// waits until the first returns, while a job in another directory runs
// meanwhile.
func TestSchedulerSerialisesWorkingDirectory(t *testing.T) {
	g := newGatedJobs(t)
	s := NewQueue(4, g.exec)
	startScheduler(t, s, g)

	s.Enqueue(Job{RunID: "a1", Workdir: "/w/a"})
	g.expect("a1")
	s.Enqueue(Job{RunID: "a2", Workdir: "/w/a"})
	if q := queued(s); !slices.Equal(q, []string{"a2"}) {
		t.Fatalf("queue = %v while a1 runs in /w/a, want [a2]", q)
	}
	s.Enqueue(Job{RunID: "b1", Workdir: "/w/b"})
	g.expect("b1") // another directory runs while a1 holds /w/a
	if q := queued(s); !slices.Equal(q, []string{"a2"}) {
		t.Fatalf("queue = %v, want [a2] still waiting for /w/a", q)
	}
	g.free("b1")
	// Whatever b1's return dispatched, /w/a is still busy: a2 waits while
	// a third directory starts.
	s.Enqueue(Job{RunID: "c1", Workdir: "/w/c"})
	g.expect("c1")
	if q := queued(s); !slices.Equal(q, []string{"a2"}) {
		t.Fatalf("queue = %v after b1 returned, want [a2]", q)
	}
	g.free("a1")
	g.expect("a2")
	g.free("a2")
	g.free("c1")
	g.checkNoOverlap()
}

// At most max jobs run at once, across working directories; the rest wait
// and start as running ones return.
func TestSchedulerMaxParallel(t *testing.T) {
	g := newGatedJobs(t)
	s := NewQueue(2, g.exec)
	startScheduler(t, s, g)

	ids := []string{"1", "2", "3", "4", "5"}
	for _, id := range ids {
		s.Enqueue(Job{RunID: id, Workdir: "/w/" + id})
	}
	g.expectSet("1", "2")
	if q := queued(s); !slices.Equal(q, []string{"3", "4", "5"}) {
		t.Fatalf("queue = %v with max 2 and two running, want [3 4 5]", q)
	}
	// Each return lets exactly the next one in, in arrival order.
	for i, id := range ids[2:] {
		g.free(ids[i])
		g.expect(id)
	}
	g.free("4")
	g.free("5")
	if p := g.peak.Load(); p != 2 {
		t.Errorf("peak of jobs running at once = %d, want 2", p)
	}
	g.checkNoOverlap()
}

// A max below one is taken as one: runs still execute, one at a time.
func TestSchedulerMaxAtLeastOne(t *testing.T) {
	g := newGatedJobs(t)
	s := NewQueue(0, g.exec)
	startScheduler(t, s, g)
	s.Enqueue(Job{RunID: "1", Workdir: "/w/a"})
	s.Enqueue(Job{RunID: "2", Workdir: "/w/b"})
	g.expect("1")
	if q := queued(s); !slices.Equal(q, []string{"2"}) {
		t.Fatalf("queue = %v, want [2]", q)
	}
	g.free("1")
	g.expect("2")
	g.free("2")
}

// Jobs of one working directory start in the order they arrived, including
// jobs enqueued before the scheduler started (as recover does).
func TestSchedulerKeepsArrivalOrderPerDirectory(t *testing.T) {
	g := newGatedJobs(t)
	s := NewQueue(3, g.exec)
	var want = map[string][]string{}
	for i := range 12 {
		dir := []string{"/w/a", "/w/b", "/w/c"}[i%3]
		id := fmt.Sprintf("r%02d", i)
		if i%4 == 3 {
			dir = "/w/a" // uneven: /w/a gets more
		}
		want[dir] = append(want[dir], id)
		s.Enqueue(Job{RunID: id, Workdir: dir})
	}
	if q := queued(s); len(q) != 12 {
		t.Fatalf("a scheduler that has not started dispatched jobs: queue %v", q)
	}
	startScheduler(t, s, g)
	// Release every job as it starts; each directory's jobs run one by one.
	for range 12 {
		g.free(g.next())
	}
	g.mu.Lock()
	for dir, ids := range want {
		if !slices.Equal(g.order[dir], ids) {
			t.Errorf("jobs in %s started in order %v, want %v", dir, g.order[dir], ids)
		}
	}
	g.mu.Unlock()
	g.checkNoOverlap()
}

// A job waiting for a busy working directory does not hold up later jobs of
// other directories, even when it is at the head of the queue.
func TestSchedulerBusyDirectoryDoesNotBlockOthers(t *testing.T) {
	g := newGatedJobs(t)
	s := NewQueue(3, g.exec)
	startScheduler(t, s, g)

	s.Enqueue(Job{RunID: "a1", Workdir: "/w/a"})
	g.expect("a1")
	s.Enqueue(Job{RunID: "a2", Workdir: "/w/a"})
	s.Enqueue(Job{RunID: "a3", Workdir: "/w/a"})
	s.Enqueue(Job{RunID: "b1", Workdir: "/w/b"})
	s.Enqueue(Job{RunID: "c1", Workdir: "/w/c"})
	g.expectSet("b1", "c1")
	if q := queued(s); !slices.Equal(q, []string{"a2", "a3"}) {
		t.Fatalf("queue = %v, want [a2 a3] waiting for /w/a", q)
	}
	g.free("b1")
	g.free("c1")
	g.free("a1")
	g.expect("a2")
	g.free("a2")
	g.expect("a3")
	g.free("a3")
	g.checkNoOverlap()
}

// errShutdown is the cause the tests cancel a job with.
var errShutdown = errors.New("shutting down")

// Cancelling a queued job removes it (dequeued) and it never runs;
// cancelling a running one cancels its context (signalled); an unknown or
// finished run is neither.
func TestSchedulerCancel(t *testing.T) {
	g := newGatedJobs(t)
	g.waitCtx = true
	s := NewQueue(1, g.exec)
	startScheduler(t, s, g)

	s.Enqueue(Job{RunID: "run", Workdir: "/w/a"})
	g.expect("run")
	s.Enqueue(Job{RunID: "waits", Workdir: "/w/b"})
	s.Enqueue(Job{RunID: "after", Workdir: "/w/c"})

	if dq, sig := s.Cancel("waits", errShutdown); !dq || sig {
		t.Fatalf("cancel of a queued job = (dequeued %v, signalled %v), want (true, false)", dq, sig)
	}
	if q := queued(s); !slices.Equal(q, []string{"after"}) {
		t.Fatalf("queue after cancelling waits = %v, want [after]", q)
	}
	if dq, sig := s.Cancel("nope", errShutdown); dq || sig {
		t.Fatalf("cancel of an unknown run = (%v, %v), want (false, false)", dq, sig)
	}

	if dq, sig := s.Cancel("run", errShutdown); dq || !sig {
		t.Fatalf("cancel of a running job = (dequeued %v, signalled %v), want (false, true)", dq, sig)
	}
	// The running job returns on its cancelled context (it is never
	// released), and with max 1 the next in line is "after", not "waits".
	g.expect("after")
	g.mu.Lock()
	err := g.ctxErr["run"]
	g.mu.Unlock()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled job saw ctx.Err() = %v, want context.Canceled", err)
	}
	g.free("after")
	// Wait until "after" has returned and been cleared, then cancel it.
	s.Enqueue(Job{RunID: "last", Workdir: "/w/c"})
	g.expect("last")
	if dq, sig := s.Cancel("after", errShutdown); dq || sig {
		t.Fatalf("cancel of a finished run = (%v, %v), want (false, false)", dq, sig)
	}
	g.free("last")
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ran := g.ctxErr["waits"]; ran || slices.Contains(g.order["/w/b"], "waits") {
		t.Fatalf("a job cancelled while queued ran")
	}
	if g.ctxErr["after"] != nil {
		t.Fatalf("cancelling one job cancelled another: %v", g.ctxErr["after"])
	}
}

// Stop waits for running jobs to return and dispatches nothing after it
// was called.
func TestSchedulerStopWaitsForRunningJobs(t *testing.T) {
	g := newGatedJobs(t)
	s := NewQueue(2, g.exec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)

	s.Enqueue(Job{RunID: "a", Workdir: "/w/a"})
	g.expect("a")
	s.Enqueue(Job{RunID: "a2", Workdir: "/w/a"}) // waits for /w/a

	var stopReturned atomic.Bool
	done := make(chan struct{})
	go func() {
		s.Stop()
		stopReturned.Store(true)
		close(done)
	}()
	// Wait (without sleeping) until stop has been entered.
	for {
		s.mu.Lock()
		st := s.stopped
		s.mu.Unlock()
		if st {
			break
		}
		runtime.Gosched()
	}
	// A stop that did not wait would return now; give it the chance.
	select {
	case <-done:
		t.Fatalf("stop returned while a job was still running")
	case <-time.After(20 * time.Millisecond):
	}
	g.free("a")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("stop did not return after the running job returned")
	}
	g.mu.Lock()
	_, returned := g.ctxErr["a"]
	g.mu.Unlock()
	if !returned {
		t.Fatalf("stop returned before the running job did")
	}
	// a2 was waiting for /w/a and must not have been started by a's return,
	// nor by a later enqueue.
	s.Enqueue(Job{RunID: "b", Workdir: "/w/b"})
	select {
	case id := <-g.started:
		t.Fatalf("job %s started after stop", id)
	default:
	}
	if q := queued(s); !slices.Equal(q, []string{"a2", "b"}) {
		t.Fatalf("queue after stop = %v, want [a2 b] left undispatched", q)
	}
}
