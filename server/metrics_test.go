package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

const metricsListen = "  metrics_listen = \"127.0.0.1:0\"\n"

// scrape GETs path from the metrics listener and returns status and body.
func (h *harness) scrape(path string) (int, string) {
	h.t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + h.srv.MetricsAddr() + path)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// metricValue finds one sample (name with its labels, as exposed, labels
// sorted) in a Prometheus text body; -1 when absent.
func metricValue(body, sample string) float64 {
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// waitMetrics scrapes until every sample has its value, or fails naming
// the ones that do not; it returns the last body.
func (h *harness) waitMetrics(want map[string]float64) string {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := h.scrape("/metrics")
		var off []string
		for sample, v := range want {
			if got := metricValue(body, sample); got != v {
				off = append(off, fmt.Sprintf("%s = %v, want %v", sample, got, v))
			}
		}
		if len(off) == 0 {
			return body
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("metrics:\n%s", strings.Join(off, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Launch, hold, approve with metrics_listen over real HTTP: the held gauge
// goes up then down, the run is counted by its final status, steps and
// the masker are measured, and /healthz and /readyz answer 200.
func TestMetricsCountRunsAndHeld(t *testing.T) {
	h := newHarnessWith(t, metricsListen, dataTemplates+approveAllData)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := h.scrape(p); code != 200 || strings.TrimSpace(body) != "ok" {
			t.Fatalf("%s: %d %q", p, code, body)
		}
	}
	h.mustSSH("alice", "launch", "data")
	h.waitStatus("1", StatusAwaitingApproval)
	body := h.waitMetrics(map[string]float64{"switchtender_proposals_held": 1, `switchtender_runs{status="awaiting_approval"}`: 1})
	if v := metricValue(body, "switchtender_proposal_oldest_held_seconds"); v < 0 || v > 120 {
		t.Errorf("oldest held age %v", v)
	}
	h.mustSSH("bob", "approve", "1", "--digest", h.show("bob", "1").Proposal.Digest)
	h.waitStatus("1", StatusSucceeded)
	// The store says succeeded a moment before the metrics count it, and a
	// session's gauge drops a moment after its client saw the exit.
	body = h.waitMetrics(map[string]float64{
		"switchtender_proposals_held":                                                              0,
		"switchtender_proposal_oldest_held_seconds":                                                0,
		`switchtender_runs_total{kind="apply",status="succeeded",template="data"}`:                 1,
		`switchtender_run_duration_seconds_count{kind="apply",status="succeeded",template="data"}`: 1,
		`switchtender_runs{status="running"}`:                                                      0,
		"switchtender_queue_depth":                                                                 0,
		"switchtender_runs_executing":                                                              0,
		"switchtender_ssh_sessions_open":                                                           0,
	})
	if v := metricValue(body, `switchtender_step_duration_seconds_count{step="apply"}`); v < 1 {
		t.Errorf("apply steps measured: %v", v)
	}
	if v := metricValue(body, "switchtender_masker_bytes_total"); v <= 0 {
		t.Errorf("masker bytes %v, want the run's log", v)
	}
}

// An unknown key is counted as refused; a client that opens the metrics
// port and never finishes its request does not stop a scrape, nor Close.
func TestMetricsHostileClients(t *testing.T) {
	h := newHarnessWith(t, metricsListen, "")
	h.newKey("mallory")
	if _, err := dialAs(h, "mallory"); err == nil {
		t.Fatal("an unknown key got in")
	}
	var stuck []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", h.srv.MetricsAddr())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		stuck = append(stuck, c)
	}
	defer func() {
		for _, c := range stuck {
			c.Close()
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, body := h.scrape("/metrics")
		if metricValue(body, `switchtender_ssh_refused_total{reason="unknown_key"}`) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unknown key was not counted:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	addr := h.srv.MetricsAddr()
	start := time.Now()
	h.stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v with stuck metrics clients", d)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("the metrics port still accepts after Close")
	}
}

// Labels come from the configuration only: a launch of a template name the
// client made up, an SSH user name and a run id never become a label value on
// /metrics.
func TestMetricsTakeNoLabelFromAClient(t *testing.T) {
	h := newHarnessWith(t, metricsListen, dataTemplates)
	const made = "zz-client-made-template-31337"
	h.ssh("alice", "launch", made)
	h.ssh("carol", "launch", "data", "--kind", made)
	h.mustSSH("alice", "launch", "data", "--var", "generation=client-gen-31337", "--wait")
	_, body := h.scrape("/metrics")
	for _, bad := range []string{made, "client-gen-31337", `run="`, `user="`, `identity="`} {
		if strings.Contains(body, bad) {
			t.Errorf("/metrics holds %q from a client", bad)
		}
	}
}
