package scenario

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/server/internal/testkit"
)

// statusClock is a proxy in front of Gitea's API that notes when each
// commit's first pending status was posted through it.
type statusClock struct {
	mu      sync.Mutex
	pending map[string]time.Time // sha -> when its first pending status left
}

func (c *statusClock) wrap(t testing.TB, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sha, ok := strings.CutPrefix(r.URL.Path, "/api/v1/repos/root/infra/statuses/"); ok && r.Method == http.MethodPost {
			c.mu.Lock()
			if _, seen := c.pending[sha]; !seen {
				c.pending[sha] = time.Now()
			}
			c.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkADeliveryToItsPendingStatus measures, over 20 pull requests
// opened on a real Gitea, the time from the opened delivery reaching the
// node to the pending status leaving it (the fetch, the launch and the
// reporter's gathering of changes), against the baseline of the same
// delivery handled by the receiver alone — verified and stored, answered
// 200 — measured on the same node in the same run. It reports the median
// and p99 of both, in milliseconds, and the ratio of the medians.
func BenchmarkADeliveryToItsPendingStatus(b *testing.B) {
	clock := &statusClock{pending: map[string]time.Time{}}
	f := writeForgeHarnessVia(b, clock)
	f.startNode()
	var pending, stored []time.Duration
	for range b.N {
		for i := range 20 {
			branch := fmt.Sprintf("bench-%d-%d", len(pending), i)
			_, head := f.openPR(branch, map[string]string{"network/" + branch + ".tf": strings.ReplaceAll(testkit.PlainResource, `"x"`, `"b`+fmt.Sprint(i)+`"`)})
			k := f.relay.waitKept(b, "the opened delivery of "+branch, func(k keptDelivery) bool {
				return k.Header.Get("X-Gitea-Event-Type") == "pull_request" && strings.Contains(string(k.Body), head)
			})
			waitFor(b, "the pending status of "+branch, time.Minute, func() bool {
				clock.mu.Lock()
				defer clock.mu.Unlock()
				_, ok := clock.pending[head]
				return ok
			})
			clock.mu.Lock()
			pending = append(pending, clock.pending[head].Sub(k.Received))
			clock.mu.Unlock()
			stored = append(stored, k.Answered.Sub(k.Received))
		}
	}
	pm, p99 := medianP99(pending)
	sm, s99 := medianP99(stored)
	b.ReportMetric(ms(pm), "pending_median_ms")
	b.ReportMetric(ms(p99), "pending_p99_ms")
	b.ReportMetric(ms(sm), "stored_median_ms")
	b.ReportMetric(ms(s99), "stored_p99_ms")
	b.ReportMetric(float64(pm)/float64(max(sm, 1)), "pending/stored")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// medianP99 are the median and the 99th percentile of ds.
func medianP99(ds []time.Duration) (time.Duration, time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0, 0
	}
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}
