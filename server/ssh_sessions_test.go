package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// newSessionHarness starts a harness whose configuration has serverExtra
// in its server block and a user "mallory" with no roles, with metrics on
// loopback and the operator log in the returned buffer.
func newSessionHarness(t *testing.T, serverExtra string) (*harness, *lockedBuffer) {
	t.Helper()
	h := writeHarness(t, metricsListen+serverExtra, "")
	f, err := os.OpenFile(h.cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "user \"mallory\" {\n  public_key = %q\n  roles = []\n}\n", h.newKey("mallory"))
	f.Close()
	logs := &lockedBuffer{}
	h.logger = slog.New(slog.NewTextHandler(logs, nil))
	h.start()
	return h, logs
}

// openMCP opens a session channel on client and starts `mcp` on it; the
// error is the server's refusal of the channel.
func openMCP(t *testing.T, client *gossh.Client) (gossh.Channel, error) {
	t.Helper()
	ch, reqs, err := client.OpenChannel("session", nil)
	if err != nil {
		return nil, err
	}
	go gossh.DiscardRequests(reqs)
	ok, err := ch.SendRequest("exec", true, gossh.Marshal(struct{ Command string }{"mcp"}))
	if err != nil || !ok {
		t.Fatalf("exec mcp: ok %v, %v", ok, err)
	}
	return ch, nil
}

// One connection of a user with no roles opens 1,000 session channels, each
// running `mcp`: the first ten are served, every later one is refused
// before it is accepted with a reason naming the setting, the refusals are
// counted and logged (rate-limited), the server's live sessions and
// goroutines stay bounded, a slot closed is a slot free again, and other
// users are served throughout. The break it guards: a connection could
// hold any number of sessions (8,000 `mcp` sessions took the server from
// 25 MB to 863 MB). Not parallel: it counts the process's goroutines.
func TestOneConnectionHoldsAtMostItsSessions(t *testing.T) {
	h, logs := newSessionHarness(t, "  ssh_max_sessions_per_connection = 10\n")
	client, err := dialAs(h, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	before := runtime.NumGoroutine()
	var open []gossh.Channel
	refused := 0
	for range 1000 {
		ch, err := openMCP(t, client)
		var oce *gossh.OpenChannelError
		switch {
		case err == nil:
			open = append(open, ch)
		case errors.As(err, &oce) && oce.Reason == gossh.ResourceShortage && strings.Contains(oce.Message, "ssh_max_sessions_per_connection"):
			refused++
		default:
			t.Fatalf("channel %d: %v", len(open)+refused, err)
		}
	}
	if len(open) != 10 || refused != 990 {
		t.Fatalf("served %d sessions and refused %d, want 10 and 990", len(open), refused)
	}
	h.waitMetrics(map[string]float64{
		`switchtender_ssh_refused_total{reason="session_limit"}`: 990,
		"switchtender_ssh_sessions_open":                         10,
	})
	if grown := runtime.NumGoroutine() - before; grown > 400 {
		t.Errorf("the server grew by %d goroutines for 10 sessions", grown)
	}
	if n := strings.Count(logs.String(), "refused an SSH session: the connection is at its session cap"); n < 1 || n > refusalLogPerSource {
		t.Errorf("%d log lines for 990 refusals, want 1 to %d:\n%s", n, refusalLogPerSource, logs)
	}
	if out, errOut, code := h.ssh("bob", "whoami"); code != 0 || !strings.Contains(out, "bob") {
		t.Errorf("bob while mallory floods: exit %d %s %s", code, out, errOut)
	}
	open[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ch, err := openMCP(t, client)
		if err == nil {
			ch.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed session's place never came free: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Left out, the cap is 10, whether the sessions run a command or not, and
// another connection of the same user has places of its own.
func TestSessionCapDefaultsToTenPerConnection(t *testing.T) {
	t.Parallel()
	h, _ := newSessionHarness(t, "")
	if h.srv.sshLimits.Sessions != defaultSSHMaxSessions || defaultSSHMaxSessions != 10 {
		t.Fatalf("default cap %d", h.srv.sshLimits.Sessions)
	}
	first, second := mustDial(t, h, "mallory"), mustDial(t, h, "mallory")
	for i := range 10 {
		if _, err := openMCP(t, first); err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
	}
	if _, err := openMCP(t, first); err == nil {
		t.Fatal("an eleventh session was served")
	}
	if _, err := openMCP(t, second); err != nil {
		t.Fatalf("another connection: %v", err)
	}
	bare := mustDial(t, h, "mallory") // channels that never run a command count too
	for i := range 10 {
		if _, _, err := bare.OpenChannel("session", nil); err != nil {
			t.Fatalf("bare session %d: %v", i+1, err)
		}
	}
	if _, _, err := bare.OpenChannel("session", nil); err == nil {
		t.Fatal("an eleventh bare session was accepted")
	}
}

// mustDial connects as user, closed at the test's end.
func mustDial(t *testing.T, h *harness, user string) *gossh.Client {
	t.Helper()
	c, err := dialAs(h, user)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
