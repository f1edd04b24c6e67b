package scenario

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server"
	"github.com/switchtender/switchtender/server/internal/testkit"
	gossh "golang.org/x/crypto/ssh"

	"golang.org/x/sys/unix"
)

// An authenticated session can send any number of "env" requests before its
// command; what the server keeps of them is bounded. Once, charm.land/ssh
// kept every one until the session ended, so 400 requests of 200 KB grew the
// server's heap by about 80 MB, and more exhausted its memory.
func TestEnvRequestsBeforeACommandAreBounded(t *testing.T) {
	h := newHarness(t, "")
	client, err := dialAs(h, "carol")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	value := strings.Repeat("v", 200_000)
	start := time.Now()
	sent := 0
	for i := 0; i < 400 && time.Since(start) < 30*time.Second; i++ {
		if err := sess.Setenv("X", value); err != nil {
			t.Logf("env request %d refused: %v", i, err)
			break
		}
		sent++
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d env requests of %d bytes accepted in %v; heap grew by %d MB", sent, len(value), time.Since(start).Round(time.Millisecond), grew>>20)
	if grew > 20<<20 {
		t.Fatalf("one session's env requests are kept: %d MB of heap for %d requests (%d MB sent)", grew>>20, sent, sent*len(value)>>20)
	}
}

// A sustained silent flood from two source addresses (the per-source cap, 32
// by default, is half of ssh_max_startups, 64): the attacker reopens a
// connection as soon as one is closed, so the handshake slots are always full
// and every new connection is closed at accept. The spec: "a flood costs
// users at most the handshake deadline". A configured user retrying every 100
// ms must get in within the deadline (plus a second). Once, the hard cap,
// with no random early drop as OpenSSH's MaxStartups start:rate:full has,
// locked users out for as long as the flood lasted.
func TestAFloodFromTwoAddressesCostsUsersAtMostTheHandshakeDeadline(t *testing.T) {
	const deadline = 2 * time.Second
	h, _ := newLimitHarness(t, server.Options{SSHHandshakeTimeout: deadline}, "")
	var stop atomic.Bool
	var opened atomic.Int64
	const holders = 34 // per source: a little over the per-source cap
	done := make(chan struct{}, 2*holders)
	for _, src := range []string{"127.0.0.2", "127.0.0.3"} {
		for range holders {
			go func() {
				defer func() { done <- struct{}{} }()
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: time.Second}
				for i := 0; i < 5000 && !stop.Load(); i++ {
					c, err := d.Dial("tcp", h.addr)
					if err != nil {
						time.Sleep(time.Millisecond)
						continue
					}
					opened.Add(1)
					// hold it silently until the server closes it, then reopen
					c.SetReadDeadline(time.Now().Add(3 * deadline))
					_, _ = io.Copy(io.Discard, c)
					c.Close()
				}
			}()
		}
	}
	defer func() {
		stop.Store(true)
		for range 2 * holders {
			<-done
		}
	}()
	time.Sleep(500 * time.Millisecond) // the flood is on
	start := time.Now()
	var lastErr error
	for time.Since(start) < 3*deadline {
		client, err := dialAs(h, "alice")
		if err == nil {
			client.Close()
			t.Logf("alice got in %v into the flood (%d flood connections opened)", time.Since(start).Round(time.Millisecond), opened.Load())
			if time.Since(start) > deadline+time.Second {
				t.Fatalf("alice got in only after %v, deadline %v", time.Since(start), deadline)
			}
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("a sustained flood from 2 addresses kept a configured user out for %v (handshake deadline %v; %d flood connections opened): %v", time.Since(start).Round(time.Millisecond), deadline, opened.Load(), lastErr)
}

// Odd words for every command: each must be answered with exit 0, 1 or 2
// (never a dropped session, a panic or a hang), nothing may be queued by a
// refused launch, and the server keeps serving.
func TestOddWordsForEveryCommandGetAnExitStatus(t *testing.T) {
	t.Parallel()
	h, logs := newLimitHarness(t, server.Options{}, dataTemplates+networkTemplate)
	probes := []struct{ user, line, stdin string }{
		{"alice", "show 0", ""}, {"alice", "show -1", ""}, {"alice", "show 99999999999999999999999999", ""},
		{"alice", "show ''", ""}, {"alice", "show ../1", ""}, {"alice", "log '' --follow", ""}, {"alice", "log 1 --follow=false", ""},
		{"alice", "approve 1 --digest ''", ""}, {"alice", "approve 1 --digest sha256:", ""}, {"alice", "approve 1", ""},
		{"alice", "reject 99 --reason ''", ""}, {"alice", "cancel ''", ""}, {"alice", "rerun 0", ""}, {"alice", "rerun -- -1", ""},
		{"alice", "audit --since=-1h", ""}, {"alice", "audit --since 0s", ""}, {"alice", "audit --since 2562047h", ""},
		{"alice", "audit --since 9999999999h", ""}, {"alice", "audit --since 0000-01-01T00:00:00Z", ""},
		{"alice", "audit --since 9999-12-31T23:59:59+14:00", ""}, {"alice", "audit --run ''", ""}, {"alice", "audit --json --since 1ns", ""},
		{"deploy-bot", "audit", ""}, {"carol", "audit", ""},
		{"alice", "help ''", ""}, {"alice", "help help help", ""}, {"alice", "-- runs", ""}, {"alice", "--", ""}, {"alice", "''", ""},
		{"alice", "launch ''", ""}, {"alice", "launch network --var ''", ""}, {"alice", "launch network --var =x", ""},
		{"alice", "launch network --var region", ""}, {"alice", "launch network --dry-run --var region=a --var region=b", ""},
		{"alice", "launch network --dry-run --var=region=a=b --wait --wait=false", ""},
		{"alice", "launch data --dry-run --var instances=1e400", ""}, {"alice", "launch data --dry-run --var instances=NaN", ""},
		{"alice", "launch data --dry-run --var instances=-Inf", ""}, {"alice", "launch data --dry-run --var instances=0x10", ""},
		{"alice", "launch data --dry-run --var instances=99999999999999999999999999999999999", ""},
		{"alice", "launch data --dry-run --var instances=1e-400", ""},
		{"alice", "launch data --dry-run --answers -", "null"}, {"alice", "launch data --dry-run --answers -", "[]"},
		{"alice", "launch data --dry-run --answers -", `{"instances":null}`}, {"alice", "launch data --dry-run --answers -", `{"instances":1e999999}`},
		{"alice", "launch data --dry-run --answers -", `{"instances":[[[[[]]]]]}`}, {"alice", "launch data --dry-run --answers -", `{"generation":{"a":[1,{"b":null}]}}`},
		{"alice", "launch data --dry-run --answers -", strings.Repeat("[", 500000) + strings.Repeat("]", 500000)},
		{"alice", "launch data --dry-run --answers -", `{"instances":1}{"instances":2}`}, {"alice", "launch data --dry-run --answers -", `{"instances":1,"instances":2}`},
		{"alice", "launch data --dry-run --answers - --answers -", "{}"},
		{"alice", "launch data --dry-run --var generation=" + strings.Repeat("x", 60000), ""},
		{"alice", "launch data --dry-run --var 'generation=${file(\"/etc/passwd\")}'", ""},
		{"alice", "launch data -- --dry-run", ""}, {"alice", "launch -- data --dry-run extra", ""},
		{"alice", "templates --json=maybe", ""}, {"alice", "runs --json --json", ""}, {"alice", "runs --json=1 --json=0", ""},
	}
	for _, p := range probes {
		before, _ := h.db().ListRuns()
		out, errOut, code := sshProbe(t, h, p.user, p.line, p.stdin)
		after, _ := h.db().ListRuns()
		if code < 0 || code > 2 {
			t.Errorf("%s %.80q: exit %d\n%.300s\n%.300s", p.user, p.line, code, out, errOut)
		}
		if code != 0 && len(after) != len(before) {
			t.Errorf("%s %.80q: exit %d but a run was queued: %.300s", p.user, p.line, code, errOut)
		}
		t.Logf("%s %.60q → %d %.120q", p.user, p.line, code, strings.TrimSpace(errOut))
	}
	if _, errOut, code := sshProbe(t, h, "alice", "runs", ""); code != 0 {
		t.Fatalf("runs after the probes: exit %d %s", code, errOut)
	}
	if strings.Contains(strings.ToLower(logs.String()), "panic") {
		t.Errorf("a panic in the server log:\n%s", logs.String())
	}
}

// Hostile files in a working directory, read at launch for sensitive
// variables: each launch must be answered within seconds (a FIFO, a
// device, a symlink loop, a directory named main.tf, a sparse huge file, a
// file that grows while read) and the server keep serving.
func TestHostileCheckoutFilesAreAnsweredWithinSeconds(t *testing.T) {
	h, logs := newLimitHarness(t, server.Options{}, dataTemplates)
	wd := filepath.Join(h.project, "infra", "data")
	cases := []struct {
		name  string
		make  func(p string) error
		after func(p string)
	}{
		{"fifo.tf", func(p string) error { return unix.Mkfifo(p, 0o644) }, nil},
		{"zero.tf", func(p string) error { return os.Symlink("/dev/zero", p) }, nil},
		{"urandom.tf.json", func(p string) error { return os.Symlink("/dev/urandom", p) }, nil},
		{"loop.tf", func(p string) error { return os.Symlink(p, p) }, nil},
		{"dir.tf", func(p string) error { return os.Mkdir(p, 0o755) }, nil},
		{"sparse.tf", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(1 << 30)
		}, nil},
		{"proc.tf", func(p string) error { return os.Symlink("/proc/self/fd/0", p) }, nil},
		{"unreadable.tf", func(p string) error { return os.WriteFile(p, []byte("variable \"x\" {}\n"), 0o000) }, nil},
	}
	for _, c := range cases {
		p := filepath.Join(wd, c.name)
		if err := c.make(p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		start := time.Now()
		_, errOut, code := sshProbe(t, h, "carol", "launch data --dry-run", "")
		t.Logf("%s: exit %d in %v: %.200s", c.name, code, time.Since(start).Round(time.Millisecond), strings.TrimSpace(errOut))
		if code < 0 || time.Since(start) > 10*time.Second {
			t.Errorf("%s: launch exit %d after %v", c.name, code, time.Since(start))
		}
		os.RemoveAll(p)
	}
	// A file that grows while it is read.
	grow := filepath.Join(wd, "grow.tf")
	os.WriteFile(grow, []byte("variable \"x\" {}\n"), 0o644)
	var stop atomic.Bool
	gdone := make(chan struct{})
	go func() {
		defer close(gdone)
		f, _ := os.OpenFile(grow, os.O_WRONLY|os.O_APPEND, 0)
		defer f.Close()
		chunk := []byte(strings.Repeat("# grow\n", 1<<14))
		for i := 0; i < 2000 && !stop.Load(); i++ {
			f.Write(chunk)
		}
	}()
	start := time.Now()
	_, errOut, code := sshProbe(t, h, "carol", "launch data --dry-run", "")
	stop.Store(true)
	<-gdone
	t.Logf("grow.tf: exit %d in %v: %.200s", code, time.Since(start).Round(time.Millisecond), strings.TrimSpace(errOut))
	os.Remove(grow)
	if _, errOut, code := sshProbe(t, h, "alice", "runs", ""); code != 0 {
		t.Fatalf("runs after the probes: exit %d %s", code, errOut)
	}
	if strings.Contains(strings.ToLower(logs.String()), "panic") {
		t.Errorf("a panic in the server log:\n%s", logs.String())
	}
}

// The checkout bounds a file's size (8 MiB) and nesting, not its number of
// blocks or attributes, nor the number of files, and hclparse keeps every
// parsed file until the scan returns. One 8 MiB file of `variable` blocks
// (~450,000 blocks) in a working directory: how long does `launch` take and
// how much heap does it cost? The configuration parser refuses more than
// 10,000 blocks; the checkout reader should be bounded the same way.
func TestACheckoutFileOfManyBlocksIsBounded(t *testing.T) {
	h := newHarness(t, dataTemplates)
	wd := filepath.Join(h.project, "infra", "data")
	var b strings.Builder
	for i := 0; b.Len() < 8<<20-40; i++ {
		fmt.Fprintf(&b, "variable \"v%d\" {\n}\n", i)
	}
	if err := os.WriteFile(filepath.Join(wd, "many.tf"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := atomic.Uint64{}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	_, errOut, code := sshProbe(t, h, "carol", "launch data --dry-run", "")
	took := time.Since(start)
	close(stop)
	<-sampled
	grew := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("launch with an 8 MiB file of blocks: exit %d in %v, peak heap +%d MB: %.200s", code, took.Round(time.Millisecond), grew>>20, strings.TrimSpace(errOut))
	if took > 5*time.Second || grew > 256<<20 {
		t.Fatalf("one 8 MiB checkout file costs a launch %v and %d MB of heap; the number of blocks read is unbounded", took.Round(time.Millisecond), grew>>20)
	}
}

// Length and transport probes: a command of exactly ssh_max_command_bytes
// runs, one byte more is refused with exit 2; a 200 KB one is refused in
// under a second; a 10 MB pty-req or exec request is dropped by the
// transport without harm; a slow-loris handshake (one byte every 200 ms)
// is closed at the handshake deadline.
func TestCommandLengthsAndSlowHandshakesAreBounded(t *testing.T) {
	const deadline = 2 * time.Second
	h, _ := newLimitHarness(t, server.Options{SSHHandshakeTimeout: deadline}, "")
	exact := "runs" + strings.Repeat(" ", 64<<10-4)
	if _, errOut, code := sshProbe(t, h, "alice", exact, ""); code != 0 {
		t.Errorf("a command of exactly 64 KiB: exit %d %s", code, errOut)
	}
	if _, errOut, code := sshProbe(t, h, "alice", exact+" ", ""); code != 2 {
		t.Errorf("a command of 64 KiB + 1: exit %d %s", code, errOut)
	}
	start := time.Now()
	if _, _, code := sshProbe(t, h, "alice", "runs "+strings.Repeat("'a' ", 50000), ""); code != 2 || time.Since(start) > time.Second {
		t.Errorf("a 200 KB command: exit %d after %v", code, time.Since(start))
	}
	// 10 MB pty-req and exec: more than the transport's packet limit.
	client, err := dialAs(h, "alice")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 10<<20)
	errPty := sess.RequestPty(big, 80, 24, gossh.TerminalModes{})
	t.Logf("10 MB pty-req: %v", errPty)
	client.Close()
	// Slow loris.
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start = time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, c)
		closed <- time.Since(start)
	}()
	line := []byte("SSH-2.0-OpenSSH_9.6\r\n" + strings.Repeat("x", 100))
	for i := 0; i < len(line) && time.Since(start) < 3*deadline; i++ {
		if _, err := c.Write(line[i : i+1]); err != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case d := <-closed:
		t.Logf("slow loris closed after %v", d.Round(time.Millisecond))
		if d > deadline+time.Second {
			t.Errorf("slow loris held %v", d)
		}
	case <-time.After(time.Second):
		t.Errorf("slow loris still open after %v", time.Since(start))
	}
	if _, errOut, code := sshProbe(t, h, "alice", "runs", ""); code != 0 {
		t.Fatalf("runs after the probes: exit %d %s", code, errOut)
	}
}

// sshProbe runs line as user's raw command with stdin, bounded in time
// (testkit.Probe); -3 when the dial fails.
func sshProbe(t *testing.T, h *harness, user, line, stdin string) (string, string, int) {
	t.Helper()
	client, err := dialAs(h, user)
	if err != nil {
		return "", err.Error(), -3
	}
	defer client.Close()
	return testkit.Probe(client, line, stdin)
}
