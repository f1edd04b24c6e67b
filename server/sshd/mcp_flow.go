package sshd

import (
	"bytes"
	"io"
	"slices"
	"sync"
)

// mcpMaxInFlight bounds the messages an MCP session has read and not yet
// answered: past it the server reads no more until it has written, so a
// client that sends without reading its answers parks a bounded number of
// handlers (the transport answers each request from a goroutine of its
// own). Server pings and notifications count as answers; a ping the client
// answers frees the reader again.
const mcpMaxInFlight = 64

// mcpMaxInFlightBytes bounds, in the same way, the bytes of the messages
// read and not yet answered, so a session's memory stays bounded however
// large its messages (each up to MCPMaxMessage): a session holds at most
// this much of its client's messages, plus one line being read.
const mcpMaxInFlightBytes = 4 << 20

// mcpReadChunk bounds one read, so one read cannot bring in more than a
// few dozen requests past the bound.
const mcpReadChunk = 4096

// mcpFlow pairs an MCP session's reader and writer to hold reads while too
// many messages wait for an answer.
type mcpFlow struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending int   // lines read minus messages written, at least 0
	sizes   []int // byte sizes of the lines read and not yet answered, oldest first
	bytes   int   // their sum
	partial int   // bytes read of the line not yet ended
	closed  bool
}

func newMCPFlow() *mcpFlow {
	f := &mcpFlow{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// reader returns r, reading only while fewer than mcpMaxInFlight messages,
// and fewer than mcpMaxInFlightBytes of them, wait for an answer.
func (f *mcpFlow) reader(r io.Reader) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		f.mu.Lock()
		for (f.pending >= mcpMaxInFlight || f.bytes >= mcpMaxInFlightBytes) && !f.closed {
			f.cond.Wait()
		}
		f.mu.Unlock()
		n, err := r.Read(p[:min(len(p), mcpReadChunk)])
		f.mu.Lock()
		f.count(p[:n])
		f.mu.Unlock()
		return n, err
	})
}

// count records the lines b ends and their sizes; the caller holds f.mu.
func (f *mcpFlow) count(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.partial += len(b)
			return
		}
		size := f.partial + i + 1
		f.partial = 0
		f.pending++
		f.sizes = append(f.sizes, size)
		f.bytes += size
		b = b[i+1:]
	}
}

// wrote records that one message was written. Which message it answers
// is not known here, so it frees the place of the smallest one waiting:
// the bytes counted are then never fewer than those still held.
func (f *mcpFlow) wrote() {
	f.mu.Lock()
	f.pending = max(f.pending-1, 0)
	if len(f.sizes) > 0 {
		i := 0
		for j, n := range f.sizes {
			if n < f.sizes[i] {
				i = j
			}
		}
		f.bytes -= f.sizes[i]
		f.sizes = slices.Delete(f.sizes, i, i+1)
	}
	f.cond.Broadcast()
	f.mu.Unlock()
}

// releaseReader frees a reader waiting on the bound for good: the session ends.
func (f *mcpFlow) releaseReader() {
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
