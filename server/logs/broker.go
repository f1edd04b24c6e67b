// Package logs carries run logs from the executor to their followers: a
// sink that stores a run's masked output in chunks and publishes each, and
// the broker that hands published chunks and run changes to subscribers
// without ever blocking the publisher.
package logs

import (
	"sync"
)

// Event is one thing a log follower receives: a chunk of masked output
// starting at Offset bytes into the run's log, or End when the run's log
// stopped growing for now (a step sequence ended: finished, held or failed).
type Event struct {
	Offset int64
	Data   []byte
	End    bool
}

// SubscriberBuffer is how many events a follower may lag behind before the
// broker drops it (DESIGN invariant 7: a slow session never slows a run). A
// dropped follower rejoins from its offset by reading the store again.
const SubscriberBuffer = 256

// Broker is a pub/sub hub for run logs and run changes, in the manner of
// OTF's: a buffered channel per subscriber, and a subscriber that cannot keep
// up is dropped (its channel closed) instead of blocking the publisher.
type Broker struct {
	mu       sync.Mutex
	logs     map[string]map[chan Event]struct{}
	watchers map[chan struct{}]struct{}
}

// NewBroker returns a broker with no subscribers.
func NewBroker() *Broker {
	return &Broker{
		logs:     make(map[string]map[chan Event]struct{}),
		watchers: make(map[chan struct{}]struct{}),
	}
}

// SubscribeLog returns a channel of the run's log events from now on and a
// function that ends the subscription. The channel is closed when the
// subscriber is dropped for being slow or when cancel is called.
func (b *Broker) SubscribeLog(runID string) (<-chan Event, func()) {
	ch := make(chan Event, SubscriberBuffer)
	b.mu.Lock()
	subs := b.logs[runID]
	if subs == nil {
		subs = make(map[chan Event]struct{})
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

// PublishLog hands ev to every follower of runID without ever blocking.
func (b *Broker) PublishLog(runID string, ev Event) {
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

// WatchRuns returns a channel that receives a tick whenever any run changes;
// ticks coalesce (buffer of one), so a slow watcher sees the latest state on
// its next read rather than every intermediate one.
func (b *Broker) WatchRuns() (<-chan struct{}, func()) {
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

// RunChanged ticks every watcher without blocking.
func (b *Broker) RunChanged() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
