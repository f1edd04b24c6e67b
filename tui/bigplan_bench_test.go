package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// bigPlanText is a plan text in tofu's shape of at least size bytes: blocks
// of destroyed resources, some lines wider than 80 cells and some not ASCII.
func bigPlanText(size int) string {
	var b strings.Builder
	b.WriteString("OpenTofu will perform the following actions:\n\n")
	n := 0
	for ; b.Len() < size; n++ {
		fmt.Fprintf(&b, "  # terraform_data.web[%d] will be destroyed\n", n)
		fmt.Fprintf(&b, "  - resource \"terraform_data\" \"web\" {\n      - id     = \"%08x\" -> null\n", n)
		fmt.Fprintf(&b, "      - input  = \"%s\" -> null\n    }\n\n", strings.Repeat("café-", n%40))
	}
	fmt.Fprintf(&b, "Plan: 0 to add, 0 to change, %d to destroy.\n", n)
	return b.String()
}

// bigLogText is a run log of at least size bytes, in lines of about 80 bytes.
func bigLogText(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "terraform_data.web[%d]: Destroying... [id=%08x] %s\n", i, i, strings.Repeat("é", i%60))
	}
	return []byte(b.String())
}

// bigConsole is a console at 80x24 on the held run r-7 whose plan text is
// plan and whose log is log, showing the proposal pane (or the log pane
// when pane is paneLog), the way the root draws it.
func bigConsole(tb testing.TB, plan string, log []byte, pane int) *model {
	f := newFake()
	r := f.details["r-7"]
	p := *r.Proposal
	p.PlanText = plan
	r.Proposal = &p
	m := New(f, Options{Width: 80, Height: 24, Now: func() time.Time { return clock }}).(*model)
	d := newRunDetail(m.env(), "r-7", m.nextGen())
	d.SetSize(80, 24)
	d.Update(detailRunMsg{gen: d.gen, d: r})
	d.Update(logChunksMsg{gen: d.gen, chunks: []LogChunk{{Data: log}}})
	d.pane = pane
	m.detail, m.active = d, screenDetail
	m.Update(keyMsg("G")) // to the end, where a slow cut costs most
	return m
}

// press is one key through the root and the screen drawn after it.
func pressAndDraw(m *model, k string) {
	m.Update(keyMsg(k))
	_ = m.View()
}

// idleTick is one age tick through the root and the screen it redraws.
func idleTick(m *model) {
	m.Update(ageTickMsg{})
	_ = m.View()
}

// oneLine is text with its newlines but the last made spaces: a plan or
// log of one line of megabytes (a long string value tofu prints whole).
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", " ") + "\n"
}

// BenchmarkBigPlanConsole measures the console at 80x24 on a 10 MB plan
// text and on a 10 MB log against the same console on 100 KB, in the same
// run: a scroll key (up or down, then the redraw) and an idle age tick (the
// redraw every second), each as ns per event on the big text and as the
// ratio of big to small. Each is measured on text in lines of about 80
// bytes and on text of one single line. A console whose cost follows the
// screen, not the text, shows ratios near 1; one that re-wraps the whole
// text on each draw shows about 100 (the proposal pane measured 74 per key
// and 108 per tick, 0.76 s and 0.35 s on 10 MB, before it kept its lines).
// It also reports, once, what the text costs whole on 10 MB: opening the
// run (cleaning and measuring it; the proposal pane wraps its lines wider
// than the screen at words) and a resize to 100 columns and back (the
// proposal pane wraps those lines again).
func BenchmarkBigPlanConsole(b *testing.B) {
	cases := bigCases(b)
	for _, c := range cases {
		if v := c.m[1].View().Content; c.pane == paneProposal && !strings.Contains(v, "destroy.") {
			b.Fatalf("the plan's last line is not on the screen after G:\n%s", v)
		}
	}
	const events = 10
	key := make([][2]time.Duration, len(cases))
	tick := make([][2]time.Duration, len(cases))
	for b.Loop() {
		for ci, c := range cases {
			for size, m := range c.m {
				start := time.Now()
				for i := range events {
					pressAndDraw(m, [2]string{"up", "down"}[i%2])
				}
				key[ci][size] += time.Since(start)
				start = time.Now()
				for range events {
					idleTick(m)
				}
				tick[ci][size] += time.Since(start)
			}
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*events) }
	for ci, c := range cases {
		b.ReportMetric(per(key[ci][1]), "ns/key_10MB_"+c.name)
		b.ReportMetric(per(tick[ci][1]), "ns/tick_10MB_"+c.name)
		b.ReportMetric(float64(key[ci][1])/float64(key[ci][0]), "ratio_key_10MB/100KB_"+c.name)
		b.ReportMetric(float64(tick[ci][1])/float64(tick[ci][0]), "ratio_tick_10MB/100KB_"+c.name)
		b.ReportMetric(c.open.Seconds()*1000, "ms/open_10MB_"+c.name)
		b.ReportMetric(c.resize.Seconds()*1000, "ms/resize_10MB_"+c.name)
	}
}

// bigCase is a console of BenchmarkBigPlanConsole, on 100 KB and on 10
// MB, and what opening and resizing the one on 10 MB took.
type bigCase struct {
	name         string
	pane         int
	m            [2]*model // on 100 KB, on 10 MB
	open, resize time.Duration
}

// bigCases are the consoles of BenchmarkBigPlanConsole: on the log and on
// the proposal pane, with texts in lines and of a single line, each at
// the end of its text (G).
func bigCases(b *testing.B) []*bigCase {
	const small, large = 100 << 10, 10 << 20
	var cases []*bigCase
	for _, lines := range []bool{true, false} {
		for _, pane := range []int{paneLog, paneProposal} {
			c := &bigCase{name: [2]string{"log", "plan"}[pane], pane: pane}
			if !lines {
				c.name += "_oneline"
			}
			for i, size := range []int{small, large} {
				plan, log := bigPlanText(size), string(bigLogText(size))
				if !lines {
					plan, log = oneLine(plan), oneLine(log)
				}
				start := time.Now()
				c.m[i] = bigConsole(b, plan, []byte(log), pane)
				c.open = time.Since(start)
			}
			start := time.Now()
			for _, w := range []int{100, 80} {
				c.m[1].Update(tea.WindowSizeMsg{Width: w, Height: 24})
				_ = c.m[1].View()
			}
			c.resize = time.Since(start) / 2
			c.m[1].Update(keyMsg("G"))
			cases = append(cases, c)
		}
	}
	return cases
}
