package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRelayBenchmark measures 100 queued dry runs over 2 relay workers
// against the same 100 on the control node alone, in the same test, and the
// latency from launch to the first tool log line at the control node on an
// idle system. It takes about a minute, so it runs only when asked:
//
//	SWITCHTENDER_RELAY_BENCH=1 go test -run TestRelayBenchmark -v ./server/
//
// The 100 runs spread over 10 working directories (one run at a time per
// directory, here as on a pool). The control node runs them with
// max_parallel 1 (one machine doing one run at a time, as each worker does)
// and again with max_parallel 2; the workers are in-process, over real SSH,
// on the same cores as the control node.
func TestRelayBenchmark(t *testing.T) {
	if os.Getenv("SWITCHTENDER_RELAY_BENCH") == "" {
		t.Skip("set SWITCHTENDER_RELAY_BENCH=1 to run the relay benchmark")
	}
	var tmpl strings.Builder
	for i := range 10 {
		fmt.Fprintf(&tmpl, "template \"l%d\" {\n project = \"infra\"\n command = \"infra/n%d\"\n vars = { region = \"r\" }\n}\n", i, i)
		fmt.Fprintf(&tmpl, "template \"r%d\" {\n project = \"infra\"\n command = \"infra/n%d\"\n queue = \"eu\"\n vars = { region = \"r\" }\n}\n", i, i)
	}
	h, keys, identity := relayHarness(t, tmpl.String())
	h.srv.sched.SetMax(1)
	copyNetwork(t, h.project)
	for _, name := range []string{"w1", "w2"} {
		w := relayWorkerCfg(t, h, name, "eu", keys[name], identity)
		copyNetwork(t, w.Projects["infra"].Path)
		startWorker(t, w)
	}
	waitFor(t, "both workers", 20*time.Second, func() bool { return strings.Count(h.mustSSH("alice", "workers"), "idle") == 2 })
	localLat, relayLat := firstLineLatency(t, h, "l"), firstLineLatency(t, h, "r")
	local1 := throughput(t, h, "l")
	relay := throughput(t, h, "r")
	h.srv.sched.SetMax(2)
	local2 := throughput(t, h, "l")
	t.Logf("100 dry runs: control node alone (max_parallel 1) %s, (max_parallel 2) %s; 2 relay workers %s", local1, local2, relay)
	t.Logf("throughput ratio 2 workers / control node alone: %.2f (max_parallel 1), %.2f (max_parallel 2)", local1.Seconds()/relay.Seconds(), local2.Seconds()/relay.Seconds())
	t.Logf("launch to first tool log line at the control node, median of 15: local %s, relay %s, added %s", localLat, relayLat, relayLat-localLat)
}

// copyNetwork makes infra/n0..n9 copies of infra/network in checkout.
func copyNetwork(t *testing.T, checkout string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(checkout, "infra/network/main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		dir := filepath.Join(checkout, "infra", "n"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var benchWho = Identity{Name: "alice", Roles: []string{"launch", "approve"}}

// throughput launches 100 dry runs of templates prefix0..9 at once and
// returns the time until the last ended; each must succeed.
func throughput(t *testing.T, h *harness, prefix string) time.Duration {
	t.Helper()
	start := time.Now()
	var ids []string
	for i := range 100 {
		r, err := h.srv.Launch(context.Background(), benchWho, LaunchRequest{Template: fmt.Sprintf("%s%d", prefix, i%10), Kind: KindPlan})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		h.waitStatus(id, StatusSucceeded, StatusFailed)
		if r, _ := h.srv.db.GetRun(id); r.Status != StatusSucceeded {
			t.Fatalf("run %s: %s %s", id, r.Status, r.Message)
		}
	}
	return time.Since(start)
}

// firstLineLatency is the median, over 15 dry runs one at a time, of the
// time from launch to the first tool log line ("$ tofu init") reaching
// the control node's log broker.
func firstLineLatency(t *testing.T, h *harness, prefix string) time.Duration {
	t.Helper()
	var lat []time.Duration
	for i := range 15 {
		runs, _ := h.srv.db.ListRuns()
		next := strconv.Itoa(len(runs) + 1)
		events, stop := h.srv.broker.SubscribeLog(next)
		start := time.Now()
		r, err := h.srv.Launch(context.Background(), benchWho, LaunchRequest{Template: fmt.Sprintf("%s%d", prefix, i%10), Kind: KindPlan})
		if err != nil || r.ID != next {
			t.Fatalf("launch: %v (run %s, expected %s)", err, r.ID, next)
		}
		for ev := range events {
			if strings.Contains(string(ev.Data), "$ tofu init") {
				lat = append(lat, time.Since(start))
				break
			}
		}
		stop()
		h.waitStatus(r.ID, StatusSucceeded, StatusFailed)
	}
	slices.Sort(lat)
	return lat[len(lat)/2]
}
