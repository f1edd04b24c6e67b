// Package relay is the wire between the control node and its relay
// workers: the messages (Msg), the sealed payload a job carries (Payload),
// the limits on both, and the connection that reads and writes them as JSON
// lines (Conn).
//
// Both ends must come from the same build of switchtender: a message's
// fields and their meaning change between versions (in this one a
// refusal's busy mark, a payload in clear and a job's status are separate
// fields), so a worker of another version and this control node do not
// understand each other; a worker reports its version in its hello and
// `workers` shows it.
package relay

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

// Command is the SSH command a worker's session runs.
const Command = "relay"

// MaxLine bounds one protocol line: an apply job carries a plan of up
// to PlanLimit base64-encoded twice (in the payload's JSON, then the
// sealed payload in the job's), 16/9 of its size, with room for the rest.
const MaxLine = PlanLimit*2 + 8<<20

// LogChunk is the most log text one log message carries.
const LogChunk = 16 << 10

// Message types of the relay protocol.
const (
	MsgHello     = "hello"
	MsgPoll      = "poll"
	MsgOffer     = "offer"
	MsgTake      = "take"
	MsgDecline   = "decline"
	MsgJob       = "job"
	MsgHeartbeat = "heartbeat"
	MsgLog       = "log"
	MsgStep      = "step"
	MsgResult    = "result"
	MsgReject    = "reject"
	MsgCancel    = "cancel"
	MsgDrain     = "drain"
	MsgWelcome   = "welcome"
	MsgRefused   = "refused"
	MsgPlanning  = "planning"   // the gated plan's tool starts: its log from here is the plan text
	MsgPlanStart = "plan_start" // a saved plan follows: its size and its JSON's
	MsgPlanChunk = "plan_chunk" // part of the plan file (Part "plan") or its JSON ("json")
	MsgPlanEnd   = "plan_end"   // the plan and its JSON are complete
	MsgScanned   = "scanned"    // a scanned job's evidence: what the worker's scan read and found
	MsgScanPass  = "scan_pass"  // the control node's answer: the scan lets the run plan
	MsgScanStop  = "scan_stop"  // the control node's answer: it ended the run on the scan (held or refused)
)

// PlanLimit is the largest plan file that crosses the relay (spec: 19
// MiB); JSONLimit bounds its `show -json` rendering.
const (
	PlanLimit = 19 << 20
	JSONLimit = 256 << 20
	Chunk     = 512 << 10
)

// Msg is one line of the relay protocol; each type uses some fields.
type Msg struct {
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
	Payload   []byte        `json:"payload,omitempty"`   // Payload, sealed to the pool's delivery key
	Grace     time.Duration `json:"grace,omitempty"`     // interrupt-to-kill grace for the tool
	Phase     string        `json:"phase,omitempty"`     // plan, or apply (a saved plan)
	Gated     bool          `json:"gated,omitempty"`     // plan phase of a gated apply: hand the saved plan over
	ScanWhy   string        `json:"scan_why,omitempty"`  // the job is scanned before it plans, and why (scanFor)
	Ref       string        `json:"ref,omitempty"`       // a pull request's plan: the ref named at launch
	SHA       string        `json:"sha,omitempty"`       // and the commit the control node resolved it to ("" when it has no checkout)
	Clear     bool          `json:"clear,omitempty"`     // the payload is not sealed: it holds no secret

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
	Status   store.Status  `json:"status,omitempty"`  // result: the status the run ends with
	Quiet    bool          `json:"quiet,omitempty"`   // step: a process the run's steps do not list (state pull, show -json)
	NoLock   bool          `json:"no_lock,omitempty"` // step: init's start, where the worker found it can take no state lock (initTakesNoLock)
	Message  string        `json:"message,omitempty"` // result, reject, refused: a sentence
	Busy     bool          `json:"busy,omitempty"`    // refused: the name is still connected (and heard from) on another connection; try again later
	Commit   *store.Commit `json:"commit,omitempty"`  // result, scanned, plan_start: the commit the worker planned at (an apply phase's is its plan's, not taken)

	// scanned; scan_pass
	Scan     *store.Scan `json:"scan,omitempty"`
	Released string      `json:"released,omitempty"` // who released the scan's hold, when a person did
}

// Payload is what a job carries sealed to the pool's delivery key:
// the run's variables, its credentials' environment entries and the values
// the worker must mask before a log line leaves it.
type Payload struct {
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

// Conn reads and writes protocol lines; writes are safe from several
// goroutines. A worker writes synchronously. The control node, once a
// worker said hello, queues its lines for a writer goroutine (queue): no
// caller, the lease watcher above all, ever blocks on a worker that stopped
// reading, and a write stuck longer than the lease timeout closes the
// worker's connection (the control node's hub expires it).
type Conn struct {
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
func (c *Conn) HeardFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, c.heard.Load()))
}

// Outbox is how many lines may wait for a worker that reads slowly;
// one more closes its connection.
const Outbox = 256

// ErrClosed is a send on a connection that was closed.
var ErrClosed = errors.New("the relay connection is closed")

func NewConn(r io.Reader, w io.Writer) *Conn {
	c := &Conn{r: bufio.NewReaderSize(r, 64<<10), w: w, done: make(chan struct{})}
	c.heard.Store(time.Now().UnixNano())
	return c
}

// queue makes c's sends queued from now on; closer ends the connection.
func (c *Conn) Queue(closer func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out, c.closer = make(chan []byte, Outbox), closer
	go c.writeLoop(c.out)
}

// send writes one message as a line, or queues it.
func (c *Conn) Send(m Msg) error {
	line, err := Encode(m)
	if err != nil {
		return err
	}
	return c.SendLine(m.Type, line)
}

// Encode is m as a protocol line.
func Encode(m Msg) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding a relay %s message: %w", m.Type, err)
	}
	return append(b, '\n'), nil
}

// sendLine writes or queues an encoded message of type typ; queued, it
// never blocks.
func (c *Conn) SendLine(typ string, line []byte) error {
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
		return ErrClosed
	case out <- line:
		return nil
	default:
		go c.Shut() // never in the caller: it may hold a lease
		return fmt.Errorf("sending a relay %s message: the worker reads too slowly (%d messages wait), so its connection was closed", typ, Outbox)
	}
}

// closed reports whether c was shut.
func (c *Conn) Closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// writeLoop writes queued lines until the connection is closed.
func (c *Conn) writeLoop(out chan []byte) {
	for {
		select {
		case <-c.done:
			return
		case line := <-out:
			c.writing.Store(time.Now().UnixNano())
			_, err := c.w.Write(line)
			c.writing.Store(0)
			if err != nil {
				c.Shut()
				return
			}
		}
	}
}

// shut closes the connection once: queued lines are dropped.
func (c *Conn) Shut() {
	c.closeOnce.Do(func() {
		close(c.done)
		if c.closer != nil {
			c.closer()
		}
	})
}

// stuckFor is how long the write under way has waited, 0 when none is.
func (c *Conn) StuckFor(now time.Time) time.Duration {
	if t := c.writing.Load(); t != 0 {
		return now.Sub(time.Unix(0, t))
	}
	return 0
}

// ErrLineTooLong is a line longer than MaxLine.
var ErrLineTooLong = errors.New("a relay message is longer than the limit")

// recv reads one message; a line over MaxLine is an error.
func (c *Conn) Recv() (Msg, error) {
	var line []byte
	for {
		part, isPrefix, err := c.r.ReadLine()
		if err != nil {
			return Msg{}, err
		}
		line = append(line, part...)
		if len(line) > MaxLine {
			return Msg{}, ErrLineTooLong
		}
		if !isPrefix {
			break
		}
	}
	c.heard.Store(time.Now().UnixNano())
	var m Msg
	if err := json.Unmarshal(line, &m); err != nil {
		return Msg{}, fmt.Errorf("reading a relay message: %w", err)
	}
	return m, nil
}

// Queued is how many lines wait in c's outbox (0 for a connection that
// writes itself).
func (c *Conn) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.out)
}

// PlanTooLarge is the refusal of a plan file over the relay's limit: a
// plan fails without proposing an apply; a drift check keeps no plan.
func PlanTooLarge(kind store.Kind, size int64) string {
	what := "the plan fails without proposing an apply, and nothing was applied"
	if kind == store.KindCheck {
		what = "this drift check keeps no plan, so a reconcile cannot be proposed from it"
	}
	return fmt.Sprintf("The saved plan is %.1f MiB (%d bytes), over the %d MiB a plan file may cross the relay; %s. Run it on a queue the control node executes, or split the configuration.",
		float64(size)/(1<<20), size, PlanLimit>>20, what)
}
