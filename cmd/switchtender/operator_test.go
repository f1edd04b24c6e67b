package main

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// The check, on the real binary: serve with metrics_listen and
// --log-format json; launch, hold, approve. Every line of the operator log
// is JSON with one record per transition of the run; /metrics counts the
// run by status and the held gauge goes up then down; /healthz and /readyz
// answer 200; an unknown key is logged with its fingerprint.
func TestOperatorViewEndToEnd(t *testing.T) {
	n := newNodeWith(t, nodeOptions{serverExtra: "  metrics_listen = \"127.0.0.1:0\"\n", args: []string{"--log-format", "json"}})
	metrics := n.serverRecord("serving")["metrics"].(string)
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + metrics + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, _ := get(p); code != 200 {
			t.Errorf("%s: %d", p, code)
		}
	}
	id := n.launch("data")
	v := n.waitStatus(id, "awaiting_approval")
	n.waitSample(get, "switchtender_proposals_held", 1)
	n.mustSSH("bob", "approve", id, "--digest", v.Proposal.Digest)
	n.waitStatus(id, "succeeded")
	n.waitSample(get, "switchtender_proposals_held", 0)
	n.waitSample(get, `switchtender_runs_total{kind="apply",status="succeeded",template="data"}`, 1)

	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	stranger, _ := gossh.NewSignerFromKey(priv)
	if c, err := gossh.Dial("tcp", n.addr, &gossh.ClientConfig{User: "mallory", Auth: []gossh.AuthMethod{gossh.PublicKeys(stranger)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second}); err == nil {
		c.Close()
		t.Fatal("an unknown key got in")
	}
	refused := n.serverRecord("refused an SSH key that no configured user or agent has")
	if refused["fingerprint"] != gossh.FingerprintSHA256(stranger.PublicKey()) {
		t.Errorf("refusal record %v", refused)
	}
	var got []string
	for _, rec := range n.jsonRecords() {
		if strings.HasPrefix(rec["msg"].(string), "run ") && rec["run"] == id {
			got = append(got, rec["status"].(string))
		}
	}
	if want := "queued running awaiting_approval queued running succeeded"; strings.Join(got, " ") != want {
		t.Errorf("transition records %v, want %s", got, want)
	}
}

// jsonRecords parses the server's output: every line but serve's stdout
// line must be one JSON object.
func (n *node) jsonRecords() []map[string]any {
	n.t.Helper()
	f, err := os.Open(n.logPath)
	if err != nil {
		n.t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "switchtender: serving SSH on ") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			n.t.Fatalf("a log line is not JSON: %v\n%s", err, line)
		}
		out = append(out, rec)
	}
	return out
}

// serverRecord waits for the operator log record with message msg.
func (n *node) serverRecord(msg string) map[string]any {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, rec := range n.jsonRecords() {
			if rec["msg"] == msg {
				return rec
			}
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("no %q record in the operator log", msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSample scrapes /metrics with get until sample has value want.
func (n *node) waitSample(get func(string) (int, string), sample string, want float64) {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get("/metrics")
		for _, line := range strings.Split(body, "\n") {
			if rest, ok := strings.CutPrefix(line, sample+" "); ok {
				if v, err := strconv.ParseFloat(rest, 64); err == nil && v == want {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("%s never became %v", sample, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
