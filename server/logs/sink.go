package logs

import (
	"fmt"
	"sync"
	"time"
)

// logFlushInterval bounds how long masked output waits in memory before it is
// stored and published: short enough for a live view (well under the 100 ms
// the console aims for), long enough that a chatty tool is not one bbolt
// commit per line.
const logFlushInterval = 15 * time.Millisecond

// logFlushBytes flushes early once this many bytes are pending.
const logFlushBytes = 64 << 10

// Appender is what the sink needs from the store.
type Appender interface {
	AppendLog(runID string, data []byte) (int64, error)
}

// Sink receives a run's masked output (it sits behind the masker), stores
// it in chunks and publishes each stored chunk to the run's followers. Stored
// first, published second: a follower that reads the store after subscribing
// can de-duplicate by offset and misses nothing. The store commit happens
// outside the lock Write takes, so the tool's output is never held up by an
// fsync; flushMu keeps the chunks in order.
type Sink struct {
	runID  string
	store  Appender
	broker *Broker

	flushMu sync.Mutex // held while a chunk is stored and published

	mu      sync.Mutex // guards the fields below
	pending []byte
	timer   *time.Timer
	err     error
	ended   bool // the end event was published
}

// NewSink returns the sink of run runID: it stores in st and publishes
// through b.
func NewSink(runID string, st Appender, b *Broker) *Sink {
	return &Sink{runID: runID, store: st, broker: b}
}

// Write buffers p and schedules a flush (at once when logFlushBytes are
// pending); it never blocks on the store or on followers.
func (l *Sink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	l.pending = append(l.pending, p...)
	if l.timer == nil {
		d := logFlushInterval
		if len(l.pending) >= logFlushBytes {
			d = 0
		}
		l.timer = time.AfterFunc(d, func() { l.Flush() })
	}
	return len(p), nil
}

// Flush stores and publishes whatever is pending, and returns the first
// storage error the sink met.
func (l *Sink) Flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	data, err := l.pending, l.err
	l.pending = nil
	l.mu.Unlock()
	if err != nil || len(data) == 0 {
		return err
	}
	off, err := l.store.AppendLog(l.runID, data)
	if err != nil {
		l.mu.Lock()
		l.err = fmt.Errorf("storing log of run %s: %w", l.runID, err)
		err = l.err
		l.mu.Unlock()
		return err
	}
	l.broker.PublishLog(l.runID, Event{Offset: off, Data: data})
	return nil
}

// Close flushes and tells followers the log stopped growing for now; the
// end is told once however often Close is called.
func (l *Sink) Close() error {
	err := l.Flush()
	l.mu.Lock()
	ended := l.ended
	l.ended = true
	l.mu.Unlock()
	if !ended {
		l.broker.PublishLog(l.runID, Event{End: true})
	}
	return err
}
