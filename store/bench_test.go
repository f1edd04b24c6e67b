package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAppendLog appends 4 KiB chunks to one run's log, each its own
// committed transaction as the server does it. Besides MB/s it reports
// "vs_fsync_append": AppendLog's throughput divided by that of the baseline
// measured in the same run, a plain file append of 4 KiB followed by fsync
// (the same durability per call without a database).
func BenchmarkAppendLog(b *testing.B) {
	const chunk = 4 << 10
	data := make([]byte, chunk)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	dir := b.TempDir()

	// Baseline: append + fsync to a plain file.
	f, err := os.OpenFile(filepath.Join(dir, "baseline.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	const baseN = 300
	start := time.Now()
	for range baseN {
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	baseline := time.Since(start) / baseN
	f.Close()

	db, err := Open(filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r := Run{Template: "bench"}
	if err := db.CreateRun(&r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(chunk)
	b.ResetTimer()
	for b.Loop() {
		if _, err := db.AppendLog(r.ID, data); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(baseline)/float64(perOp), "vs_fsync_append")
	b.ReportMetric(float64(chunk)/baseline.Seconds()/1e6, "baseline_MB/s")
}
