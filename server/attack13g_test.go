package server

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

// attack13gConn is a worker's TCP connection whose reading can be paused:
// while paused, nothing reads the socket at all (the worker's process is
// stopped, its VM frozen), so the control node's writes fill the TCP
// buffers rather than only the SSH window.
type attack13gConn struct {
	net.Conn
	mu     sync.Mutex
	paused bool
	resume chan struct{}
}

func (c *attack13gConn) Read(b []byte) (int, error) {
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

func (c *attack13gConn) pause() {
	c.mu.Lock()
	c.paused, c.resume = true, make(chan struct{})
	c.mu.Unlock()
}

func (c *attack13gConn) unpause() {
	c.mu.Lock()
	if c.paused {
		c.paused = false
		close(c.resume)
	}
	c.mu.Unlock()
}

// attack13gDial is dialRaw over an attack13gConn with a small receive
// buffer (a worker's kernel under memory pressure, or any small one).
func attack13gDial(t *testing.T, h *harness, key relayKey, hello relay.Msg) (*rawWorker, *attack13gConn, relay.Msg) {
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
	pc := &attack13gConn{Conn: nc}
	cc, chans, reqs, err := gossh.NewClientConn(pc, h.addr, &gossh.ClientConfig{User: hello.Name, Auth: []gossh.AuthMethod{gossh.PublicKeys(key.signer)},
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
	w := &rawWorker{t: t, client: client, c: relay.NewConn(out, in), in: in}
	hello.Type = relay.MsgHello
	if hello.Projects == nil {
		hello.Projects = []string{"infra"}
	}
	w.send(hello)
	return w, pc, w.recv()
}

// attack13gStacks counts the goroutines whose stack holds every one of
// the given substrings.
func attack13gStacks(all ...string) int {
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

// attack13gConnOf is the control node's connection to worker pool/name
// (nil when it has none).
func attack13gConnOf(h *harness, pool, name string) *relay.Conn {
	h.srv.relay.mu.Lock()
	defer h.srv.relay.mu.Unlock()
	if w := h.srv.relay.workers[pool+"/"+name]; w != nil {
		return w.conn
	}
	return nil
}

// attack13gGate is a pool template over infra/blob13f whose apply a rule
// covers (max_destroy): its plan is handed over, passes (it only
// creates), and its apply phase's job carries the plan.
const attack13gGate = `
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

// attack13gBlobPlan makes infra/blob13f hold about size bytes and returns
// a real saved plan of it and its rendering.
func attack13gBlobPlan(t *testing.T, h *harness, size int) (plan, js []byte) {
	t.Helper()
	attack13fBlob(t, h.project, size)
	attack13bTofu(t, h, "infra/blob13f", "init", "-input=false")
	path := filepath.Join(t.TempDir(), "p.tfplan")
	attack13bTofu(t, h, "infra/blob13f", "plan", "-input=false", "-out="+path)
	js = bytes.TrimSpace(attack13bTofu(t, h, "infra/blob13f", "show", "-json", path))
	if i := bytes.IndexByte(js, '{'); i > 0 {
		js = js[i:]
	}
	plan, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan, js
}

// Promise (server/relay relay.Conn: "a write stuck longer than the lease
// timeout closes the worker's connection (relayHub.expire)"; README: a
// worker that stops heartbeating loses its lease, the run fails once).
// Break: relay.Conn.Shut closes c.done and then runs the closer, which
// calls sess.Close() BEFORE the connection's Close. When the worker's
// machine pauses with its TCP socket unread (a stopped process, a frozen
// VM, on any network whose segments are not loopback's 64 KiB), the
// writer goroutine is blocked inside the SSH channel's Write, in the TCP
// write, holding the channel's write lock and the transport's; sess.Close
// needs that lock to send its channel-close message, so it blocks too, and
// conn.Close(), which alone would end the TCP write, is never reached.
// The connection is never closed; expire sees the write still stuck and
// starts another `go w.conn.shut()` every 250ms, each blocked for good in
// closeOnce: the control node leaks four goroutines a second per paused
// worker, and `workers` lists the worker as connected for as long as it
// is paused.
func TestAttack13gPausedWorkerNeverClosed(t *testing.T) {
	h, keys, _ := relayHarness(t, attack13gGate)
	plan, js := attack13gBlobPlan(t, h, 2<<20) // a job of about 4 MiB
	raw, pc, _ := attack13gDial(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	ch := attack13bReader(raw)
	id, job := attack13bLease(t, h, raw, ch, "rblob13g")
	if !job.Gated {
		t.Fatalf("job %+v is not a gated plan", job)
	}
	attack13bHandOver(raw, id, job.Token, plan, js)
	attack13bSettle(h, id, 30*time.Second)
	if r, _ := h.srv.db.GetRun(id); Phase(r.Phase) != phaseApply || Status(r.Status) != StatusRunning {
		t.Fatalf("the plan was not passed on: %s %s %s", r.Status, r.Phase, r.Message)
	}
	raw.send(relay.Msg{Type: relay.MsgPoll})
	if offer, ok := attack13bNext(ch, relay.MsgOffer, 10*time.Second); !ok || offer.Run != id {
		t.Fatalf("the apply phase was not offered: %+v", offer)
	}
	pc.pause() // the worker's machine pauses as it takes the apply phase
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	c := attack13gConnOf(h, "eu", "w2")
	waitFor(t, "the job's write to block", 15*time.Second, func() bool { return c.StuckFor(time.Now()) > 0 })

	h.waitStatus(id, StatusFailed, StatusSucceeded, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("the apply phase: %s: %s", r.Status, r.Message)
	time.Sleep(6 * time.Second) // three lease timeouts after the write stuck
	shuts := attack13gStacks("relay.(*Conn).Shut")
	stuck := c.StuckFor(time.Now())
	still := attack13gConnOf(h, "eu", "w2") == c
	workers := h.mustSSH("alice", "workers")
	t.Logf("write stuck for %s; %d goroutines in relay.Conn.Shut; still connected: %v\n%s", stuck.Round(time.Second), shuts, still, workers)
	if still || shuts > 1 {
		t.Logf("%d of them are the first shut, blocked in the SSH channel's Close", attack13gStacks("relay.(*Conn).Shut", "(*channel).Close"))
		t.Fatalf("worker w2 stopped reading %s ago (lease timeout 2s), yet the control node never closed its connection (it is still w2's: %v) and %d goroutines wait in relay.Conn.Shut, one more every 250ms",
			stuck.Round(time.Second), still, shuts)
	}
}

// attack13gQueued is how many lines wait in c's outbox.
func attack13gQueued(c *relay.Conn) int {
	return c.Queued()
}

// Promise (server/relay: "no caller, the lease watcher above all, ever
// blocks on a worker that stopped reading"; 13f's fix). Break: send,
// finding the outbox full, calls c.shut() in the caller's goroutine, and
// shut runs the closer, which blocks in sess.Close() behind a write stuck
// in TCP (TestAttack13gPausedWorkerNeverClosed). The lease watcher sends:
// lose() answers a lost lease with a reject, with the lease's lock held.
// Worker w2 of pool eu takes a dry run and, heartbeating, sends messages
// the control node answers (unknown types, whose rejects echo them) while
// it reads nothing of its session, until 256 answers wait behind the full
// SSH window; it then stops reading its socket, takes one window's worth
// (so the writer sticks in TCP), tops the outbox up to 256, and stops
// heartbeating. The watcher loses its lease; its reject is the 257th, so
// the watcher itself runs shut and blocks for good. From then on no lease
// of any pool is lost: worker b1 of pool bare takes a dry run and dies,
// and its run stays running long past its 2s lease timeout.
func TestAttack13gFullOutboxFreezesTheLeaseWatcher(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["bare"] = 2 * time.Second
	h.srv.relay.timeout["eu"] = 8 * time.Second
	h.srv.relay.mu.Unlock()
	raw, pc, _ := attack13gDial(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
	raw.send(relay.Msg{Type: relay.MsgPoll})
	id := runIDOf(t, h.mustSSH("alice", "launch", "rnet", "--dry-run", "--var", "region=g13", "--json"))
	if m := raw.recv(); m.Type != relay.MsgOffer || m.Run != id {
		t.Fatalf("offer %+v", m)
	}
	raw.send(relay.Msg{Type: relay.MsgTake, Run: id})
	job := raw.recv()
	if job.Type != relay.MsgJob {
		t.Fatalf("take: %+v", job)
	}
	beat := func() { raw.send(relay.Msg{Type: relay.MsgHeartbeat, Run: id, Token: job.Token}) }
	c := attack13gConnOf(h, "eu", "w2")
	big := strings.Repeat("x", 60<<10)
	start := time.Now()
	for n := 0; attack13gQueued(c) < relay.Outbox; n++ {
		if n > 2*relay.Outbox {
			t.Fatalf("the outbox holds %d after %d messages", attack13gQueued(c), n)
		}
		beat()
		before := attack13gQueued(c)
		raw.send(relay.Msg{Type: big})
		wait := 2 * time.Second // for its reject to be queued behind the full window
		if before == 0 {
			wait = 100 * time.Millisecond // for it to be answered while the writer still writes
		}
		for deadline := time.Now().Add(wait); attack13gQueued(c) == before && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("256 rejects queued in %s", time.Since(start).Round(time.Millisecond))
	pc.pause()
	beat()
	time.Sleep(600 * time.Millisecond)
	go func() { // the worker takes what its SSH window held: the writer goes on into the unread socket
		for {
			if _, err := raw.c.Recv(); err != nil {
				return
			}
		}
	}()
	waitFor(t, "the writer to stick in TCP", 5*time.Second, func() bool {
		return attack13gStacks("relay.(*Conn).writeLoop", "internal/poll.(*FD).Write") > 0
	})
	time.Sleep(200 * time.Millisecond)
	for n := 0; attack13gQueued(c) < relay.Outbox; n++ {
		if n > relay.Outbox {
			t.Fatalf("the outbox holds %d after %d more messages", attack13gQueued(c), n)
		}
		before := attack13gQueued(c)
		raw.send(relay.Msg{Type: "x"})
		for deadline := time.Now().Add(2 * time.Second); attack13gQueued(c) == before && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("outbox full again, %s after start; the write is stuck for %s", time.Since(start).Round(time.Millisecond), c.StuckFor(time.Now()).Round(time.Millisecond))
	h.waitStatus(id, StatusFailed)
	time.Sleep(time.Second)

	b1, _ := dialRaw(t, h, keys["b1"], relay.Msg{Name: "b1", Pool: "bare", Version: "raw"})
	b1.send(relay.Msg{Type: relay.MsgPoll})
	bid := runIDOf(t, h.mustSSH("alice", "launch", "bnet", "--dry-run", "--var", "region=g13b", "--json"))
	if m := b1.recv(); m.Type != relay.MsgOffer || m.Run != bid {
		t.Fatalf("offer %+v", m)
	}
	b1.send(relay.Msg{Type: relay.MsgTake, Run: bid})
	if m := b1.recv(); m.Type != relay.MsgJob {
		t.Fatalf("b1's take: %+v", m)
	}
	// b1 dies without a heartbeat: its run fails within 2s, if anything
	// still watches leases.
	deadline := time.Now().Add(10 * time.Second)
	var br store.Run
	for time.Now().Before(deadline) {
		if br, _ = h.srv.db.GetRun(bid); Status(br.Status) != StatusRunning {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("b1's dry run: %s (%s); the watcher in lose -> shut: %d", br.Status, br.Message, attack13gStacks("(*relayHub).lose", "relay.(*Conn).Shut"))
	if Status(br.Status) == StatusRunning {
		t.Fatalf("10s after worker b1 of pool bare went silent (lease timeout 2s) its run %s is still running: the lease watcher is blocked in lose -> send -> shut -> sess.Close behind worker w2 of pool eu, which stopped reading", bid)
	}
}

// Promise (README cancel; relay_lease.go cancelledBeforeSent, 13e's fix:
// "a cancel while a job is prepared ends the run instead of being lost
// before it"; relay_end.go cancel: a leased run's worker "is told to
// interrupt its tool"). Break: take marks the lease sent
// (cancelledBeforeSent) and only then encodes the job and queues it. A
// cancel in between finds the lease sent and queues its cancel line; the
// job, still being encoded (an apply phase's job carries the plan base64
// twice: tens of milliseconds for a plan of a few MiB), is queued after
// it. The worker reads a cancel for a run it does not have, drops it
// (worker_session.go handle: cur is nil), then gets the job and applies
// the released plan. The person was told "interrupt sent"; the run ends
// succeeded with the resources created.
func TestAttack13gCancelOvertakesTheApplyJob(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13gGate)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	attack13fBlob(t, w1.Projects["infra"].Path, 16<<20)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rblob13g", "--json"))
	var planLease *relayLease
	waitFor(t, "the plan phase's lease", 60*time.Second, func() bool {
		h.srv.relay.mu.Lock()
		defer h.srv.relay.mu.Unlock()
		planLease = h.srv.relay.leases[id]
		return planLease != nil
	})
	// Alice's cancel: its first half (cancelRun's transaction) lands
	// while the control node prepares the apply phase's job, after its
	// claim; its second half (relayHub.cancel) just after take marked the
	// lease sent, while the job is encoded. Cancel runs the two halves
	// back to back; under load (the encoding itself allocates tens of
	// MiB) a goroutine stalls between them for as long, as any cancel
	// arriving in that window does.
	var l *relayLease
	waitFor(t, "the apply phase to be claimed", 3*time.Minute, func() bool {
		h.srv.relay.mu.Lock()
		l = h.srv.relay.leases[id]
		h.srv.relay.mu.Unlock()
		r, _ := h.srv.db.GetRun(id)
		return l != nil && l != planLease && r.AppliedBy == "w1"
	})
	if _, err := h.srv.db.UpdateRun(id, func(r *store.Run) error { r.CancelRequested = "alice"; return nil }); err != nil {
		t.Fatal(err)
	}
	for sent := false; !sent; {
		h.srv.relay.mu.Lock()
		sent = l.sent
		h.srv.relay.mu.Unlock()
	}
	c := attack13gConnOf(h, "eu", "w1")
	busy := attack13gQueued(c) > 0 || c.StuckFor(time.Now()) > 0
	_, signalled := h.srv.relay.cancel(id)
	h.srv.audit(id, "alice", "cancel", "interrupt sent")
	t.Logf("cancel signalled: %v; anything queued or being written to w1 before it: %v", signalled, busy)
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusCancelled)
	r, _ := h.srv.db.GetRun(id)
	audit := h.mustSSH("alice", "audit", "--run", id)
	_, statErr := os.Stat(filepath.Join(w1.Projects["infra"].Path, "infra/blob13f/terraform.tfstate"))
	t.Logf("%s (applied by %q): %s; state written: %v\n%s", r.Status, r.AppliedBy, r.Message, statErr == nil, audit)
	if Status(r.Status) == StatusSucceeded || statErr == nil {
		t.Fatalf("alice cancelled run %s as its apply phase was leased to w1 (audit: \"interrupt sent\"), yet w1 applied the plan: the run is %s and its state was written", id, r.Status)
	}
}

// Promise (74a5cac, gate/planfile.go RenderingNamesItsAddresses: "a
// rendering made elsewhere cannot keep the addresses and change what they
// are", so "a policy reading a change's type reads the plan's"). Break:
// the check decodes the rendering with encoding/json, which matches object
// keys to struct fields case-insensitively (a later key wins); the policy
// input (gate/jsonvalue.go) and the summary (gate/plan.go scanPlan) read
// keys exactly. A worker's rendering whose change says "type":
// "null_resource" and then "TYPE": "terraform_data" shows the check the
// plan's type, and the README's by-type plan_gate a type that is not the
// plan's: the real plan destroying terraform_data.server[2] is denied with
// the honest rendering and passes, sealed and queued to apply, with this
// one.
func TestAttack13gRenderingTypeInAnotherCase(t *testing.T) {
	r := attack13fForgedTypeHandOver(t, "rdata13g", func(honest []byte) []byte {
		return bytes.ReplaceAll(honest, []byte(`"type":"terraform_data"`), []byte(`"type":"null_resource","TYPE":"terraform_data"`))
	})
	if Phase(r.Phase) == phaseApply && Status(r.Status) == StatusRunning {
		t.Fatalf("a plan destroying terraform_data.server[2], which the README's by-type plan_gate denies, passed on a rendering whose changes say \"type\":\"null_resource\" then \"TYPE\":\"terraform_data\"; it is queued to apply (digest %s, %d to destroy)",
			r.Proposal.Digest, r.Proposal.Destroy)
	}
}

// Promise (0ecae4d; README "Pull-request plans": "a pull request's plan
// also masks every secret the configuration file holds in clear";
// ownkeys.go maskConfigSecrets: "every secret the configuration holds in
// clear", because "a branch's file() of the configuration file would show
// them"). Break: maskConfigSecrets adds the scrubber's values, which are
// only credentials' tokens and env values and notify URLs and secrets
// (oplog.go newScrubber). A survey field marked sensitive with a default
// (config/template.go accepts one: "it is sensitive, so it is not repeated
// here") is a secret held in clear in the same file, and a pull request's
// file() of the configuration prints it.
func TestAttack13gPullRequestPrintsASensitiveDefault(t *testing.T) {
	const secret = "prod-db-default-13g-Wq7"
	h := writeHarness(t, "", attack13fPRConfig+`
template "db13g" {
  project = "infra"
  command = "infra/network"
  survey "db_password" {
    type      = "string"
    sensitive = true
    default   = "`+secret+`"
  }
}
`)
	wd := filepath.Join(h.project, "infra/pr13f")
	attack13dWrite(t, wd, map[string]string{"main.tf": attack13dResource})
	h.start()
	h.git("init", "-q", "-b", "main")
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "main")
	h.git("checkout", "-q", "-b", "pr")
	attack13dWrite(t, wd, map[string]string{"peek.tf": "resource \"terraform_data\" \"peek\" {\n  input = file(\"" + h.cfgPath + "\")\n}\n"})
	h.git("add", "-A", "-f")
	h.git("commit", "-q", "-m", "the pull request")
	h.git("checkout", "-q", "main")
	v := h.launchWait("alice", "pr13f", "--dry-run", "--ref", "pr")
	log := h.mustSSH("alice", "log", v.ID)
	t.Logf("%s: %s; steps %v", v.Status, v.Message, stepNames(v))
	if strings.Contains(log, "prod-aws-secret-13f-Zq8v") {
		t.Errorf("the credential's env value is in the log (13f's break is back)")
	}
	if i := strings.Index(log, secret); i >= 0 {
		t.Fatalf("a branch's file() of the configuration file put template db13g's sensitive default into its pull request's plan log (%s): …%s…",
			v.Status, log[max(0, i-100):min(len(log), i+40)])
	}
}

// Promise (README, relay: "a worker that died (SIGKILL, a lost machine)
// stops, at its next start and before it dials, what its runs left
// running ... and wipes their private directories"; worker_leftovers.go:
// "what runs of an earlier life of this worker left running"). Break:
// cleanLeftovers takes every directory under data_dir/runs for a leftover
// of this worker's earlier life, and nothing tells a dead worker's
// directory from a live one's: no lock on data_dir, no check that the
// marked processes' worker is gone. A second worker started on the same
// data_dir (a second unit or pod given the same directory, an operator
// running the worker by hand while the service runs, a restart that
// overlaps the old process's drain) interrupts and then kills the first
// worker's apply in the middle of its provisioner, and wipes its private
// directory under it.
func TestAttack13gSecondWorkerOnADataDirKillsTheFirstsApply(t *testing.T) {
	h, keys, identity := relayHarness(t, attack13dSlowTemplate)
	h.srv.relay.mu.Lock()
	h.srv.relay.timeout["eu"] = time.Minute
	h.srv.relay.mu.Unlock()
	w1 := relayWorkerCfg(t, h, "w1", "eu", keys["w1"], identity)
	attack13dSlowModule(t, w1.Projects["infra"].Path)
	startWorker(t, w1)
	waitFor(t, "w1 to connect", 20*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "workers"), "w1") })
	id := runIDOf(t, h.mustSSH("alice", "launch", "rslow", "--json"))
	waitFor(t, "the provisioner to start", 60*time.Second, func() bool { return strings.Contains(h.mustSSH("alice", "log", id), "started-slow") })
	private := filepath.Join(w1.DataDir, "runs", id)
	if _, err := os.Stat(private); err != nil {
		t.Fatalf("the run's private directory: %v", err)
	}

	w2 := relayWorkerCfg(t, h, "w2", "eu", keys["w2"], identity)
	w2.DataDir = w1.DataDir
	errs2, _ := startWorker(t, w2)
	select {
	case err := <-errs2:
		if err == nil || !strings.Contains(err.Error(), "is in use by another worker") {
			t.Fatalf("w2 on w1's data_dir: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("w2, started on w1's data_dir, neither refused to start nor ended")
	}
	_, statErr := os.Stat(private)
	h.waitStatus(id, StatusSucceeded, StatusFailed, StatusCancelled, StatusInterrupted)
	r, _ := h.srv.db.GetRun(id)
	t.Logf("w1's apply: %s: %s; its private directory after w2 started: %v", r.Status, r.Message, statErr)
	if Status(r.Status) != StatusSucceeded || os.IsNotExist(statErr) {
		t.Fatalf("worker w2, started with w1's data_dir, stopped w1's running apply %s as a leftover of its own earlier life (%s: %s) and removed its private directory (%v)",
			id, r.Status, r.Message, statErr)
	}
}

// Held: the control node's writer of a worker's queued lines ends with
// its session: after ten workers (real SSH, raw protocol) connect, poll,
// and hang up, or are replaced by a new connection of the same name, no
// relay.Conn writer is left.
func TestAttack13gWritersEndWithTheirSessions(t *testing.T) {
	h, keys, _ := relayHarness(t, "")
	before := attack13gStacks("relay.(*Conn).writeLoop")
	for i := range 10 {
		raw, welcome := dialRaw(t, h, keys["w2"], relay.Msg{Name: "w2", Pool: "eu", Version: "raw"})
		if welcome.Type != relay.MsgWelcome {
			t.Fatalf("hello %d: %+v", i, welcome)
		}
		raw.send(relay.Msg{Type: relay.MsgPoll})
		raw.send(relay.Msg{Type: "nonsense"})
		if m := raw.recv(); m.Type != relay.MsgReject {
			t.Fatalf("an unknown message was answered with %+v", m)
		}
		raw.client.Close() // a second connection of the name is refused while this one is alive
	}
	waitFor(t, "the writers of closed sessions to end", 10*time.Second, func() bool {
		return attack13gStacks("relay.(*Conn).writeLoop") <= before+5
	})
}
