package tui

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/gate"
	"github.com/switchtender/switchtender/planview"
)

// bigPlanEnv names a gzipped `tofu show -json` plan to measure instead of
// the gate's testdata/plan-10k-changes.json.gz (a real OpenTofu v1.12.6
// plan of 10,000 changes: 8,000 replaces and 2,000 deletes).
const bigPlanEnv = "SWITCHTENDER_BENCH_PLAN"

// bigPlanJSON reads the plan the change view's benchmark measures.
var bigPlanJSON = sync.OnceValues(func() ([]byte, error) {
	path := os.Getenv(bigPlanEnv)
	if path == "" {
		path = filepath.Join("..", "gate", "testdata", "plan-10k-changes.json.gz")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
})

// changesConsole opens run r-7 at w×h holding cs, the way the root opens
// a run (the run arrives, the pane is laid out), and draws its first
// screen.
func changesConsole(f *fakeBackend, w, h int) *model {
	m := New(f, Options{Width: w, Height: h, Now: func() time.Time { return clock }}).(*model)
	d := newRunDetail(m.env(), "r-7", m.nextGen())
	d.SetSize(w, h)
	d.Update(detailRunMsg{gen: d.gen, d: f.details["r-7"]})
	m.detail, m.active = d, screenDetail
	_ = m.View()
	return m
}

// richChangeSet is a change set of n changes in the shape of the big
// plan's, with what the interim planview.Build leaves out: 4 of 5 replaced
// (with a reason, the forcing path and three changed attributes), 1 of 5
// deleted (with a reason and unchanged attributes).
func richChangeSet(n int) *planview.ChangeSet {
	cs := &planview.ChangeSet{FormatVersion: "1.2"}
	for i := range n {
		addr := "terraform_data.r[" + itoa(i) + "]"
		if i%5 == 4 {
			cs.Resources = append(cs.Resources, planview.Resource{Section: planview.SectionDelete, Address: addr,
				Actions: []string{"delete"}, Reason: "delete_because_count_index", Unchanged: 4})
			continue
		}
		cs.Resources = append(cs.Resources, planview.Resource{Section: planview.SectionReplace, Address: addr,
			Actions: []string{"delete", "create"}, Reason: "replace_because_cannot_update", ReplacePaths: []string{"triggers_replace[1]"},
			Attributes: []planview.Attribute{
				{Path: "id", Before: `"` + itoa(i) + `"`, Unknown: true},
				{Path: "input.payload", Before: `"lorem-ipsum-dolor-sit-amet-` + itoa(i) + `"`, After: `"lorem-ipsum-` + itoa(i) + `"`},
				{Path: "triggers_replace[1]", Before: `"x"`, After: `"y"`, ForcesReplacement: true},
			}, Unchanged: 3})
	}
	cs.Counts.Replace, cs.Counts.Delete = n-n/5, n/5
	cs.Counts.Destroy = n
	return cs
}

// BenchmarkBigPlanChangeView measures the console on the change view of a
// plan of 10,000 changes (the change set made once, at hold time, by
// planview.Build) against the time the gate takes to read the same plan
// (gate.AnalyzePlan), timed in the same iterations: opening the run to
// its first screen, and a page down with its redraw. Metrics: s per
// open and per page, and each as a fraction of the gate's read. Targets:
// the first screen in under 0.2 s; a page a small fraction of it.
func BenchmarkBigPlanChangeView(b *testing.B) {
	plan, err := bigPlanJSON()
	if err != nil {
		b.Skipf("the big plan: %v (set %s to a gzipped tofu show -json)", err, bigPlanEnv)
	}
	cs, err := planview.Build(plan, planview.NewFingerprinter([]byte("bench key")))
	if err != nil {
		b.Fatal(err)
	}
	built, rich := newFake(), newFake()
	withChanges(built, cs)
	withChanges(rich, richChangeSet(len(cs.Resources)))
	const pages = 20
	var gateT time.Duration
	var openT, pageT [2]time.Duration // of the built change set, of the rich one
	for b.Loop() {
		start := time.Now()
		if _, err := gate.AnalyzePlan(plan); err != nil {
			b.Fatal(err)
		}
		gateT += time.Since(start)
		for k, f := range []*fakeBackend{built, rich} {
			start = time.Now()
			m := changesConsole(f, 80, 24)
			openT[k] += time.Since(start)
			if !strings.Contains(stripANSI(m.View().Content), "Destroys") {
				b.Fatalf("the first screen is not the change view:\n%s", m.View().Content)
			}
			start = time.Now()
			for range pages {
				pressAndDraw(m, "pgdown")
			}
			pageT[k] += time.Since(start)
		}
	}
	n := float64(b.N)
	b.ReportMetric(gateT.Seconds()/n, "s/gate_read")
	for k, name := range []string{"", "_rich"} {
		b.ReportMetric(openT[k].Seconds()/n, "s/first_screen"+name)
		b.ReportMetric(pageT[k].Seconds()/n/pages, "s/page_down"+name)
		b.ReportMetric(float64(openT[k])/float64(gateT), "first_screen/gate_read"+name)
		b.ReportMetric(float64(pageT[k])/pages/float64(gateT), "page_down/gate_read"+name)
	}
}
