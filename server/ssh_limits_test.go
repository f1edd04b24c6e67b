package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/switchtender/switchtender/server/config"
)

// lockedBuffer is an io.Writer safe for a logger's concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newLimitHarness is a harness (configuration with extra) whose server runs
// with opts (Environ is filled in) and logs to the returned buffer.
func newLimitHarness(t *testing.T, opts Options, extra string) (*harness, *lockedBuffer) {
	t.Helper()
	// Written, not started: a server started here would already act on
	// the configuration (a scheduled check launched at its first tick).
	h := writeHarness(t, "", extra)
	t.Cleanup(func() { h.stop() })
	cfg, err := config.Load(h.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	opts.Environ = testEnviron
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.startWithDoor(context.Background()); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	h.srv, h.addr = srv, srv.SSHAddr()
	return h, logs
}

// sshRaw runs line, unsplit and unquoted, as user's command.
func sshRaw(t *testing.T, h *harness, user, line string) (string, string, int) {
	t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		t.Fatalf("ssh %s: %v", user, err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatalf("ssh session: %v", err)
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	code := 0
	if err := sess.Run(line); err != nil {
		var ee *gossh.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("ssh %s %.60q: %v", user, line, err)
		}
		code = ee.ExitStatus()
	}
	return out.String(), errOut.String(), code
}

// silentConn is a TCP connection that never sends a byte, and what the
// server did with it.
type silentConn struct {
	conn   net.Conn
	opened time.Time
	done   chan struct{}
	banner bool          // the server sent its SSH version line
	closed time.Duration // from open to the server closing it
}

// openSilent connects to addr and watches, without writing, until the
// server closes the connection.
func openSilent(t *testing.T, addr string) *silentConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dialing %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	s := &silentConn{conn: c, opened: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b, _ := io.ReadAll(io.LimitReader(c, 1<<16))
		s.banner = bytes.HasPrefix(b, []byte("SSH-2.0-"))
		s.closed = time.Since(s.opened)
	}()
	return s
}

// 300 silent connections against small caps: the ones past the caps are
// closed at once without a banner, the others within the handshake
// deadline; a configured user gets `runs` within the deadline of the flood
// and a dry run launched right after succeeds.
func TestSSHLimitsSilentFlood(t *testing.T) {
	const deadline = 2 * time.Second
	h, logs := newLimitHarness(t, Options{
		SSHHandshakeTimeout:  deadline,
		SSHMaxStartups:       16,
		SSHMaxConns:          48,
		SSHMaxConnsPerSource: 1000, // the flood and the user share 127.0.0.1
	}, networkTemplate)

	start := time.Now()
	flood := make([]*silentConn, 300)
	for i := range flood {
		flood[i] = openSilent(t, h.addr)
	}
	t.Logf("opened %d silent connections in %v", len(flood), time.Since(start))

	// The user retries, as a person would, until let in.
	var out string
	for {
		client, err := dialAs(h, "alice")
		if err == nil {
			client.Close()
			var errOut string
			var code int
			out, errOut, code = h.ssh("alice", "runs")
			if code != 0 {
				t.Fatalf("runs during the flood: exit %d: %s", code, errOut)
			}
			break
		}
		if time.Since(start) > deadline+2*time.Second {
			t.Fatalf("alice was not let in within %v of the flood: %v", time.Since(start), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("alice ran `runs` %v after the flood began", time.Since(start))
	_ = out

	launched := h.mustSSH("alice", "launch", "network", "--dry-run", "--var", "region=eu-west-1", "--wait")
	if !strings.Contains(launched, "run 1: succeeded") {
		t.Fatalf("dry run after the flood:\n%s", launched)
	}

	var admitted, refused int
	for i, s := range flood {
		select {
		case <-s.done:
		case <-time.After(deadline + 3*time.Second - time.Since(s.opened)):
			t.Fatalf("silent connection %d still open %v after it was opened", i, time.Since(s.opened))
		}
		if s.banner {
			admitted++
			if s.closed > deadline+time.Second {
				t.Errorf("silent connection %d closed %v after it opened, deadline %v", i, s.closed, deadline)
			}
		} else {
			refused++
			if s.closed > time.Second {
				t.Errorf("refused connection %d closed only %v after it opened", i, s.closed)
			}
		}
	}
	t.Logf("%d admitted and closed at the deadline, %d refused at accept", admitted, refused)
	if admitted == 0 || admitted > 48 || refused < 300-48 {
		t.Errorf("admitted %d, refused %d; want at most 48 admitted", admitted, refused)
	}
	if n := strings.Count(logs.String(), "refused an SSH connection at accept"); n == 0 || n > refusalLogPerSource {
		t.Errorf("%d log lines about refused connections, want 1..%d", n, refusalLogPerSource)
	}
}

// The per-source cap: past it, a new connection from that address is closed
// without a banner, and it is let in again once one closes.
func TestSSHLimitsPerSource(t *testing.T) {
	h, _ := newLimitHarness(t, Options{SSHMaxConnsPerSource: 3, SSHHandshakeTimeout: 10 * time.Second}, "")
	var held []*silentConn
	for range 3 {
		s := openSilent(t, h.addr)
		held = append(held, s)
	}
	time.Sleep(200 * time.Millisecond)
	for i, s := range held {
		select {
		case <-s.done:
			t.Fatalf("connection %d within the cap was closed", i)
		default:
		}
	}
	over := openSilent(t, h.addr)
	select {
	case <-over.done:
		if over.banner {
			t.Errorf("the refused connection got an SSH banner")
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("a connection past the per-source cap was not closed")
	}
	if c, err := dialAs(h, "alice"); err == nil {
		c.Close()
		t.Fatalf("a configured user got in past the per-source cap")
	}

	held[0].conn.Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, err := dialAs(h, "alice")
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not let in after a connection closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A 200 KB command is refused before it is split, in under a second, with
// exit 2 and one sentence; with the cap raised, a hostile 200 KB line still
// splits at once.
func TestSSHLimitsLongCommand(t *testing.T) {
	h, _ := newLimitHarness(t, Options{}, networkTemplate)
	line := "runs " + strings.Repeat(`'a' "b" c\ `, 200_000/11)
	start := time.Now()
	out, errOut, code := sshRaw(t, h, "alice", line)
	d := time.Since(start)
	if code != exitUsage || out != "" {
		t.Fatalf("200 KB command: exit %d, stdout %q", code, out)
	}
	if d > time.Second {
		t.Errorf("refusing a 200 KB command took %v", d)
	}
	if !strings.Contains(errOut, "longer than the limit of 65536 bytes") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("refusal: %q", errOut)
	}
	t.Logf("refused in %v: %s", d, strings.TrimSpace(errOut))

	h2, _ := newLimitHarness(t, Options{SSHMaxCommandBytes: 1 << 20}, networkTemplate)
	start = time.Now()
	_, errOut, code = sshRaw(t, h2, "alice", line)
	if d := time.Since(start); d > time.Second {
		t.Errorf("a 200 KB command with the cap raised took %v", d)
	}
	// The line was split; runs refuses the arguments it does not take.
	if code != exitUsage || !strings.Contains(errOut, "runs takes no arguments") {
		t.Errorf("200 KB of arguments to runs with the cap raised: exit %d: %q", code, errOut)
	}
}

// An unterminated quote is refused with exit 2 and one sentence, and
// nothing is queued; a trailing backslash likewise.
func TestSSHLimitsStrictSplit(t *testing.T) {
	h, _ := newLimitHarness(t, Options{}, networkTemplate)
	for _, line := range []string{
		"launch network --var 'region=x --dry-run",
		`launch network --var "region=x --dry-run`,
		`launch network --var region=x --dry-run \`,
	} {
		out, errOut, code := sshRaw(t, h, "alice", line)
		if code != exitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", line, code, out, errOut)
		}
		if !strings.HasPrefix(errOut, "switchtender: the command ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: refusal %q is not one sentence", line, errOut)
		}
	}
	runs, err := h.srv.db.ListRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Fatalf("refused commands queued %d runs", len(runs))
	}
	// Quoted properly, the same launch goes through.
	out := h.mustSSH("alice", "launch", "network", "--var", "region=x", "--dry-run", "--wait")
	if !strings.Contains(out, "succeeded") {
		t.Fatalf("quoted launch:\n%s", out)
	}
}

// A refused key is logged with its SHA256 fingerprint and the remote
// address once its connection closes without getting in (not when another
// key of the same client gets in), at most refusalLogPerSource lines per
// source per window.
func TestSSHLimitsRefusedKeyLogged(t *testing.T) {
	h, logs := newLimitHarness(t, Options{}, "")
	h.newKey("mallory")
	mallory := h.keys["mallory"]
	fp := gossh.FingerprintSHA256(mallory.PublicKey())

	// alice offers mallory's key first, then her own, and gets in.
	c, err := gossh.Dial("tcp", h.addr, &gossh.ClientConfig{
		User:            "alice",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(mallory, h.keys["alice"])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
	if err != nil {
		t.Fatalf("alice with an extra key: %v", err)
	}
	c.Close()
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(logs.String(), "refused an SSH key") {
		t.Fatalf("a key refused on a connection that got in was logged:\n%s", logs.String())
	}

	for range 12 {
		if c, err := dialAs(h, "mallory"); err == nil {
			c.Close()
			t.Fatal("an unknown key got in")
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for strings.Count(logs.String(), "refused an SSH key") < refusalLogPerSource && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	text := logs.String()
	if !strings.Contains(text, "fingerprint="+fp) || !strings.Contains(text, "remote=127.0.0.1:") {
		t.Fatalf("log lacks the fingerprint %s or the remote address:\n%s", fp, text)
	}
	if n := strings.Count(text, "refused an SSH key"); n != refusalLogPerSource {
		t.Errorf("%d log lines for 12 refused keys, want %d:\n%s", n, refusalLogPerSource, text)
	}
	audit, _ := h.srv.db.AuditLog("")
	var refusals int
	for _, e := range audit {
		if e.Action == "refuse key" && strings.Contains(e.Detail, fp) {
			refusals++
		}
	}
	if refusals != refusalLogPerSource {
		t.Errorf("%d refusals with the fingerprint in the audit trail, want %d", refusals, refusalLogPerSource)
	}
}

// An authenticated connection with no traffic is closed after the idle
// timeout; one that keeps talking is not.
func TestSSHLimitsIdleTimeout(t *testing.T) {
	h, logs := newLimitHarness(t, Options{SSHIdleTimeout: time.Second}, "")
	idle, err := dialAs(h, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := dialAs(h, "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for range 6 {
		time.Sleep(400 * time.Millisecond)
		if _, _, err := busy.SendRequest("keepalive@openssh.com", true, nil); err != nil {
			t.Fatalf("a connection with traffic was closed: %v", err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- idle.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("an idle connection was not closed")
	}
	if !strings.Contains(logs.String(), "closed an idle SSH connection") {
		t.Errorf("no log line for the idle close:\n%s", logs.String())
	}
}

// The total cap is fitted to the file-descriptor limit at start.
func TestSSHLimitsFitDescriptors(t *testing.T) {
	l := Options{}.sshLimits()
	if l.Handshake != 30*time.Second || l.Startups != 64 || l.Total != 256 || l.PerSource != 32 || l.Idle != 10*time.Minute || l.MaxCommand != 65536 {
		t.Fatalf("defaults: %+v", l)
	}
	if got, lowered := l.FitDescriptors(1 << 20); lowered || got.Total != 256 {
		t.Errorf("with 1M descriptors: %+v, lowered %v", got, lowered)
	}
	got, lowered := l.FitDescriptors(256)
	if !lowered || got.Total != 128 || got.Startups != 64 {
		t.Errorf("with 256 descriptors: %+v, lowered %v", got, lowered)
	}
	got, _ = l.FitDescriptors(64)
	if got.Total != 32 || got.Startups != 32 {
		t.Errorf("with 64 descriptors: %+v", got)
	}
}

// One address's share of the connections in their handshake follows its
// per-source cap: a quarter of ssh_max_startups with the defaults, half the
// per-source cap when that is more, never more than half of
// ssh_max_startups; past the share a connection from that address is
// refused while another address is still let in (the refusal:
// sshd's TestSSHLimitsRefusePastTheHandshakeShare).
func TestSSHLimitsHandshakeShareFollowsThePerSourceCap(t *testing.T) {
	for _, c := range []struct{ startups, perSource, want int }{
		{0, 0, 16},       // the defaults (64, 32)
		{64, 128, 32},    // behind a proxy, startups left alone: half of them
		{128, 128, 64},   // behind a proxy with both raised
		{64, 4, 16},      // a small per-source cap never lowers the quarter
		{16, 1000, 8},    // never more than half of the cap
		{1, 1000, 1},     // at least one
		{3, 2, 1},        // tiny caps round down to one, not zero
		{100, 40, 25},    // a quarter is more than half the per-source cap
		{100, 80, 40},    // half the per-source cap is more than a quarter
		{1000, 32, 250},  // the per-source cap only ever raises the share
		{64, 33, 16},     // odd per-source cap: 16 either way
		{200, 1000, 100}, // half of the cap
	} {
		l := Options{SSHMaxStartups: c.startups, SSHMaxConnsPerSource: c.perSource}.sshLimits()
		if got := l.StartupsPerSource(); got != c.want {
			t.Errorf("startups %d, per source %d: share %d, want %d", c.startups, c.perSource, got, c.want)
		}
	}
}
