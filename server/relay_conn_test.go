package server

// The control node's connection to a worker: a paused worker's connection is
// closed, a full outbox never blocks the lease watcher, and writers end with
// their sessions.

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/relay"
	"github.com/switchtender/switchtender/store"
	gossh "golang.org/x/crypto/ssh"
)

// Promise (relay_proto.go relay.Conn: "a write stuck longer than the lease
// timeout closes the worker's connection (relayHub.expire)"; README: a worker
// that stops heartbeating loses its lease, the run fails once). Once, a
// paused worker's connection was never closed: closing the SSH session first
// blocked behind the write stuck in TCP, the control node leaked goroutines
// every 250ms, and workers listed the worker as connected.
func TestAPausedWorkersConnectionIsClosed(t *testing.T) {
	h, keys, _ := relayHarness(t, blobGateTemplate)
	plan, js := planBlobByHand(t, h, 2<<20) // a job of about 4 MiB
	raw, pc, _ := dialPausable(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := readWorker(raw)
	id, job := leaseRun(t, h, raw, ch, "rblob13g")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	handOverPlan(raw, id, job.Token, plan, js)
	settlePlanPhase(h, id, 30*time.Second)
	if r, _ := h.srv.db.GetRun(id); r.Phase != phaseApply || r.Status != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	if offer, ok := nextMsg(ch, relay.MsgOffer, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	pc.pause() // the worker's machine pauses as it takes the apply phase
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	c := relayConnOf(h, "eu", "w2")
	waitFor(t, "the job's write to block", 15*time.Second, func() bool { return c.StuckFor(time.Now()) > 0 })

	h.waitStatus(id, StatusFailed, StatusSucceeded, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("the apply phase: %s: %s", r.Status, r.Message)
	time.Sleep(6 * time.Second) // three lease timeouts after the write stuck
	shuts := countStacks("relay.(*Conn).Shut")
	stuck := c.StuckFor(time.Now())
	still := relayConnOf(h, "eu", "w2") == c
	workers := h.mustSSH("alice", "workers")
	t.Logf("write stuck for %s; %d goroutines in relay.Conn.shut; still connected: %v\n%s", stuck.Round(time.Second), shuts, still, workers)
	if still || shuts > 1 {
		t.Logf("%d of them are the first shut, blocked in the SSH channel's Close", countStacks("relay.(*Conn).Shut", "(*channel).Close"))
		t.Fatalf("worker w2 stopped reading %s ago (lease timeout 2s), yet the control node never closed its connection (it is still w2's: %v) and %d goroutines wait in relay.Conn.shut, one more every 250ms",
			stuck.Round(time.Second), still, shuts)
	}
}

// Promise (relay_proto.go: "no caller, the lease watcher above all, ever
// blocks on a worker that stopped reading"). Once, a worker that filled its
// outbox and stopped reading made the lease watcher block for good in the
// connection's shut, so no lease of any pool was lost from then on.
func TestAFullOutboxCannotFreezeTheLeaseWatcher(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["bare"] = 2 * time.Second
	h.srv.relay.timeout["eu"] = 8 * time.Second
	h.srv.relay.mu.Unlock()
	raw, pc, _ := dialPausable(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	raw.Send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=g13", "--json"))
	if m := raw.Recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v", m)
	}
	raw.Send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.Recv()
	if job.Type != relay.MsgJob {
		t.Fatalf("take: %+v", job)
	}
	beat := func() { raw.Send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token}) }
	c := relayConnOf(h, "eu", "w2")
	big := strings.Repeat("x", 60<<10)
	start := time.Now()
	for n := 0; outboxLen(c) < relay.Outbox; n++ {
		if n > 2*relay.Outbox {
			t.Fatalf("the outbox holds %d after %d messages", outboxLen(c), n)
		}
		beat()
		before := outboxLen(c)
		raw.Send(relay.Msg{Type: big})
		wait := 2 * time.Second // for its reject to be queued behind the full window
		if before == 0 {
			wait = 100 * time.Millisecond // for it to be answered while the writer still writes
		}
		for deadline := time.Now().Add(wait); outboxLen(c) == before && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("256 rejects queued in %s", time.Since(start).Round(time.Millisecond))
	pc.pause()
	beat()
	time.Sleep(600 * time.Millisecond)
	go func() { // the worker takes what its SSH window held: the writer goes on into the unread socket
		for {
			if _, err := raw.Conn.Recv(); err != nil {
				return
			}
		}
	}()
	waitFor(t, "the writer to stick in TCP", 5*time.Second, func() bool {
		return countStacks("relay.(*Conn).writeLoop", "internal/poll.(*FD).Write") > 0
	})
	time.Sleep(200 * time.Millisecond)
	for n := 0; outboxLen(c) < relay.Outbox; n++ {
		if n > relay.Outbox {
			t.Fatalf("the outbox holds %d after %d more messages", outboxLen(c), n)
		}
		before := outboxLen(c)
		raw.Send(relay.Msg{Type: "x"})
		for deadline := time.Now().Add(2 * time.Second); outboxLen(c) == before && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("outbox full again, %s after start; the write is stuck for %s", time.Since(start).Round(time.Millisecond), c.StuckFor(time.Now()).Round(time.Millisecond))
	h.waitStatus(id, StatusFailed)
	time.Sleep(time.Second)

	b1, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare", Version: "raw"})
	b1.Send(relay.Msg{Type: relay.MsgPoll})
	bid := runIDOf(t, h.mustSSH("alice", "launch", "bnet", "--dry-run", "--var", "region=g13b", "--json"))
	if m := b1.Recv(); m.Type != relay.MsgOffer || m.Run != bid {
		t.Fatalf("offer %+v", m)
	}
	b1.Send(relay.Msg{Type: relay.MsgTake, Run: bid})
	if m := b1.Recv(); m.Type != relay.MsgJob {
		t.Fatalf("b1's take: %+v", m)
	}
	// b1 dies without a heartbeat: its run fails within 2s, if anything
	// still watches leases.
	deadline := time.Now().Add(10 * time.Second)
	var br store.Run
	for time.Now().Before(deadline) {
		if br, _ = h.srv.db.GetRun(bid); br.Status != StatusRunning {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("b1's dry run: %s (%s); the watcher in lose -> shut: %d", br.Status, br.Message, countStacks("(*relayHub).lose", "relay.(*Conn).Shut"))
	if br.Status == StatusRunning {
		t.Fatalf("10s after worker b1 of pool bare went silent (lease timeout 2s) its run %s is still running: the lease watcher is blocked in lose -> send -> shut -> sess.Close behind worker w2 of pool eu, which stopped reading", bid)
	}
}

// The control node's writer of a worker's queued lines ends with its session:
// after ten workers (real SSH, raw protocol) connect, poll, and hang up, or
// are replaced by a new connection of the same name, no relay.Conn writer is
// left.
func TestRelayWritersEndWithTheirSessions(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	before := countStacks("relay.(*Conn).writeLoop")
	for i := range 10 {
		raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
		if welcome.Type != relay.MsgWelcome {
			t.Fatalf("hello %d: %+v", i, welcome)
		}
		raw.Send(relay.Msg{Type: relay.MsgPoll})
		raw.Send(relay.Msg{Type: "nonsense"})
		if m := raw.Recv(); m.Type != relay.MsgReject {
			t.Fatalf("an unknown message was answered with %+v", m)
		}
		raw.Client.Close() // a second connection of the name is refused while this one is alive
	}
	waitFor(t, "the writers of closed sessions to end", 10*time.Second, func() bool {
		return countStacks("relay.(*Conn).writeLoop") <= before+5
	})
}

// pausableConn is a worker's TCP connection whose reading can be paused:
// while paused, nothing reads the socket at all (the worker's process is
// stopped, its VM frozen), so the control node's writes fill the TCP
// buffers rather than only the SSH window.
type pausableConn struct {
	net.Conn
	mu     sync.Mutex
	paused bool
	resume chan struct{}
}

func (c *pausableConn) Read(b []byte) (int, error) {
	for {
		c.mu.Lock()
		p, ch := c.paused, c.resume
		c.mu.Unlock()
		if !p {
			return c.Conn.Read(b)
		}
		<-ch
	}
}

func (c *pausableConn) pause() {
	c.mu.Lock()
	c.paused, c.resume = true, make(chan struct{})
	c.mu.Unlock()
}

func (c *pausableConn) unpause() {
	c.mu.Lock()
	if c.paused {
		c.paused = false
		close(c.resume)
	}
	c.mu.Unlock()
}

// dialPausable is dialRaw over an pausableConn with a small receive
// buffer (a worker's kernel under memory pressure, or any small one).
func dialPausable(t *testing.T, h *harness, key relayKey, hello relay.Msg) (*rawWorker, *pausableConn, relay.Msg) {
	t.Helper()
	// An Ethernet-sized segment (loopback's 64 KiB ones make the control
	// node's send buffer start far larger than on any real network).
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 1400)
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	nc, err := d.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	pc := &pausableConn{Conn: nc}
	cc, chans, reqs, err := gossh.NewClientConn(pc, h.addr, &gossh.ClientConfig{User: hello.Name, Auth: []gossh.AuthMethod{gossh.PublicKeys(key.Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	client := gossh.NewClient(cc, chans, reqs)
	t.Cleanup(func() { pc.unpause(); client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.Start(relay.Command); err != nil {
		t.Fatal(err)
	}
	w := &rawWorker{T: t, Client: client, Conn: relay.NewConn(out, in)}
	hello.Type = relay.MsgHello
	if hello.Projects == nil {
		hello.Projects = []string{"infra"}
	}
	w.Send(hello)
	return w, pc, w.Recv()
}

// countStacks counts the goroutines whose stack holds every one of
// the given substrings.
func countStacks(all ...string) int {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		ok := true
		for _, s := range all {
			ok = ok && strings.Contains(g, s)
		}
		if ok {
			n++
		}
	}
	return n
}

// relayConnOf is the control node's connection to worker pool/name
// (nil when it has none).
func relayConnOf(h *harness, pool, name string) *relay.Conn {
	h.srv.relay.mu.Lock()
	defer h.srv.relay.mu.Unlock()
	if w := h.srv.relay.workers[pool+"/"+name]; w != nil {
		return w.conn
	}
	return nil
}

// blobGateTemplate is a pool template over infra/blob13f whose apply a rule
// covers (max_destroy): its plan is handed over, passes (it only
// creates), and its apply phase's job carries the plan.
const blobGateTemplate = `
template "rblob13g" {
  project = "infra"
  command = "infra/blob13f"
  queue   = "eu"
}
rule "gate13g" {
  templates   = ["rblob13g"]
  kinds       = ["apply"]
  max_destroy = 0
  approvers   = ["bob"]
}
`

// planBlobByHand makes infra/blob13f hold about size bytes and returns
// a real saved plan of it and its rendering.
func planBlobByHand(t *testing.T, h *harness, size int) (plan, js []byte) {
	t.Helper()
	writeBlobModule(t, h.project, size)
	runTofuByHand(t, h, "infra/blob13f", "init", "-input=false")
	path := filepath.Join(t.TempDir(), "p.tfplan")
	runTofuByHand(t, h, "infra/blob13f", "plan", "-input=false", "-out="+path)
	js = bytes.TrimSpace(runTofuByHand(t, h, "infra/blob13f", "show", "-json", path))
	if i := bytes.IndexByte(js, '{'); i > 0 {
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan, js
}

// outboxLen is how many lines wait in c's outbox.
func outboxLen(c *relay.Conn) int {
	return c.Queued()
}
