package sshd

import (
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// An MCP client that sends large messages and reads no answers is read
// only up to mcpMaxInFlightBytes of them (plus one read), however few
// messages that is; an answer frees room again. The break it guards: the
// message count alone bounded a session, so 64 messages of 2 MiB each
// (128 MiB) could sit in one session's memory.
func TestMCPSessionHoldsBoundedBytesOfUnansweredMessages(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("x", 1<<20-1) + "\n" // 1 MiB messages
	src := &countingReader{r: strings.NewReader(strings.Repeat(line, 64))}
	f := newMCPFlow()
	defer f.releaseReader()
	go func() { _, _ = io.Copy(io.Discard, f.reader(src)) }()
	waitFor(t, "the reader to stop", 10*time.Second, func() bool { return src.quiet(200 * time.Millisecond) })
	held := src.total()
	if held > mcpMaxInFlightBytes+mcpReadChunk || held < mcpMaxInFlightBytes {
		t.Fatalf("read %d bytes with none answered; the bound is %d", held, mcpMaxInFlightBytes)
	}
	f.wrote()
	waitFor(t, "an answer to free room", 10*time.Second, func() bool { return src.total() > held })
}

// countingReader counts what was read through it and when.
type countingReader struct {
	r    io.Reader
	mu   sync.Mutex
	n    int64
	last time.Time
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	c.n += int64(n)
	c.last = time.Now()
	c.mu.Unlock()
	return n, err
}

func (c *countingReader) total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// quiet reports whether something was read and then nothing for d.
func (c *countingReader) quiet(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.last.IsZero() && time.Since(c.last) >= d
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
