package server

import (
	"bytes"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// BenchmarkNotifyHostile measures whether notifications slow a run: the
// same ungated apply (`launch data --wait`, real tofu, no changes after the
// first) through a server whose notify blocks point at a receiver that never
// answers and one that answers 500 forever, against a server with no notify
// block, rounds alternating. Metrics: ratio (median wall with hostile
// receivers / without), with-ms, without-ms, queued (deliveries waiting in
// the hostile server's store at the end; the last few may still be on
// their way there).
func BenchmarkNotifyHostile(b *testing.B) {
	silent := &receiver{Hold: make(chan struct{})}
	failing := &receiver{Code: 500}
	s1, s2 := httptest.NewServer(silent), httptest.NewServer(failing)
	defer func() { close(silent.Hold); s1.Close(); s2.Close() }()
	tmpl := "template \"data\" {\n  project = \"infra\"\n  command = \"infra/data\"\n}\n"
	hostile := newDryRunNode(b, tmpl+notifyBlock("silent", s1.URL, "json", `["applied"]`)+notifyBlock("failing", s2.URL, "slack", `["applied"]`))
	plain := newDryRunNode(b, tmpl)
	const rounds = 15
	var with, without []time.Duration
	for i := range rounds + 1 { // the first pass warms both up (first apply creates)
		order := []*dryRunNode{hostile, plain}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, n := range order {
			d := n.apply(b)
			if i == 0 {
				continue
			}
			if n == hostile {
				with = append(with, d)
			} else {
				without = append(without, d)
			}
		}
	}
	ds, err := hostile.srv.db.Deliveries()
	if err != nil {
		b.Fatal(err)
	}
	w, wo := medianDuration(with), medianDuration(without)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(w)/float64(wo), "ratio")
	b.ReportMetric(ms(w), "with-ms")
	b.ReportMetric(ms(wo), "without-ms")
	b.ReportMetric(float64(len(ds)), "queued")
}

// apply runs `launch data --wait` over a new SSH connection and returns its
// wall time.
func (n *dryRunNode) apply(b *testing.B) time.Duration {
	b.Helper()
	t0 := time.Now()
	client, err := gossh.Dial("tcp", n.srv.SSHAddr(), &gossh.ClientConfig{User: "alice",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(n.signer)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		b.Fatalf("ssh: %v", err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		b.Fatalf("ssh session: %v", err)
	}
	defer sess.Close()
	var out bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &out
	if err := sess.Run("launch data --wait"); err != nil {
		b.Fatalf("launch: %v\n%s", err, out.String())
	}
	return time.Since(t0)
}
