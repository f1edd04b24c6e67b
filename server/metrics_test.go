package server

import (
	"bufio"
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
	_, body := h.scrape("/metrics")
	if v := metricValue(body, "switchtender_proposals_held"); v != 1 {
		t.Errorf("held gauge %v while run 1 is held, want 1\n%s", v, body)
	}
	if v := metricValue(body, `switchtender_runs{status="awaiting_approval"}`); v != 1 {
		t.Errorf("runs awaiting_approval %v, want 1", v)
	}
	if v := metricValue(body, "switchtender_proposal_oldest_held_seconds"); v < 0 || v > 120 {
		t.Errorf("oldest held age %v", v)
	}
	h.mustSSH("bob", "approve", "1", "--digest", h.show("bob", "1").Proposal.Digest)
	h.waitStatus("1", StatusSucceeded)
	_, body = h.scrape("/metrics")
	want := map[string]float64{
		"switchtender_proposals_held":                                                              0,
		"switchtender_proposal_oldest_held_seconds":                                                0,
		`switchtender_runs_total{kind="apply",status="succeeded",template="data"}`:                 1,
		`switchtender_run_duration_seconds_count{kind="apply",status="succeeded",template="data"}`: 1,
		`switchtender_runs{status="running"}`:                                                      0,
		"switchtender_queue_depth":                                                                 0,
		"switchtender_runs_executing":                                                              0,
	}
	for sample, v := range want {
		if got := metricValue(body, sample); got != v {
			t.Errorf("%s = %v, want %v", sample, got, v)
		}
	}
	if v := metricValue(body, `switchtender_step_duration_seconds_count{step="apply"}`); v < 1 {
		t.Errorf("apply steps measured: %v", v)
	}
	if v := metricValue(body, "switchtender_masker_bytes_total"); v <= 0 {
		t.Errorf("masker bytes %v, want the run's log", v)
	}
	if v := metricValue(body, "switchtender_ssh_sessions_open"); v != 0 {
		t.Errorf("ssh sessions open %v after every command ended", v)
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
