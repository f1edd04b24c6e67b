package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchtender/switchtender/store"
)

// The relay protocol: a worker opens one SSH session running the command
// "relay" and both sides exchange JSON lines over it. The worker speaks
// first (hello), then asks for work (poll); the control node offers a run
// (offer), the worker takes or declines it (take, decline), and only a
// taken run is leased (job) with a fencing token. While it holds the
// lease the worker sends heartbeat, log, step and result messages carrying
// the lease and its token (a step message before each tool process starts,
// and another when it ends, so a worker lost mid-step is reported with the
// step it was in); the control node answers a message from a lease
// it no longer holds with reject, and the worker stops. drain says the
// worker takes no new run.

// relayCommand is the SSH command a worker's session runs.
const relayCommand = "relay"

// relayMaxLine bounds one protocol line: an apply job carries a plan of up
// to relayPlanLimit base64-encoded twice (in the payload's JSON, then the
// sealed payload in the job's), 16/9 of its size, with room for the rest.
const relayMaxLine = relayPlanLimit*2 + 8<<20

// relayLogChunk is the most log text one log message carries.
const relayLogChunk = 16 << 10

// Message types of the relay protocol.
const (
	msgHello     = "hello"
	msgPoll      = "poll"
	msgOffer     = "offer"
	msgTake      = "take"
	msgDecline   = "decline"
	msgJob       = "job"
	msgHeartbeat = "heartbeat"
	msgLog       = "log"
	msgStep      = "step"
	msgResult    = "result"
	msgReject    = "reject"
	msgCancel    = "cancel"
	msgDrain     = "drain"
	msgWelcome   = "welcome"
	msgRefused   = "refused"
	msgPlanning  = "planning"   // the gated plan's tool starts: its log from here is the plan text
	msgPlanStart = "plan_start" // a saved plan follows: its size and its JSON's
	msgPlanChunk = "plan_chunk" // part of the plan file (Part "plan") or its JSON ("json")
	msgPlanEnd   = "plan_end"   // the plan and its JSON are complete
	msgScanned   = "scanned"    // a scanned job's evidence: what the worker's scan read and found
	msgScanPass  = "scan_pass"  // the control node's answer: the scan lets the run plan
	msgScanStop  = "scan_stop"  // the control node's answer: it ended the run on the scan (held or refused)
)

// relayPlanLimit is the largest plan file that crosses the relay (spec: 19
// MiB); relayJSONLimit bounds its `show -json` rendering.
const (
	relayPlanLimit = 19 << 20
	relayJSONLimit = 256 << 20
	relayChunk     = 512 << 10
)

// statusBusy marks a refusal a worker should try again later: its name is
// still connected (and heard from) on another connection.
const statusBusy = "busy"

// statusHandedOff is a worker's own note that its job ended by handing
// its saved plan to the control node; it sends no result for it.
const statusHandedOff = "handed_off"

// relayMsg is one line of the relay protocol; each type uses some fields.
type relayMsg struct {
	Type string `json:"type"`

	// hello
	Name     string   `json:"name,omitempty"`
	Pool     string   `json:"pool,omitempty"`
	Version  string   `json:"version,omitempty"`
	Projects []string `json:"projects,omitempty"`

	// offer, take, decline, job, and every message of a lease
	Run   string `json:"run,omitempty"`
	Lease string `json:"lease,omitempty"`
	Token uint64 `json:"token,omitempty"`

	// job
	Kind      string        `json:"kind,omitempty"` // plan (a dry run) or apply (ungated)
	Project   string        `json:"project,omitempty"`
	Command   string        `json:"command,omitempty"`
	Tool      string        `json:"tool,omitempty"`
	Heartbeat time.Duration `json:"heartbeat,omitempty"` // how often to send one
	Payload   []byte        `json:"payload,omitempty"`   // relayPayload, sealed to the pool's delivery key
	Grace     time.Duration `json:"grace,omitempty"`     // interrupt-to-kill grace for the tool
	Phase     string        `json:"phase,omitempty"`     // plan, or apply (a saved plan)
	Gated     bool          `json:"gated,omitempty"`     // plan phase of a gated apply: hand the saved plan over
	ScanWhy   string        `json:"scan_why,omitempty"`  // the job is scanned before it plans, and why (scanFor)
	Ref       string        `json:"ref,omitempty"`       // a pull request's plan: the ref named at launch
	SHA       string        `json:"sha,omitempty"`       // and the commit the control node resolved it to ("" when it has no checkout)

	// plan_start, plan_chunk
	Size       int64             `json:"size,omitempty"`
	JSONSize   int64             `json:"json_size,omitempty"`
	StartFiles map[string]string `json:"start_files,omitempty"` // plan_start: the files under the plan's working directory (scan.InputFiles) (store.Proposal.StartFiles)
	Part       string            `json:"part,omitempty"`
	Blob       []byte            `json:"blob,omitempty"`

	// log, step, result (a step with no Finished is a start)
	Data     string        `json:"data,omitempty"`
	Step     string        `json:"step,omitempty"`
	Exit     int           `json:"exit,omitempty"`
	Started  time.Time     `json:"started,omitzero"`
	Finished time.Time     `json:"finished,omitzero"`
	Status   string        `json:"status,omitempty"`
	Quiet    bool          `json:"quiet,omitempty"`   // step: a process the run's steps do not list (state pull, show -json)
	NoLock   bool          `json:"no_lock,omitempty"` // step: init's start, where the worker found it can take no state lock (initTakesNoLock)
	Message  string        `json:"message,omitempty"` // result, reject, refused: a sentence
	Commit   *store.Commit `json:"commit,omitempty"`

	// scanned; scan_pass
	Scan     *store.Scan `json:"scan,omitempty"`
	Released string      `json:"released,omitempty"` // who released the scan's hold, when a person did
}

// relayPayload is what a job carries sealed to the pool's delivery key:
// the run's variables, its credentials' environment entries and the values
// the worker must mask before a log line leaves it.
type relayPayload struct {
	Vars    map[string]string `json:"vars"`
	Env     map[string]string `json:"env"`
	Secrets []string          `json:"secrets"`
	Plan    []byte            `json:"plan,omitempty"`   // the saved plan an apply phase carries out
	Digest  string            `json:"digest,omitempty"` // its released digest
	// StartFiles are the files under the working directory (scan.InputFiles) the
	// plan was made in (store.Proposal.StartFiles): the apply phase finds the
	// same ones or starts nothing.
	StartFiles map[string]string `json:"start_files,omitempty"`
}

// relayConn reads and writes protocol lines; writes are safe from several
// goroutines. A worker writes synchronously. The control node, once a
// worker said hello, queues its lines for a writer goroutine (queue): no
// caller, the lease watcher above all, ever blocks on a worker that stopped
// reading, and a write stuck longer than the lease timeout closes the
// worker's connection (relayHub.expire).
type relayConn struct {
	r  *bufio.Reader
	mu sync.Mutex
	w  io.Writer

	out       chan []byte // queued lines; nil: send writes itself
	closer    func()
	closeOnce sync.Once
	done      chan struct{}
	writing   atomic.Int64 // when the write under way began (Unix ns), 0 when none is
	heard     atomic.Int64 // when the last line was read (Unix ns)
}

// heardFor is how long ago the last line was read from c (its start when
// none was).
func (c *relayConn) heardFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, c.heard.Load()))
}

// relayOutbox is how many lines may wait for a worker that reads slowly;
// one more closes its connection.
const relayOutbox = 256

// errRelayClosed is a send on a connection that was closed.
var errRelayClosed = errors.New("the relay connection is closed")

func newRelayConn(r io.Reader, w io.Writer) *relayConn {
	c := &relayConn{r: bufio.NewReaderSize(r, 64<<10), w: w, done: make(chan struct{})}
	c.heard.Store(time.Now().UnixNano())
	return c
}

// queue makes c's sends queued from now on; closer ends the connection.
func (c *relayConn) queue(closer func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out, c.closer = make(chan []byte, relayOutbox), closer
	go c.writeLoop(c.out)
}

// send writes one message as a line, or queues it.
func (c *relayConn) send(m relayMsg) error {
	line, err := encodeRelay(m)
	if err != nil {
		return err
	}
	return c.sendLine(m.Type, line)
}

// encodeRelay is m as a protocol line.
func encodeRelay(m relayMsg) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding a relay %s message: %w", m.Type, err)
	}
	return append(b, '\n'), nil
}

// sendLine writes or queues an encoded message of type typ; queued, it
// never blocks.
func (c *relayConn) sendLine(typ string, line []byte) error {
	c.mu.Lock()
	out := c.out
	if out == nil {
		defer c.mu.Unlock()
		if _, err := c.w.Write(line); err != nil {
			return fmt.Errorf("sending a relay %s message: %w", typ, err)
		}
		return nil
	}
	c.mu.Unlock()
	select {
	case <-c.done:
		return errRelayClosed
	case out <- line:
		return nil
	default:
		go c.shut() // never in the caller: it may hold a lease
		return fmt.Errorf("sending a relay %s message: the worker reads too slowly (%d messages wait), so its connection was closed", typ, relayOutbox)
	}
}

// closed reports whether c was shut.
func (c *relayConn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// writeLoop writes queued lines until the connection is closed.
func (c *relayConn) writeLoop(out chan []byte) {
	for {
		select {
		case <-c.done:
			return
		case line := <-out:
			c.writing.Store(time.Now().UnixNano())
			_, err := c.w.Write(line)
			c.writing.Store(0)
			if err != nil {
				c.shut()
				return
			}
		}
	}
}

// shut closes the connection once: queued lines are dropped.
func (c *relayConn) shut() {
	c.closeOnce.Do(func() {
		close(c.done)
		if c.closer != nil {
			c.closer()
		}
	})
}

// stuckFor is how long the write under way has waited, 0 when none is.
func (c *relayConn) stuckFor(now time.Time) time.Duration {
	if t := c.writing.Load(); t != 0 {
		return now.Sub(time.Unix(0, t))
	}
	return 0
}

// errRelayLine is a line longer than relayMaxLine.
var errRelayLine = errors.New("a relay message is longer than the limit")

// recv reads one message; a line over relayMaxLine is an error.
func (c *relayConn) recv() (relayMsg, error) {
	var line []byte
	for {
		part, isPrefix, err := c.r.ReadLine()
		if err != nil {
			return relayMsg{}, err
		}
		line = append(line, part...)
		if len(line) > relayMaxLine {
			return relayMsg{}, errRelayLine
		}
		if !isPrefix {
			break
		}
	}
	c.heard.Store(time.Now().UnixNano())
	var m relayMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return relayMsg{}, fmt.Errorf("reading a relay message: %w", err)
	}
	return m, nil
}
