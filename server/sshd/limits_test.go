package sshd

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/api"
)

// The idle timer spares a connection while an exempt session holds it, and
// counts again from the session's end.
func TestSSHLimitsIdleExempt(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	cl := newConnLimiter(api.SSHLimits{Total: 4, Startups: 4, PerSource: 4, Idle: 150 * time.Millisecond})
	if why := cl.admit("x"); why != "" {
		t.Fatal(why)
	}
	c := &limitConn{Conn: server, cl: cl, source: "x", log: slog.New(slog.DiscardHandler)}
	c.authenticated()
	if total, hs := cl.counts(); total != 1 || hs != 0 {
		t.Fatalf("after authentication: total %d, handshaking %d", total, hs)
	}
	release := c.hold()
	released := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.released
	}
	time.Sleep(500 * time.Millisecond)
	if released() {
		t.Fatal("closed while an exempt session held it")
	}
	release()
	time.Sleep(80 * time.Millisecond)
	if released() {
		t.Fatal("closed before the idle timeout from the session's end")
	}
	time.Sleep(300 * time.Millisecond)
	if !released() {
		t.Fatal("not closed after the idle timeout")
	}
	if total, hs := cl.counts(); total != 0 || hs != 0 {
		t.Fatalf("after close: total %d, handshaking %d", total, hs)
	}
}

func TestSSHLimitsKeepsOpen(t *testing.T) {
	for args, want := range map[string]bool{
		"log 3 --follow":          true,
		"log 3 -follow":           true,
		"log 3 --follow=false":    false,
		"log 3":                   false,
		"launch t --wait":         true,
		"launch t --wait=true":    true,
		"launch t --var x=--wait": false,
		"runs --follow":           false,
		"runs":                    false,
	} {
		if got := keepsOpen(strings.Fields(args)); got != want {
			t.Errorf("keepsOpen(%s) = %v, want %v", args, got, want)
		}
	}
}

// Past its share of the connections in their handshake a connection from
// one address is refused while another address is still let in.
func TestSSHLimitsRefusePastTheHandshakeShare(t *testing.T) {
	cl := newConnLimiter(api.SSHLimits{Total: 100, Startups: 8, PerSource: 100})
	for i := range 4 {
		if why := cl.admit("10.0.0.1"); why != "" {
			t.Fatalf("connection %d within the share refused: %s", i, why)
		}
	}
	if why := cl.admit("10.0.0.1"); !strings.Contains(why, "per-source cap on connections in their handshake") {
		t.Errorf("a connection past the share: %q", why)
	}
	if why := cl.admit("10.0.0.2"); why != "" {
		t.Errorf("another address was refused: %s", why)
	}
}
