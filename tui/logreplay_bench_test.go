package tui

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// replayLog builds a finished run's log of n lines of about 80 bytes, split
// into 32 KiB chunks as the log store hands them out.
func replayLog(n int) []LogChunk {
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, "2026-05-01T12:00:00Z terraform_data.web[%d]: Still creating... [10s elapsed] #%07d\n", i%1000, i)
	}
	const chunk = 32 << 10
	var out []LogChunk
	data := buf.Bytes()
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		out = append(out, LogChunk{Offset: int64(off), Data: data[off:end]})
	}
	return out
}

// replay opens a detail of a finished run and feeds it chunks the way the
// server's FollowLog does (a goroutine sending into a 64-chunk channel as
// fast as the console takes them), running every command's message through
// Update and drawing the screen after each, as tea.Program does. It returns
// how long the log took to reach the screen, and the detail.
func replay(tb testing.TB, chunks []LogChunk) (time.Duration, *runDetail) {
	f := newFake()
	ch := make(chan LogChunk, 64)
	f.logs["r-6"] = ch
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := env{b: f, id: f.ident, st: newStyles(false), now: func() time.Time { return clock }, ctx: ctx, width: 120}
	d := newRunDetail(e, "r-6", 1)
	d.SetSize(120, 40)
	d.Update(detailRunMsg{gen: 1, seq: 0, d: f.details["r-6"]})

	start := time.Now()
	go func() {
		for _, c := range chunks {
			ch <- c
		}
		close(ch)
	}()
	cmd := d.Update(logStartMsg{gen: 1, ch: ch})
	for cmd != nil {
		msg := cmd()
		cmd = d.Update(msg)
		_ = d.View()
		if m, ok := msg.(logChunksMsg); ok && m.ended {
			break
		}
	}
	return time.Since(start), d
}

// BenchmarkLogReplay measures opening a finished run with a long log: the
// time per log line at 200,000 lines, and the ratio of the time for 200,000
// lines to the time for 20,000 lines measured in the same iteration (10 when
// the work is linear in the log's length, 100 when it is quadratic).
func BenchmarkLogReplay(b *testing.B) {
	small, large := replayLog(20_000), replayLog(200_000)
	const last = "terraform_data.web[999]: Still creating... [10s elapsed] #0199999"
	var tSmall, tLarge time.Duration
	for b.Loop() {
		ts, _ := replay(b, small)
		tl, dl := replay(b, large)
		if v := dl.View(); !strings.Contains(v, last) {
			b.Fatalf("the log's last line is not on the screen:\n%s", v)
		}
		tSmall += ts
		tLarge += tl
	}
	b.ReportMetric(float64(tLarge.Nanoseconds())/float64(b.N)/200_000, "ns/line")
	b.ReportMetric(float64(tLarge)/float64(tSmall), "ratio_200k/20k")
}
