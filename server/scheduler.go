package server

import (
	"context"
	"fmt"
	"sync"
)

// job is one queued piece of work: a run's next phase in a working directory.
type job struct {
	runID   string
	workdir string // absolute working directory: the unit of mutual exclusion
}

// scheduler runs queued jobs in arrival order with two limits: never two jobs
// in the same working directory at once (local state and .terraform live
// there, as for a person running tofu), and at most max jobs at once overall.
// A job whose working directory is busy waits without blocking later jobs in
// other directories.
type scheduler struct {
	mu      sync.Mutex
	max     int
	queue   []job
	busy    map[string]bool
	owner   map[string]string // working directory -> the run executing there
	running int
	cancels map[string]context.CancelCauseFunc
	exec    func(ctx context.Context, j job)
	wg      sync.WaitGroup
	ctx     context.Context
	stopped bool
}

func newScheduler(max int, exec func(ctx context.Context, j job)) *scheduler {
	if max < 1 {
		max = 1
	}
	return &scheduler{max: max, busy: map[string]bool{}, owner: map[string]string{}, cancels: map[string]context.CancelCauseFunc{}, exec: exec}
}

// start begins dispatching; jobs run with contexts derived from ctx.
func (s *scheduler) start(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	s.dispatch()
}

// enqueue adds a job at the back of the queue.
func (s *scheduler) enqueue(j job) {
	s.mu.Lock()
	s.queue = append(s.queue, j)
	s.mu.Unlock()
	s.dispatch()
}

// cancel stops a run: a queued job is removed (reported true, false), a
// running one has its context cancelled with cause (false, true).
func (s *scheduler) cancel(runID string, cause error) (dequeued, signalled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, j := range s.queue {
		if j.runID == runID {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return true, false
		}
	}
	if c, ok := s.cancels[runID]; ok {
		c(cause)
		return false, true
	}
	return false, false
}

func (s *scheduler) dispatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.stopped {
		return
	}
	for i := 0; i < len(s.queue) && s.running < s.max; {
		j := s.queue[i]
		if s.busy[j.workdir] {
			i++
			continue
		}
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		s.busy[j.workdir] = true
		s.owner[j.workdir] = j.runID
		s.running++
		ctx, cancel := context.WithCancelCause(s.ctx)
		s.cancels[j.runID] = cancel
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.exec(ctx, j)
			cancel(nil)
			s.mu.Lock()
			delete(s.cancels, j.runID)
			delete(s.busy, j.workdir)
			delete(s.owner, j.workdir)
			s.running--
			s.mu.Unlock()
			s.dispatch()
		}()
	}
}

// depth returns how many jobs wait in the queue and how many run.
func (s *scheduler) depth() (queued, running int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue), s.running
}

// waitReason says what a queued run waits for, as a phrase ("waiting
// behind run 31 in the same working directory"), or "" when the run is not
// in the queue.
func (s *scheduler) waitReason(runID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, j := range s.queue {
		if j.runID != runID {
			continue
		}
		if s.busy[j.workdir] {
			return fmt.Sprintf("waiting behind run %s in the same working directory", s.owner[j.workdir])
		}
		for _, ahead := range s.queue[:i] {
			if ahead.workdir == j.workdir {
				return fmt.Sprintf("waiting behind run %s, queued earlier in the same working directory", ahead.runID)
			}
		}
		if s.running >= s.max {
			return fmt.Sprintf("waiting for a free slot: %d runs are executing, the most max_parallel allows", s.running)
		}
		if s.ctx == nil || s.stopped {
			return "waiting for the server to start running queued runs"
		}
		return "about to start"
	}
	return ""
}

// stop prevents new dispatches and waits for running jobs to return (their
// contexts end when the context given to start ends).
func (s *scheduler) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.wg.Wait()
}
