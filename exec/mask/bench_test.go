package mask

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const benchLogSize = 100 << 20 // 100 MiB

var (
	benchOnce sync.Once
	benchLog  string
)

// benchSecrets returns n random secrets shaped like access keys and tokens.
func benchSecrets(n int) []string {
	r := rand.New(rand.NewPCG(7, 8))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]string, n)
	for i := range out {
		switch i % 3 {
		case 0:
			out[i] = "AKIA" + randString(r, alnum[:36], 16)
		case 1:
			out[i] = randString(r, alnum, 40)
		default:
			out[i] = "ghp_" + randString(r, alnum, 36)
		}
	}
	return out
}

// tofuLikeLog builds size bytes of plan/apply output: refresh lines, attribute
// diffs, progress lines with elapsed times, and log lines with timestamps.
// Every 500th line carries one of the first ten secrets of benchSecrets (so
// they occur in the log whatever the number registered).
func tofuLikeLog(size int) string {
	r := rand.New(rand.NewPCG(11, 12))
	secrets := benchSecrets(10)
	hex := "0123456789abcdef"
	var b strings.Builder
	b.Grow(size + 1024)
	for line := 0; b.Len() < size; line++ {
		i := r.IntN(64)
		id := randString(r, hex, 17)
		switch line % 10 {
		case 0:
			fmt.Fprintf(&b, "aws_instance.web[%d]: Refreshing state... [id=i-%s]\n", i, id)
		case 1:
			fmt.Fprintf(&b, "  # aws_instance.web[%d] will be updated in-place\n  ~ resource \"aws_instance\" \"web\" {\n", i)
		case 2:
			fmt.Fprintf(&b, "        id                           = \"i-%s\"\n", id)
		case 3:
			fmt.Fprintf(&b, "      ~ tags                         = {\n          ~ \"Name\" = \"web-%d\" -> \"web-%d\"\n        }\n", i, i+1)
		case 4:
			fmt.Fprintf(&b, "      + ami                          = \"ami-%s\"\n      - instance_type = \"t3.micro\" -> null\n    }\n", id)
		case 5:
			fmt.Fprintf(&b, "2024-05-01T12:%02d:%02d.%03dZ [INFO]  provider.terraform-provider-aws_v5.46.0_x5: HTTP Request Sent: aws.operation=DescribeInstances tf_req_id=%s\n", i%60, line%60, line%1000, id)
		case 6:
			fmt.Fprintf(&b, "aws_instance.web[%d]: Still modifying... [id=i-%s, %ds elapsed]\n", i, id, 10*(line%9))
		case 7:
			fmt.Fprintf(&b, "aws_instance.web[%d]: Modifications complete after %ds [id=i-%s]\n", i, line%90, id)
		case 8:
			fmt.Fprintf(&b, "module.network.aws_subnet.private[%d]: Creation complete after 1s [id=subnet-%s]\n", i, id)
		default:
			if line%500 == 9 {
				fmt.Fprintf(&b, "      + secret_string = %q\n", "token="+secrets[r.IntN(len(secrets))])
			} else {
				b.WriteString("\nPlan: 3 to add, 12 to change, 0 to destroy.\n")
			}
		}
	}
	return b.String()
}

func benchInput() string {
	benchOnce.Do(func() { benchLog = tofuLikeLog(benchLogSize) })
	return benchLog
}

// replacerFor builds the baseline: strings.Replacer over the same patterns,
// longest first.
func replacerFor(m *Masker) *strings.Replacer {
	var pats []string
	for p := range m.seen {
		pats = append(pats, p)
	}
	slices.SortFunc(pats, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(pats))
	for _, p := range pats {
		pairs = append(pairs, p, Replacement)
	}
	return strings.NewReplacer(pairs...)
}

// TestBenchLogMaskedLikeReplacer checks on a slice of the benchmark input that
// the masker and the baseline produce the same output, so the benchmark
// compares equal work.
func TestBenchLogMaskedLikeReplacer(t *testing.T) {
	in := tofuLikeLog(4 << 20)
	m := New()
	m.Add(benchSecrets(1000)...)
	want := replacerFor(m).Replace(in)
	var out strings.Builder
	w := m.NewWriter(&out)
	for off := 0; off < len(in); off += 32 << 10 {
		w.Write([]byte(in[off:min(off+32<<10, len(in))]))
	}
	w.Flush()
	if out.String() != want {
		t.Fatal("masker output differs from strings.Replacer on the benchmark log")
	}
	if strings.Count(want, Replacement) == 0 {
		t.Fatal("benchmark log holds no registered secret")
	}
}

// BenchmarkMask streams 100 MiB of tofu-like log through a Writer in 32 KiB
// writes (the size os/exec copies a pipe in) and, in the same iteration,
// through strings.Replacer.WriteString with the same patterns. It reports
// masker-MB/s, replacer-MB/s and x-replacer (masker throughput divided by
// the Replacer's). The last case adds one 4-byte secret to 999 long ones,
// which switches the skip table off.
func BenchmarkMask(b *testing.B) {
	in := benchInput()
	inBytes := []byte(in)
	cases := []struct {
		name    string
		secrets []string
	}{
		{"secrets=1", benchSecrets(1)},
		{"secrets=100", benchSecrets(100)},
		{"secrets=1000", benchSecrets(1000)},
		{"secrets=10000", benchSecrets(10000)},
		// Patterns shorter than 8 bytes turn the skip table off: every
		// position goes through the filter.
		{"secrets=1000+short", append(benchSecrets(999), "pw42")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m := New()
			m.Add(c.secrets...)
			rep := replacerFor(m)
			var maskDur, repDur time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				w := m.NewWriter(io.Discard)
				for off := 0; off < len(inBytes); off += 32 << 10 {
					w.Write(inBytes[off:min(off+32<<10, len(inBytes))])
				}
				w.Flush()
				t1 := time.Now()
				rep.WriteString(io.Discard, in)
				repDur += time.Since(t1)
				maskDur += t1.Sub(t0)
			}
			mb := float64(len(in)) * float64(b.N) / 1e6
			b.ReportMetric(mb/maskDur.Seconds(), "masker-MB/s")
			b.ReportMetric(mb/repDur.Seconds(), "replacer-MB/s")
			b.ReportMetric(repDur.Seconds()/maskDur.Seconds(), "x-replacer")
		})
	}
}

// BenchmarkScan1MiB is the masker alone over 1 MiB of the log with 1,000
// secrets, for profiling the scan loop.
func BenchmarkScan1MiB(b *testing.B) {
	in := []byte(tofuLikeLog(1 << 20))
	m := New()
	m.Add(benchSecrets(1000)...)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		w := m.NewWriter(io.Discard)
		for off := 0; off < len(in); off += 32 << 10 {
			w.Write(in[off:min(off+32<<10, len(in))])
		}
		w.Flush()
	}
}
