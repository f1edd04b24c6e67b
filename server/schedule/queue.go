// Package schedule decides when work starts: the queue that runs jobs one
// per working directory and a bounded number at once, and the schedule of
// drift checks templates ask for with check_every or check_cron.
package schedule

import (
	"context"
	"fmt"
	"sync"
)

// Job is one queued piece of work: a run's next phase in a working directory.
type Job struct {
	RunID   string
	Workdir string // absolute working directory: the unit of mutual exclusion
}

// Queue runs queued jobs in arrival order with two limits: never two jobs
// in the same working directory at once (local state and .terraform live
// there, as for a person running tofu), and at most max jobs at once overall.
// A job whose working directory is busy waits without blocking later jobs in
// other directories.
type Queue struct {
	mu      sync.Mutex
	max     int
	queue   []Job
	busy    map[string]bool
	owner   map[string]string // working directory -> the run executing there
	running int
	cancels map[string]context.CancelCauseFunc
	exec    func(ctx context.Context, j Job)
	wg      sync.WaitGroup
	ctx     context.Context
	stopped bool
}

// NewQueue returns a queue that runs at most max jobs at once (at least
// one) by calling exec; Start starts it.
func NewQueue(max int, exec func(ctx context.Context, j Job)) *Queue {
	if max < 1 {
		max = 1
	}
	return &Queue{max: max, busy: map[string]bool{}, owner: map[string]string{}, cancels: map[string]context.CancelCauseFunc{}, exec: exec}
}

// Start begins dispatching; jobs run with contexts derived from ctx.
func (s *Queue) Start(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	s.dispatch()
}

// Enqueue adds a job at the back of the queue.
func (s *Queue) Enqueue(j Job) {
	s.mu.Lock()
	s.queue = append(s.queue, j)
	s.mu.Unlock()
	s.dispatch()
}

// Cancel stops a run: a queued job is removed (reported true, false), a
// running one has its context cancelled with cause (false, true).
func (s *Queue) Cancel(runID string, cause error) (dequeued, signalled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, j := range s.queue {
		if j.RunID == runID {
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

func (s *Queue) dispatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.stopped {
		return
	}
	for i := 0; i < len(s.queue) && s.running < s.max; {
		j := s.queue[i]
		if s.busy[j.Workdir] {
			i++
			continue
		}
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		s.busy[j.Workdir] = true
		s.owner[j.Workdir] = j.RunID
		s.running++
		ctx, cancel := context.WithCancelCause(s.ctx)
		s.cancels[j.RunID] = cancel
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.exec(ctx, j)
			cancel(nil)
			s.mu.Lock()
			delete(s.cancels, j.RunID)
			delete(s.busy, j.Workdir)
			delete(s.owner, j.Workdir)
			s.running--
			s.mu.Unlock()
			s.dispatch()
		}()
	}
}

// Depth returns how many jobs wait in the queue and how many run.
func (s *Queue) Depth() (queued, running int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue), s.running
}

// WaitReason says what a queued run waits for, as a phrase ("waiting
// behind run 31 in the same working directory"), or "" when the run is not
// in the queue.
func (s *Queue) WaitReason(runID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, j := range s.queue {
		if j.RunID != runID {
			continue
		}
		if s.busy[j.Workdir] {
			return fmt.Sprintf("waiting behind run %s in the same working directory", s.owner[j.Workdir])
		}
		for _, ahead := range s.queue[:i] {
			if ahead.Workdir == j.Workdir {
				return fmt.Sprintf("waiting behind run %s, queued earlier in the same working directory", ahead.RunID)
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

// Stop prevents new dispatches and waits for running jobs to return (their
// contexts end when the context given to Start ends).
func (s *Queue) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.wg.Wait()
}

// SetMax changes how many jobs may run at once (at least one); jobs
// already running go on.
func (s *Queue) SetMax(max int) {
	s.mu.Lock()
	s.max = 1
	if max > 1 {
		s.max = max
	}
	s.mu.Unlock()
	s.dispatch()
}
