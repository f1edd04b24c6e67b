package server

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

// logAppender is what the sink needs from the store.
type logAppender interface {
	AppendLog(runID string, data []byte) (int64, error)
}

// logSink receives a run's masked output (it sits behind the masker), stores
// it in chunks and publishes each stored chunk to the run's followers. Stored
// first, published second: a follower that reads the store after subscribing
// can de-duplicate by offset and misses nothing.
type logSink struct {
	runID  string
	store  logAppender
	broker *broker

	mu      sync.Mutex
	pending []byte
	timer   *time.Timer
	err     error
}

func newLogSink(runID string, st logAppender, b *broker) *logSink {
	return &logSink{runID: runID, store: st, broker: b}
}

// Write buffers p and schedules a flush; it never blocks on followers.
func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	l.pending = append(l.pending, p...)
	if len(l.pending) >= logFlushBytes {
		l.flushLocked()
	} else if l.timer == nil {
		l.timer = time.AfterFunc(logFlushInterval, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.flushLocked()
		})
	}
	return len(p), l.err
}

func (l *logSink) flushLocked() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if len(l.pending) == 0 || l.err != nil {
		return
	}
	data := l.pending
	l.pending = nil
	off, err := l.store.AppendLog(l.runID, data)
	if err != nil {
		l.err = fmt.Errorf("storing log of run %s: %w", l.runID, err)
		return
	}
	l.broker.publishLog(l.runID, logEvent{Offset: off, Data: data})
}

// Flush stores and publishes whatever is pending.
func (l *logSink) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	return l.err
}

// Close flushes and tells followers the log stopped growing for now.
func (l *logSink) Close() error {
	err := l.Flush()
	l.broker.publishLog(l.runID, logEvent{End: true})
	return err
}
