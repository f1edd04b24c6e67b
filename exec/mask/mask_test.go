package mask

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestStringMasksSecretAndEncodings(t *testing.T) {
	m := New()
	secret := `p@ss/w"rd <&> 1+1`
	m.Add(secret)
	inputs := map[string]string{
		"raw":          secret,
		"json":         `p@ss/w\"rd \u003c\u0026\u003e 1+1`,
		"json-nohtml":  `p@ss/w\"rd <&> 1+1`,
		"query":        "p%40ss%2Fw%22rd+%3C%26%3E+1%2B1",
		"path":         "p@ss%2Fw%22rd%20%3C&%3E%201+1",
		"b64":          base64.StdEncoding.EncodeToString([]byte(secret)),
		"b64raw":       base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"b64url":       base64.URLEncoding.EncodeToString([]byte(secret)),
		"b64url-nopad": base64.RawURLEncoding.EncodeToString([]byte(secret)),
	}
	for name, enc := range inputs {
		got := m.String("before " + enc + " after")
		if got != "before *** after" {
			t.Errorf("%s: String(%q) = %q, want %q", name, enc, got, "before *** after")
		}
	}
}

func TestShortSecretsIgnored(t *testing.T) {
	m := New()
	m.Add("abc", "", "on")
	if m.Len() != 0 {
		t.Fatalf("Len = %d after adding values shorter than MinLen, want 0", m.Len())
	}
	if got := m.String("abc on"); got != "abc on" {
		t.Fatalf("String = %q, want input unchanged", got)
	}
	m.Add("abcd")
	if got := m.String("xabcdx"); got != "x***x" {
		t.Fatalf("String = %q, want %q", got, "x***x")
	}
}

func TestMultiLineSecretMasksEachLine(t *testing.T) {
	m := New()
	pem := "-----BEGIN KEY-----\r\nAAAABBBBCCCC\nDDD\n-----END KEY-----\n"
	m.Add(pem)
	log := "key line: AAAABBBBCCCC and DDD stays\n"
	if got, want := m.String(log), "key line: *** and DDD stays\n"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got := m.String(`"value": "` + strings.ReplaceAll(strings.ReplaceAll(pem, "\r", `\r`), "\n", `\n`) + `"`); got != `"value": "***"` {
		t.Fatalf("JSON-escaped multi-line value not masked as a whole: %q", got)
	}
}

func TestLongestMatchWinsAndOverlapsMerge(t *testing.T) {
	m := New()
	m.Add("abcd", "abcdefgh", "fghijk", "zzzz")
	cases := map[string]string{
		"abcdefgh":       "***",    // longest at the same start
		"abcdefghijk":    "***",    // overlapping occurrences form one run
		"abcdX":          "***X",   // the shorter one alone
		"abcdzzzz":       "******", // adjacent, not overlapping: two runs
		"xxabcdefghijkx": "xx***x", // no tail of any secret shows
		"zzzzzzz":        "***",    // self-overlap
		"abc efgh fghij": "abc efgh fghij",
	}
	for in, want := range cases {
		if got := m.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// reference masks s by brute force: mark every byte covered by an occurrence
// of a pattern, and replace each run of overlapping occurrences.
func reference(s string, patterns []string) string {
	type iv struct{ a, b int }
	var ivs []iv
	for i := range s {
		best := 0
		for _, p := range patterns {
			if len(p) >= MinLen && strings.HasPrefix(s[i:], p) && len(p) > best {
				best = len(p)
			}
		}
		if best > 0 {
			ivs = append(ivs, iv{i, i + best})
		}
	}
	var b strings.Builder
	pos, runEnd := 0, 0
	for _, v := range ivs {
		if v.a >= runEnd {
			b.WriteString(s[pos:v.a])
			b.WriteString(Replacement)
		}
		runEnd = max(runEnd, v.b)
		pos = runEnd
	}
	b.WriteString(s[pos:])
	return b.String()
}

// streamed writes s through a Writer in the given split points.
func streamed(m *Masker, s string, cuts []int) (string, int) {
	var out bytes.Buffer
	w := m.NewWriter(&out)
	maxHeld := 0
	prev := 0
	for _, c := range append(cuts, len(s)) {
		if _, err := w.Write([]byte(s[prev:c])); err != nil {
			panic(err)
		}
		maxHeld = max(maxHeld, len(w.held))
		prev = c
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return out.String(), maxHeld
}

func randomCuts(r *rand.Rand, n int) []int {
	k := r.IntN(8)
	cuts := make([]int, 0, k)
	for range k {
		cuts = append(cuts, r.IntN(n+1))
	}
	slices.Sort(cuts)
	return cuts
}

func randString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestPropertyStreamingEqualsReference checks, over random secrets, inputs
// and write splits, that the streamed output equals the brute-force reference
// and that a Writer never holds back more than the longest pattern minus one.
func TestPropertyStreamingEqualsReference(t *testing.T) {
	t.Run("short secrets, filter scan", func(t *testing.T) { propertyStreaming(t, MinLen, 6, false) })
	t.Run("long secrets, skip table", func(t *testing.T) { propertyStreaming(t, wmMin, 14, true) })
}

func propertyStreaming(t *testing.T, minLen, spread int, wantSkip bool) {
	r := rand.New(rand.NewPCG(1, uint64(minLen)))
	skipped := 0
	for iter := range 3000 {
		m := New()
		var secrets []string
		for range 1 + r.IntN(5) {
			secrets = append(secrets, randString(r, "abc", minLen+r.IntN(spread)))
		}
		m.Add(secrets...)
		if m.tab.Load().skip != nil {
			skipped++
		}
		var patterns []string
		for p := range m.seen {
			patterns = append(patterns, p)
		}
		longest := 0
		for _, p := range patterns {
			longest = max(longest, len(p))
		}
		var sb strings.Builder
		for sb.Len() < 120 {
			if r.IntN(3) == 0 {
				sb.WriteString(secrets[r.IntN(len(secrets))])
			} else {
				sb.WriteString(randString(r, "abcx\n", 1+r.IntN(5)))
			}
		}
		in := sb.String()
		want := reference(in, patterns)
		if got := m.String(in); got != want {
			t.Fatalf("iter %d: String(%q) with %q = %q, want %q", iter, in, secrets, got, want)
		}
		cuts := randomCuts(r, len(in))
		got, held := streamed(m, in, cuts)
		if got != want {
			t.Fatalf("iter %d: streamed %q cut at %v with %q = %q, want %q", iter, in, cuts, secrets, got, want)
		}
		if held > longest-1 {
			t.Fatalf("iter %d: held back %d bytes, longest pattern %d", iter, held, longest)
		}
	}
	if wantSkip != (skipped == 3000) {
		t.Fatalf("the skip table was used in %d of 3000 iterations", skipped)
	}
}

// TestPropertyEqualsStringsReplacer compares with strings.Replacer (secrets
// ordered longest first) for secrets whose occurrences cannot overlap: each
// starts with a marker byte that appears nowhere else in any secret.
func TestPropertyEqualsStringsReplacer(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 2000 {
		var secrets []string
		for range 1 + r.IntN(4) {
			secrets = append(secrets, "#"+randString(r, "ab", MinLen-1+r.IntN(4)))
		}
		m := New()
		for _, s := range secrets {
			m.addRaw(s) // the raw value only, so the Replacer sees the same patterns
		}
		sorted := slices.Clone(secrets)
		slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
		var pairs []string
		for _, s := range sorted {
			pairs = append(pairs, s, Replacement)
		}
		rep := strings.NewReplacer(pairs...)
		var sb strings.Builder
		for sb.Len() < 50 {
			if r.IntN(2) == 0 {
				sb.WriteString(secrets[r.IntN(len(secrets))])
			} else {
				sb.WriteString(randString(r, "ab#x", 1+r.IntN(4)))
			}
		}
		in := sb.String()
		want := rep.Replace(in)
		got, _ := streamed(m, in, randomCuts(r, len(in)))
		if got != want {
			t.Fatalf("iter %d: masked %q with %q = %q, strings.Replacer gives %q", iter, in, secrets, got, want)
		}
	}
}

// addRaw registers exactly s, without its encodings (tests only).
func (m *Masker) addRaw(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen[s] = struct{}{}
	m.tab.Store(build(m.seen))
}

func FuzzStreaming(f *testing.F) {
	f.Add("xxsecretxxsecr", "secret", "cret-and-more", uint8(3), uint8(9))
	f.Add("aaaaaaaa", "aaaa", "aaaaa", uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, in, s1, s2 string, c1, c2 uint8) {
		m := New()
		m.Add(s1, s2)
		var patterns []string
		for p := range m.seen {
			patterns = append(patterns, p)
		}
		cuts := []int{int(c1) % (len(in) + 1), int(c2) % (len(in) + 1)}
		slices.Sort(cuts)
		want := reference(in, patterns)
		if got, _ := streamed(m, in, cuts); got != want {
			t.Fatalf("streamed %q cut at %v with %q = %q, want %q", in, cuts, patterns, got, want)
		}
	})
}

func TestSecretSplitAcrossManyWrites(t *testing.T) {
	m := New()
	secret := "AKIAIOSFODNN7EXAMPLE"
	m.Add(secret)
	in := "key=" + secret + "\nnext line\n"
	var out bytes.Buffer
	w := m.NewWriter(&out)
	for i := range len(in) {
		w.Write([]byte{in[i]})
		if strings.Contains(out.String(), "AKIA") {
			t.Fatalf("secret prefix written before the secret was complete: %q", out.String())
		}
	}
	// A line ending cannot start the secret: nothing is held back.
	if got, want := out.String(), "key=***\nnext line\n"; got != want {
		t.Fatalf("before Flush: %q, want %q", got, want)
	}
	w.Flush()
	if got, want := out.String(), "key=***\nnext line\n"; got != want {
		t.Fatalf("after Flush: %q, want %q", got, want)
	}
}

func TestFlushWritesHeldTail(t *testing.T) {
	m := New()
	m.Add("secretvalue")
	var out bytes.Buffer
	w := m.NewWriter(&out)
	w.Write([]byte("ends with secr"))
	if got := out.String(); got != "ends with " {
		t.Fatalf("before Flush: %q, want the possible secret start held back", got)
	}
	w.Flush()
	if got := out.String(); got != "ends with secr" {
		t.Fatalf("after Flush: %q", got)
	}
}

func TestWriteErrorIsReturned(t *testing.T) {
	m := New()
	w := m.NewWriter(writerFunc(func(p []byte) (int, error) { return 0, bytes.ErrTooLarge }))
	if _, err := w.Write([]byte("hello\n")); err != bytes.ErrTooLarge {
		t.Fatalf("Write error = %v, want the destination's error", err)
	}
	if _, err := w.Write([]byte("again\n")); err != bytes.ErrTooLarge {
		t.Fatalf("second Write error = %v, want the first error again", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestAddWhileStreaming runs Add concurrently with Writers (run with -race);
// a secret added before a Write is masked in that Write.
func TestAddWhileStreaming(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			w := m.NewWriter(&out)
			for i := range 200 {
				w.Write([]byte("line with some text " + string(rune('a'+g)) + string(rune('a'+i%26)) + "\n"))
			}
			w.Flush()
		}()
	}
	for i := range 100 {
		m.Add("secret-number-" + string(rune('A'+i%26)) + string(rune('A'+i/26)))
	}
	wg.Wait()
	var out bytes.Buffer
	w := m.NewWriter(&out)
	w.Write([]byte("x secret-number-CA y\n"))
	w.Flush()
	if got := out.String(); got != "x *** y\n" {
		t.Fatalf("after concurrent Adds: %q", got)
	}
}
