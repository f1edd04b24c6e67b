package sshd

import (
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"charm.land/ssh"
	"github.com/switchtender/switchtender/server/api"
	gossh "golang.org/x/crypto/ssh"
)

// Refusals logged per source address and in all per window, so a flood of
// refused connections or keys cannot fill the operator's disk.
const (
	refusalLogWindow    = time.Minute
	RefusalLogPerSource = 5
	refusalLogTotal     = 100
)

// checkedSSHLimits is d.lim fitted to the process's file-descriptor
// limit. That the total cap had to be lowered is a warning of the
// judgement (descriptorProblems, judge.go), logged by serve at start.
func (d *Door) checkedSSHLimits() api.SSHLimits {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return d.lim
	}
	l, _ := d.lim.FitDescriptors(rl.Cur)
	return l
}

// connLimiter counts open SSH connections: in total, per source address,
// and those still in their handshake.
type connLimiter struct {
	lim api.SSHLimits

	mu          sync.Mutex
	total       int
	handshaking int
	perSource   map[string]int
	perSourceHS map[string]int // connections in their handshake, per source
	sessionLog  *refusalLog    // sessions refused past the per-connection cap
}

func newConnLimiter(l api.SSHLimits) *connLimiter {
	return &connLimiter{lim: l, perSource: map[string]int{}, perSourceHS: map[string]int{}, sessionLog: newRefusalLog()}
}

// admit counts a new connection from source, or returns why it is refused.
func (cl *connLimiter) admit(source string) string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	switch {
	case cl.total >= cl.lim.Total:
		return "total connection cap reached"
	case cl.handshaking >= cl.lim.Startups:
		return "cap on connections in their handshake reached"
	case cl.perSource[source] >= cl.lim.PerSource:
		return "per-source connection cap reached"
	case cl.perSourceHS[source] >= cl.lim.StartupsPerSource():
		return "per-source cap on connections in their handshake reached"
	}
	cl.total++
	cl.handshaking++
	cl.perSource[source]++
	cl.perSourceHS[source]++
	return ""
}

// doneHandshake counts a connection of source out of the handshake; the
// caller holds cl.mu.
func (cl *connLimiter) doneHandshake(source string) {
	if cl.perSourceHS[source]--; cl.perSourceHS[source] <= 0 {
		delete(cl.perSourceHS, source)
	}
}

// counts returns the open connections and those in their handshake.
func (cl *connLimiter) counts() (total, handshaking int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.total, cl.handshaking
}

// limitListener enforces the connection caps at accept: a connection past a
// cap is closed before the server writes anything (no SSH banner), and
// Accept goes on to the next one.
type limitListener struct {
	net.Listener
	cl      *connLimiter
	log     *slog.Logger
	refusal *refusalLog
	refused interface{ Inc() } // counts refusals; may be nil
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr())
		if why := l.cl.admit(src); why != "" {
			_ = c.Close()
			if l.refused != nil {
				l.refused.Inc()
			}
			if ok, dropped := l.refusal.allow(src); ok {
				l.log.Warn("refused an SSH connection at accept", "reason", why, "remote", c.RemoteAddr().String(), "unlogged_refusals", dropped)
			}
			continue
		}
		lc := &limitConn{Conn: c, cl: l.cl, source: src, log: l.log}
		lc.touch()
		return lc, nil
	}
}

// sourceOf is the IP address of a remote address, the key of the
// per-source cap.
func sourceOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitConn is an admitted connection: it gives its place back when
// closed, leaves the handshake count once its key is proven, and from then
// on is closed after the idle timeout with no traffic and no exempt session.
type limitConn struct {
	net.Conn
	cl     *connLimiter
	source string
	log    *slog.Logger

	last   atomic.Int64 // unix nanoseconds of the last traffic
	exempt atomic.Int32 // sessions that keep the connection open while idle
	slots  sessionSlots // its session channels and their handlers, each capped

	mu       sync.Mutex // guards the fields below and the limiter's counts for this conn
	authed   bool
	released bool
	idle     *time.Timer
	refused  []string       // fingerprints of keys offered and refused
	report   func([]string) // logs refused keys if the connection never gets in
}

// maxNotedKeys bounds the refused keys a connection remembers for the log.
const maxNotedKeys = 8

// noteRefusedKey remembers a refused key's fingerprint; report is called
// with all of them if the connection closes without authenticating.
func (c *limitConn) noteRefusedKey(fingerprint string, report func([]string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.report = report
	if len(c.refused) < maxNotedKeys && !slices.Contains(c.refused, fingerprint) {
		c.refused = append(c.refused, fingerprint)
	}
}

func (c *limitConn) touch() { c.last.Store(time.Now().UnixNano()) }

func (c *limitConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *limitConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

// Close closes the connection and gives its place back (once); if it never
// got in, the keys it was refused are reported.
func (c *limitConn) Close() error {
	var refused []string
	var report func([]string)
	c.mu.Lock()
	if !c.released {
		if !c.authed {
			refused, report = c.refused, c.report
		}
		c.released = true
		if c.idle != nil {
			c.idle.Stop()
		}
		c.cl.mu.Lock()
		c.cl.total--
		if !c.authed {
			c.cl.handshaking--
			c.cl.doneHandshake(c.source)
		}
		if c.cl.perSource[c.source]--; c.cl.perSource[c.source] <= 0 {
			delete(c.cl.perSource, c.source)
		}
		c.cl.mu.Unlock()
	}
	c.mu.Unlock()
	err := c.Conn.Close()
	if len(refused) > 0 && report != nil {
		report(refused)
	}
	return err
}

// authenticated moves the connection out of the handshake count and starts
// its idle timer. It is called once the client has proven its key.
func (c *limitConn) authenticated() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authed || c.released {
		return
	}
	c.authed = true
	c.cl.mu.Lock()
	c.cl.handshaking--
	c.cl.doneHandshake(c.source)
	c.cl.mu.Unlock()
	c.touch()
	c.idle = time.AfterFunc(c.cl.lim.Idle, c.checkIdle)
}

// checkIdle closes the connection if it has had no traffic for the idle
// timeout and no exempt session, and otherwise looks again when it could
// next be due.
func (c *limitConn) checkIdle() {
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return
	}
	timeout := c.cl.lim.Idle
	quiet := time.Since(time.Unix(0, c.last.Load()))
	if c.exempt.Load() > 0 || quiet < timeout {
		c.idle.Reset(max(timeout-quiet, time.Millisecond))
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.log.Info("closed an idle SSH connection", "remote", c.RemoteAddr().String(), "idle", quiet.Round(time.Second).String())
	_ = c.Close()
}

// hold exempts the connection from the idle timeout until the returned
// function is called (for a console, a follow or a wait); idleness is
// counted again from then.
func (c *limitConn) hold() func() {
	c.exempt.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.touch()
			c.exempt.Add(-1)
		})
	}
}

// limitConnKey is the ssh.Context key of a connection's limitConn.
type limitConnKey struct{}

// limitConnOf returns the limitConn of the connection ctx belongs to, or
// nil if it has none.
func limitConnOf(ctx ssh.Context) *limitConn {
	c, _ := ctx.Value(limitConnKey{}).(*limitConn)
	return c
}

// refusalLog rate-limits log lines about refusals (connections at accept,
// unknown keys): per window, at most RefusalLogPerSource lines per source
// and refusalLogTotal in all; what it drops is counted and reported on the
// next line it allows.
type refusalLog struct {
	mu      sync.Mutex
	start   time.Time
	per     map[string]int
	total   int
	dropped int
}

func newRefusalLog() *refusalLog { return &refusalLog{per: map[string]int{}} }

// allow reports whether a line about source may be logged now, and how many
// lines were dropped since the last one allowed.
func (r *refusalLog) allow(source string) (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if now.Sub(r.start) >= refusalLogWindow {
		r.start = now
		clear(r.per)
		r.total = 0
	}
	if r.total >= refusalLogTotal || r.per[source] >= RefusalLogPerSource {
		r.dropped++
		return false, 0
	}
	r.total++
	r.per[source]++
	d := r.dropped
	r.dropped = 0
	return true, d
}

// Bounds on a session's env requests: the library keeps every one, so an
// unbounded stream of them would fill the server's memory. The console reads
// NO_COLOR; nothing else needs more than a few small ones.
const (
	maxEnvRequests  = 16
	maxEnvRequestSz = 1024 // bytes of payload
)

type envLimitedChannel struct{ gossh.NewChannel }

// Accept accepts the channel and filters its requests.
func (c envLimitedChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	go func() {
		defer close(out)
		envs := 0
		for r := range reqs {
			if r.Type == "env" {
				if envs++; envs > maxEnvRequests || len(r.Payload) > maxEnvRequestSz {
					if r.WantReply {
						_ = r.Reply(false, nil)
					}
					continue
				}
			}
			out <- r
		}
	}()
	return ch, out, nil
}
