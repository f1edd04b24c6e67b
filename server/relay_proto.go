package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/switchtender/switchtender/store"
)

// The relay protocol: a worker opens one SSH session running the command
// "relay" and both sides exchange JSON lines over it. The worker speaks
// first (hello), then asks for work (poll); the control node offers a run
// (offer), the worker takes or declines it (take, decline), and only a
// taken run is leased (job) with a fencing token. While it holds the
// lease the worker sends heartbeat, log, step and result messages carrying
// the lease and its token; the control node answers a message from a lease
// it no longer holds with reject, and the worker stops. drain says the
// worker takes no new run.

// relayCommand is the SSH command a worker's session runs.
const relayCommand = "relay"

// relayMaxLine bounds one protocol line (a log chunk is far smaller).
const relayMaxLine = 1 << 20

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
)

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

	// log, step, result
	Data     string        `json:"data,omitempty"`
	Step     string        `json:"step,omitempty"`
	Exit     int           `json:"exit,omitempty"`
	Started  time.Time     `json:"started,omitzero"`
	Finished time.Time     `json:"finished,omitzero"`
	Status   string        `json:"status,omitempty"`
	Message  string        `json:"message,omitempty"` // result, reject, refused: a sentence
	Commit   *store.Commit `json:"commit,omitempty"`
}

// relayPayload is what a job carries sealed to the pool's delivery key:
// the run's variables, its credentials' environment entries and the values
// the worker must mask before a log line leaves it.
type relayPayload struct {
	Vars    map[string]string `json:"vars"`
	Env     map[string]string `json:"env"`
	Secrets []string          `json:"secrets"`
}

// relayConn reads and writes protocol lines; writes are safe from several
// goroutines.
type relayConn struct {
	r  *bufio.Reader
	mu sync.Mutex
	w  io.Writer
}

func newRelayConn(r io.Reader, w io.Writer) *relayConn {
	return &relayConn{r: bufio.NewReaderSize(r, 64<<10), w: w}
}

// send writes one message as a line.
func (c *relayConn) send(m relayMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a relay %s message: %w", m.Type, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("sending a relay %s message: %w", m.Type, err)
	}
	return nil
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
	var m relayMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return relayMsg{}, fmt.Errorf("reading a relay message: %w", err)
	}
	return m, nil
}
