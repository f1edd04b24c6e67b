package planview

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/gate"
)

// benchPlanEnv names a gzipped `tofu show -json` plan to benchmark instead
// of the gate's.
const benchPlanEnv = "SWITCHTENDER_BENCH_PLAN"

// tenThousandChanges reads the benchmark's plan: $SWITCHTENDER_BENCH_PLAN,
// or ../gate/testdata/plan-10k-changes.json.gz (a real OpenTofu v1.12.6 plan
// over 10,000 terraform_data resources: 8,000 replaces and 2,000 deletes,
// 17.6 MB).
var tenThousandChanges = sync.OnceValues(func() ([]byte, error) {
	path := os.Getenv(benchPlanEnv)
	if path == "" {
		path = filepath.Join("..", "gate", "testdata", "plan-10k-changes.json.gz")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the benchmark's plan: %w (set %s to a gzipped tofu show -json)", err, benchPlanEnv)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
})

// BenchmarkBuildTenThousandChanges measures Build, the change set computed
// once when an apply is held, against gate.AnalyzePlan (the destroy count)
// on the same plan in the same iterations. Metrics: build-s and gate-s per
// plan, build/gate (how many times longer Build takes; target about 3 or
// less) and the plan's MiB.
func BenchmarkBuildTenThousandChanges(b *testing.B) {
	plan, err := tenThousandChanges()
	if err != nil {
		b.Fatal(err)
	}
	fp := NewFingerprinter([]byte("benchmark key"))
	cs, err := Build(plan, fp)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := gate.AnalyzePlan(plan)
	if err != nil {
		b.Fatal(err)
	}
	if cs.Counts.Destroy != sum.Destroy || cs.Counts.Replace != sum.Replace || len(cs.Resources) != len(sum.Changes) {
		b.Fatalf("change set counts %+v, gate summary destroy %d replace %d changes %d", cs.Counts, sum.Destroy, sum.Replace, len(sum.Changes))
	}
	var build, analyze time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := Build(plan, fp); err != nil {
			b.Fatal(err)
		}
		build += time.Since(start)
		start = time.Now()
		if _, err := gate.AnalyzePlan(plan); err != nil {
			b.Fatal(err)
		}
		analyze += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(len(plan))/(1<<20), "MiB")
	b.ReportMetric(build.Seconds()/n, "build-s")
	b.ReportMetric(analyze.Seconds()/n, "gate-s")
	b.ReportMetric(build.Seconds()/analyze.Seconds(), "build/gate")
}
