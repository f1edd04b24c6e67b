package sshd

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSplitCommand(t *testing.T) {
	ok := []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   \t\n ", nil},
		{"runs", []string{"runs"}},
		{"  runs   --json  ", []string{"runs", "--json"}},
		{"launch network --var 'region=eu west'", []string{"launch", "network", "--var", "region=eu west"}},
		{`launch t --var "region=eu west"`, []string{"launch", "t", "--var", "region=eu west"}},
		{"a '' b", []string{"a", "", "b"}},
		{`a "" b`, []string{"a", "", "b"}},
		{`''`, []string{""}},
		{`'a'"b"c`, []string{"abc"}},
		{`"it's"`, []string{"it's"}},
		{`'say "hi"'`, []string{`say "hi"`}},
		{`"say 'hi'"`, []string{`say 'hi'`}},
		{`'it'\''s'`, []string{"it's"}},
		{`"a\"b\\c\$d\` + "`" + `e"`, []string{`a"b\c$d` + "`" + "e"}},
		{`"a\nb"`, []string{`a\nb`}}, // other backslashes stay inside double quotes
		{"\"a\\\nb\"", []string{"ab"}},
		{"a\\\nb", []string{"ab"}},
		{`a\ b`, []string{"a b"}},
		{`\'`, []string{"'"}},
		{`'\'`, []string{`\`}},
		{`$HOME ; rm -rf / | x && y`, []string{"$HOME", ";", "rm", "-rf", "/", "|", "x", "&&", "y"}},
		{"ünïcødé '日本語 テキスト' \"🚀\"", []string{"ünïcødé", "日本語 テキスト", "🚀"}},
		{"a\tb\nc", []string{"a", "b", "c"}},
		{"a\rb", []string{"a\rb"}},
	}
	for _, c := range ok {
		got, err := splitCommand(c.line)
		if err != nil {
			t.Errorf("splitCommand(%q): %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	bad := []struct{ line, want string }{
		{"launch network --var 'region=x --dry-run", "single quote at byte 21 that is never closed"},
		{`launch t --var "region=x`, "double quote at byte 15 that is never closed"},
		{`"abc\"`, "double quote at byte 0"},
		{`"abc\`, "double quote at byte 0"},
		{`'`, "single quote at byte 0"},
		{`"`, "double quote at byte 0"},
		{`'a'"`, "double quote at byte 3"},
		{`runs \`, "ends with a backslash"},
		{`\`, "ends with a backslash"},
		{"runs\x00--json", "NUL byte at byte 4"},
		{"'\x00'", "NUL byte"},
		{"runs \xff", "not valid UTF-8"},
	}
	for _, c := range bad {
		got, err := splitCommand(c.line)
		if err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error with %q", c.line, got, c.want)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("splitCommand(%q): %q, want %q in it", c.line, msg, c.want)
		}
		if strings.Count(msg, ".") > 0 || strings.Contains(msg, "\n") {
			t.Errorf("splitCommand(%q): %q is not one sentence", c.line, msg)
		}
	}
}

// FuzzSplit: splitCommand never panics, and what it accepts survives
// quoting each word and splitting again.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", "runs", "launch network --var 'region=x --dry-run",
		`launch t --var "a b" --dry-run`, `'it'\''s'`, `"a\"b\\c\$d"`, "a\\\nb",
		"\"a\\\nb\"", `\`, `"`, `'`, "''", `""`, "ü '日本' \"🚀\"", "a\x00b", "\xff",
		`$(rm -rf /) ; echo | x`, "a\tb\nc\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := splitCommand(line)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("splitCommand(%q): bad refusal %q", line, msg)
			}
			return
		}
		for _, w := range words {
			if !utf8.ValidString(w) || strings.IndexByte(w, 0) >= 0 {
				t.Fatalf("splitCommand(%q) gave word %q", line, w)
			}
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quoteWord(w)
		}
		again, err := splitCommand(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-splitting %q (from %q): %v", quoted, line, err)
		}
		if len(again) != len(words) || (len(words) > 0 && !reflect.DeepEqual(again, words)) {
			t.Fatalf("round trip of %q: %q, then %q", line, words, again)
		}
	})
}

// hostileLine is a command line of about n bytes mixing every construct the
// splitter handles, with many words and quotes (what is quadratic in
// go-shlex).
func hostileLine(n int) string {
	const unit = `launch t --var 'a=b c' "d\"e\\f" g\ h '' "" `
	return strings.Repeat(unit, n/len(unit)+1)[:n/len(unit)*len(unit)]
}

// TestSplitLinear: a 200 KB line splits in well under a second, and about
// ten times as slowly as a 20 KB one.
func TestSplitLinear(t *testing.T) {
	big := hostileLine(200_000)
	start := time.Now()
	if _, err := splitCommand(big); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("splitting 200 KB took %v", d)
	}
}

// BenchmarkSplit reports the time for a 200 KB line against a 20 KB one
// (ratio_200k_20k, about 10 for a linear splitter; a quadratic one gives
// about 100).
func BenchmarkSplit(b *testing.B) {
	small, big := hostileLine(20_000), hostileLine(200_000)
	per := func(line string) time.Duration {
		const rounds = 20
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			for range rounds {
				if _, err := splitCommand(line); err != nil {
					b.Fatal(err)
				}
			}
			best = min(best, time.Since(start)/rounds)
		}
		return best
	}
	var ts, tb time.Duration
	for b.Loop() {
		ts, tb = per(small), per(big)
	}
	b.ReportMetric(float64(ts.Microseconds()), "µs/20KB")
	b.ReportMetric(float64(tb.Microseconds()), "µs/200KB")
	b.ReportMetric(float64(tb)/float64(ts), "ratio_200k_20k")
	b.Logf("20 KB: %v, 200 KB: %v, ratio %.1f", ts, tb, float64(tb)/float64(ts))
}
