package server

import (
	"net"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// Refused keys are recorded in the audit trail at the rate the README
// says, and no refusal goes unsaid: after 12 refused connections from one
// address (5 recorded), the next one recorded — from another address —
// says 7 were not recorded one by one, and the metric counts all 13. The
// break it guards: the README said every refused key was audited, while
// all but 5 a minute per source were dropped without a trace.
func TestRefusedKeysPastTheRateAreCountedInTheNextAuditEntry(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, metricsListen, "")
	h.newKey("mallory")
	for range 12 {
		if c, err := dialFrom(h, "127.0.0.1", h.keys["mallory"]); err == nil {
			c.Close()
			t.Fatal("an unknown key got in")
		}
	}
	h.waitMetrics(map[string]float64{`switchtender_ssh_refused_total{reason="unknown_key"}`: 12})
	if c, err := dialFrom(h, "127.0.0.2", h.keys["mallory"]); err == nil {
		c.Close()
		t.Fatal("an unknown key got in")
	}
	h.waitMetrics(map[string]float64{`switchtender_ssh_refused_total{reason="unknown_key"}`: 13})
	var recorded []string
	waitFor(t, "the sixth refuse key entry", 10*time.Second, func() bool {
		recorded = recorded[:0]
		audit, _ := h.srv.db.AuditLog("")
		for _, e := range audit {
			if e.Action == "refuse key" {
				recorded = append(recorded, e.Detail)
			}
		}
		return len(recorded) == refusalLogPerSource+1
	})
	last := recorded[len(recorded)-1]
	if !strings.Contains(last, "from 127.0.0.2:") || !strings.Contains(last, "7 refused connections before this one were not recorded one by one") {
		t.Fatalf("the entry after the dropped ones: %s", last)
	}
}

// dialFrom connects from the local address ip with signer's key.
func dialFrom(h *harness, ip string, signer gossh.Signer) (*gossh.Client, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	conn, err := d.Dial("tcp", h.addr)
	if err != nil {
		return nil, err
	}
	c, chans, reqs, err := gossh.NewClientConn(conn, h.addr, &gossh.ClientConfig{
		User: "mallory", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return gossh.NewClient(c, chans, reqs), nil
}
