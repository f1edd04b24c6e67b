package server

import (
	"bytes"
	"io"
	"sync"
)

// mcpMaxInFlight bounds the messages an MCP session has read and not yet
// answered: past it the server reads no more until it has written, so a
// client that sends without reading its answers parks a bounded number of
// handlers (the transport answers each request from a goroutine of its
// own). Server pings and notifications count as answers; a ping the client
// answers frees the reader again.
const mcpMaxInFlight = 64

// mcpReadChunk bounds one read, so one read cannot bring in more than a
// few dozen requests past the bound.
const mcpReadChunk = 4096

// mcpFlow pairs an MCP session's reader and writer to hold reads while too
// many messages wait for an answer.
type mcpFlow struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending int // lines read minus messages written, at least 0
	closed  bool
}

func newMCPFlow() *mcpFlow {
	f := &mcpFlow{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// reader returns r, reading only while fewer than mcpMaxInFlight messages
// wait for an answer.
func (f *mcpFlow) reader(r io.Reader) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		f.mu.Lock()
		for f.pending >= mcpMaxInFlight && !f.closed {
			f.cond.Wait()
		}
		f.mu.Unlock()
		n, err := r.Read(p[:min(len(p), mcpReadChunk)])
		f.mu.Lock()
		f.pending += bytes.Count(p[:n], []byte{'\n'})
		f.mu.Unlock()
		return n, err
	})
}

// wrote records that one message was written.
func (f *mcpFlow) wrote() {
	f.mu.Lock()
	f.pending = max(f.pending-1, 0)
	f.cond.Broadcast()
	f.mu.Unlock()
}

// close frees a reader waiting on the bound: the session ends.
func (f *mcpFlow) close() {
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
