package server

import (
	"sync"
)

// logEvent is one thing a log follower receives: a chunk of masked output
// starting at Offset bytes into the run's log, or End when the run's log
// stopped growing for now (a step sequence ended: finished, held or failed).
type logEvent struct {
	Offset int64
	Data   []byte
	End    bool
}

// subscriberBuffer is how many events a follower may lag behind before the
// broker drops it (DESIGN invariant 7: a slow session never slows a run). A
// dropped follower rejoins from its offset by reading the store again.
const subscriberBuffer = 256

// broker is a pub/sub hub for run logs and run changes, in the manner of
// OTF's: a buffered channel per subscriber, and a subscriber that cannot keep
// up is dropped (its channel closed) instead of blocking the publisher.
type broker struct {
	mu       sync.Mutex
	logs     map[string]map[chan logEvent]struct{}
	watchers map[chan struct{}]struct{}
}

func newBroker() *broker {
	return &broker{
		logs:     make(map[string]map[chan logEvent]struct{}),
		watchers: make(map[chan struct{}]struct{}),
	}
}

// subscribeLog returns a channel of the run's log events from now on and a
// function that ends the subscription. The channel is closed when the
// subscriber is dropped for being slow or when cancel is called.
func (b *broker) subscribeLog(runID string) (<-chan logEvent, func()) {
	ch := make(chan logEvent, subscriberBuffer)
	b.mu.Lock()
	subs := b.logs[runID]
	if subs == nil {
		subs = make(map[chan logEvent]struct{})
		b.logs[runID] = subs
	}
	subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.logs[runID][ch]; ok {
			delete(b.logs[runID], ch)
			close(ch)
			if len(b.logs[runID]) == 0 {
				delete(b.logs, runID)
			}
		}
	}
}

// publishLog hands ev to every follower of runID without ever blocking.
func (b *broker) publishLog(runID string, ev logEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.logs[runID] {
		select {
		case ch <- ev:
		default:
			delete(b.logs[runID], ch)
			close(ch)
		}
	}
	if len(b.logs[runID]) == 0 {
		delete(b.logs, runID)
	}
}

// watchRuns returns a channel that receives a tick whenever any run changes;
// ticks coalesce (buffer of one), so a slow watcher sees the latest state on
// its next read rather than every intermediate one.
func (b *broker) watchRuns() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	b.watchers[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.watchers[ch]; ok {
			delete(b.watchers, ch)
			close(ch)
		}
	}
}

// runChanged ticks every watcher without blocking.
func (b *broker) runChanged() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
