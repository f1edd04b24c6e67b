// Package mask removes secrets from streamed process output before it reaches
// a run log, a screen or the database (DESIGN.md invariant 3: no secret reaches
// a log). A Masker holds the registered secrets; each Writer streams one
// output through it, holding back only the bytes that may still turn out to
// start a secret.
//
// Each secret is registered with the forms it is printed in (listed exactly
// on Masker.Add): its NFC and NFD normalisations, and of each of them the
// value, its JSON and URL escapes, OpenTofu's quoted rendering (`\x1b`,
// `\u00a0`, `\"`, ...), base64 of the value alone and inside a larger
// encoded value at each of the three byte alignments, and the lines of a
// multi-line value, as given and trimmed; and the same for each string in a
// secret that is a JSON document (OpenTofu shows one as a structure, string
// by string). Every form is masked wherever it occurs, also when it is split
// across writes. What cannot be masked: values shorter than MinLen bytes, and
// values the configuration transforms (upper(), hex, reversed, ...) into a
// form not listed.
//
// Semantics: every byte covered by an occurrence of a registered pattern is
// removed, and each maximal run of overlapping occurrences is replaced by one
// Replacement. Where patterns overlap, the longest match wins (a secret that
// is a prefix of a longer one never leaves the longer one's tail visible), and
// a secret overlapping another is masked together with it, so no part of
// either shows. For occurrences that do not overlap this is exactly what
// strings.NewReplacer(secret1, Replacement, secret2, Replacement, ...) with the
// secrets ordered longest first produces.
//
// Matching uses the first MinLen bytes of every pattern as a 32-bit key: a
// bitset filter rejects almost every position with one load, one multiply and
// one bit test, and only positions whose key is registered are compared
// against the patterns (longest first). When every pattern is 8 bytes or
// longer, a Wu-Manber skip table over 4-byte blocks first moves past
// stretches of input in which no match can start, so most positions are
// never looked at.
package mask

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/text/unicode/norm"
)

// MinLen is the shortest secret that is masked, in bytes. Shorter values are
// ignored by Add, with their encodings: masking a one-to-three byte value
// would blank ordinary words, numbers and punctuation all over a log ("on",
// "1", "yes", "us-"), leaving the log unreadable while protecting almost
// nothing, since a secret that short is guessable anyway. Four bytes is also
// the length of the key the matcher filters on. A sensitive value of four
// bytes such as "true" is masked wherever the word appears; that is the
// price of masking it at all.
const MinLen = 4

// Replacement is written in place of each masked run of output.
const Replacement = "***"

// Masker is the set of secrets to mask. The zero value is not usable; call
// New. Add, NewWriter and String are safe for concurrent use, including Add
// while Writers stream: a Writer picks up secrets added before each Write.
type Masker struct {
	mu   sync.Mutex          // serialises Add
	seen map[string]struct{} // every pattern registered, for deduplication
	vals []string            // the values given to Add, in order, once each
	has  map[string]struct{} // vals as a set
	tab  atomic.Pointer[table]
}

// table is an immutable snapshot of the patterns, replaced as a whole by Add.
type table struct {
	maxLen int
	minLen int
	// Wu-Manber skip table, used when every pattern is at least wmMin bytes
	// long: for the 4-byte block ending a window of wm bytes, how far the
	// window may move without passing the start of a match.
	wm      int
	wmShift uint32
	skip    []uint8
	shift   uint32   // 32 - log2(len(filter)*64)
	filter  []uint64 // bit hash(key) set when some pattern starts with key
	byKey   map[uint32][]string
	// prefixes shorter than MinLen, for deciding how much of a write's tail
	// to hold back: first byte, first two bytes, first three bytes.
	pre1 [4]uint64
	pre2 []uint64 // 65536 bits
	pre3 map[uint32]struct{}
}

// New returns an empty Masker.
func New() *Masker {
	m := &Masker{seen: map[string]struct{}{}, has: map[string]struct{}{}}
	m.tab.Store(&table{})
	return m
}

// Add registers secrets. For each value s of MinLen bytes or more, Add
// registers, for each of s as given, its NFC form and its NFD form (OpenTofu
// stores strings through cty, which NFC-normalises them, so a decomposed
// answer is printed composed):
//
//   - the value itself;
//   - its JSON escaping, as inside a JSON string, with and without HTML
//     escaping (`\"`, `\u003c`, `\u001b`, ...);
//   - OpenTofu's quoted rendering: strconv.Quote without the surrounding
//     quotes (`\"`, `\\`, `\n`, `\x1b` for ESC, `\u00a0` for a no-break
//     space, `\u200b` for a zero-width space, `\xff` for an invalid byte).
//     That is how OpenTofu prints a string: the plan renderer with
//     fmt.Sprintf("%q") (internal/command/jsonformat/computed/renderers,
//     string.go evaluatedString.RenderSimple, and util.go hclEscapeString for
//     map keys and attribute names, which is also %q and so adds no other
//     form) and `Outputs:` and `tofu output` with strconv.Quote
//     (internal/repl/format.go FormatValue), OpenTofu v1.12.6;
//   - URL query escaping and path escaping;
//   - base64 in the standard and URL alphabets, padded and unpadded, of the
//     value on its own;
//   - base64 inside a larger encoded value, at each of the three alignments
//     (the value starting k = 0, 1 or 2 bytes past a 3-byte boundary), in
//     the standard and URL alphabets: the characters of the encoding that
//     depend only on the value's bytes (see base64Core);
//   - for a multi-line value, each line without a trailing "\r", and each
//     line with leading and trailing white space removed: OpenTofu prints a
//     multi-line string as a heredoc, one line as given per line, after the
//     plan renderer has trimmed white space from the whole string (string.go
//     evaluatePrimitiveString, primitive.go renderStringDiff);
//   - when the value is a JSON document (starts with "{" or "[" and its first
//     JSON value decodes), which the plan renderer shows as a jsonencode()
//     structure of its parts: every string value in it (not object keys),
//     with all of the forms above and, if itself a JSON document, its values
//     in turn (up to 4 levels).
//
// A form shorter than MinLen bytes is not registered (a short line of a
// multi-line value, say), except that when OpenTofu's quoted rendering of a
// form is too short (the NFC form of a decomposed value can be shorter than
// the value), the quoted string is registered with its quotes. Adding a
// value twice, or a form already registered, changes nothing.
//
// Limits: a value shorter than MinLen bytes is ignored with all its forms
// (see MinLen). A value the configuration transforms (upper(), hex, reversed,
// hashed, split, a substring, encoded twice, ...) is not recognised, nor is a
// JSON-escaped form quoted again. Parts of a JSON document shorter than
// MinLen, its object keys and its numbers, true, false and null stay visible
// when OpenTofu shows the document as a structure. Output already written by a
// Writer is not masked again.
func (m *Masker) Add(secrets ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	added := false
	for _, s := range secrets {
		if _, ok := m.has[s]; !ok && len(s) >= MinLen {
			m.has[s] = struct{}{}
			m.vals = append(m.vals, s)
		}
		for _, p := range variants(s) {
			if _, ok := m.seen[p]; !ok {
				m.seen[p] = struct{}{}
				added = true
			}
		}
	}
	if added {
		m.tab.Store(build(m.seen))
	}
}

// Values returns the values given to Add (of MinLen bytes or more), each
// once, in the order they were first added: what another Masker needs to
// mask the same secrets (a relay worker's, sealed in transit).
func (m *Masker) Values() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.vals...)
}

// Len reports how many patterns (secrets and their encodings) are registered.
func (m *Masker) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}

// variants returns s and its renderings and encodings (see Add), each at
// least MinLen bytes long, sorted and without duplicates.
func variants(s string) []string {
	res := appendValue(nil, s, jsonDepth)
	out := res[:0]
	for _, v := range res {
		if len(v) >= MinLen {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jsonDepth bounds how deep JSON documents nested in string values of a JSON
// document are searched for values.
const jsonDepth = 4

// appendValue appends the forms of s, in each normalisation, and of the
// values of the JSON document s may be (see jsonValues).
func appendValue(out []string, s string, depth int) []string {
	if len(s) < MinLen {
		return out
	}
	forms := []string{s, norm.NFC.String(s), norm.NFD.String(s)}
	if c := path.Clean(s); strings.HasPrefix(s, "./") && c != s {
		// A local module path: tofu get prints it cleaned ("- m in mod").
		forms = append(forms, c)
	}
	slices.Sort(forms)
	for _, f := range slices.Compact(forms) {
		out = appendForms(out, f)
		if depth > 0 {
			for _, v := range jsonValues(f) {
				out = appendValue(out, v, depth-1)
			}
		}
	}
	return out
}

// jsonValues returns the string values of s when OpenTofu's plan renderer
// shows s as a jsonencode() structure rather than as a string: when s starts
// with "{" or "[" and its first JSON value decodes (string.go
// evaluatePrimitiveString). The structure's strings are then rendered as
// strings of their own. Object keys are not returned (they name things
// rather than hold them), nor numbers (ports, counts and sizes are not
// secrets, and masking them would blank the same numbers all over a log),
// as for the string elements of a sensitive list or map answer.
func jsonValues(s string) []string {
	if !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// appendForms appends to out the forms of one normalisation f of a secret;
// the list is documented on Add.
func appendForms(out []string, f string) []string {
	out = append(out, f)
	if b, err := json.Marshal(f); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err == nil {
		j := strings.TrimSuffix(sb.String(), "\n")
		out = append(out, j[1:len(j)-1])
	}
	q := strconv.Quote(f)
	if len(q)-2 < MinLen {
		// Too short to match on its own (an NFC form of a decomposed value
		// can be shorter than the value): mask the quoted string, quotes and
		// all, as OpenTofu prints it.
		q = `"` + q + `"`
	}
	out = append(out,
		q[1:len(q)-1],
		url.QueryEscape(f),
		url.PathEscape(f),
		base64.StdEncoding.EncodeToString([]byte(f)),
		base64.RawStdEncoding.EncodeToString([]byte(f)),
		base64.URLEncoding.EncodeToString([]byte(f)),
		base64.RawURLEncoding.EncodeToString([]byte(f)),
	)
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			out = append(out, base64Core(e, f, k))
		}
	}
	// OpenTofu prints a provisioner's output line by line, breaking at \n
	// and \r and trimming white space: each line, and the value trimmed.
	out = append(out, strings.TrimSpace(f))
	if strings.ContainsAny(f, "\n\r") {
		for line := range strings.FieldsFuncSeq(f, func(r rune) bool { return r == '\n' || r == '\r' }) {
			out = append(out, line, strings.TrimSpace(line))
		}
	}
	// A number is printed in OpenTofu's diagnostics with ten significant
	// digits ("4.111111111e+16").
	if n, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil {
		out = append(out, strconv.FormatFloat(n, 'g', 10, 64))
	}
	return out
}

// base64Core returns the characters of the base64 encoding of a longer value
// that depend only on f's bytes, where f starts k bytes (mod 3) into the
// encoded value: encode k zero bytes followed by f and keep characters i with
// ceil(8k/6) <= i < floor(8(k+len(f))/6). The characters before depend on the
// preceding bytes as well; the one after on the following bytes.
func base64Core(e *base64.Encoding, f string, k int) string {
	b := make([]byte, k+len(f))
	copy(b[k:], f)
	enc := e.EncodeToString(b)
	lo, hi := (8*k+5)/6, 8*(k+len(f))/6
	if hi <= lo {
		return ""
	}
	return enc[lo:hi]
}

// hashMul is the multiplier of the filter's multiplicative hash (2^32/phi).
const hashMul = 0x9E3779B1

func key(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func build(patterns map[string]struct{}) *table {
	t := &table{byKey: make(map[uint32][]string, len(patterns)), pre2: make([]uint64, 1<<16/64), pre3: map[uint32]struct{}{}}
	bits := uint32(12) // filter size: about 64 bits per pattern, 4 Ki to 4 Mi bits
	for bits < 22 && 1<<bits < len(patterns)*64 {
		bits++
	}
	t.shift = 32 - bits
	t.filter = make([]uint64, 1<<bits/64)
	for p := range patterns {
		t.maxLen = max(t.maxLen, len(p))
		k := key([]byte(p))
		t.byKey[k] = append(t.byKey[k], p)
		h := (k * hashMul) >> t.shift
		t.filter[h/64] |= 1 << (h % 64)
		t.pre1[p[0]/64] |= 1 << (p[0] % 64)
		k2 := uint32(p[0]) | uint32(p[1])<<8
		t.pre2[k2/64] |= 1 << (k2 % 64)
		t.pre3[k2|uint32(p[2])<<16] = struct{}{}
	}
	for _, ps := range t.byKey { // longest first: the longest match wins
		slices.SortFunc(ps, func(a, b string) int { return len(b) - len(a) })
	}
	t.minLen = t.maxLen
	for p := range patterns {
		t.minLen = min(t.minLen, len(p))
	}
	if t.minLen >= wmMin {
		t.buildSkip(patterns)
	}
	return t
}

// wmMin is the shortest pattern for which the skip table pays; wmMax caps
// the window, so the table stays sparse and a skip fits a byte.
const (
	wmMin = 8
	wmMax = 64
)

// buildSkip fills the Wu-Manber skip table over the first wm bytes of every
// pattern: a block at offset j (ending at j+4) allows a skip of wm-(j+4);
// a block in no pattern allows wm-3.
//
// The table is sized at about two slots per (pattern, block) entry: many
// patterns of one secret share their first wm bytes (base64 with and
// without padding, and the aligned core, say), so fewer slots are filled
// than entries counted, and a table that stays in the L2 cache scans faster
// than a sparser one that does not (with 1,000 secrets of 20-40 bytes, 256
// KiB scanned about 10% faster than 1 MiB at eight slots per entry).
func (t *table) buildSkip(patterns map[string]struct{}) {
	t.wm = min(t.minLen, wmMax)
	entries := len(patterns) * (t.wm - 3)
	bits := uint32(16) // 64 Ki to 1 Mi slots
	for bits < 20 && 1<<bits < entries*2 {
		bits++
	}
	t.wmShift = 32 - bits
	t.skip = make([]uint8, 1<<bits)
	for i := range t.skip {
		t.skip[i] = uint8(t.wm - 3)
	}
	for p := range patterns {
		for j := 0; j+4 <= t.wm; j++ {
			h := (key([]byte(p[j:])) * hashMul) >> t.wmShift
			t.skip[h] = min(t.skip[h], uint8(t.wm-(j+4)))
		}
	}
}

// isPrefix reports whether tail (shorter than maxLen) is a proper prefix of
// some pattern, that is whether a match may start at tail[0] once more bytes
// arrive.
func (t *table) isPrefix(tail []byte) bool {
	switch len(tail) {
	case 0:
		return false
	case 1:
		return t.pre1[tail[0]/64]&(1<<(tail[0]%64)) != 0
	case 2:
		k2 := uint32(tail[0]) | uint32(tail[1])<<8
		return t.pre2[k2/64]&(1<<(k2%64)) != 0
	case 3:
		_, ok := t.pre3[uint32(tail[0])|uint32(tail[1])<<8|uint32(tail[2])<<16]
		return ok
	}
	k := key(tail)
	if h := (k * hashMul) >> t.shift; t.filter[h/64]&(1<<(h%64)) == 0 {
		return false
	}
	for _, p := range t.byKey[k] {
		if len(p) > len(tail) && p[:len(tail)] == string(tail) {
			return true
		}
	}
	return false
}

// matchAt masks the longest pattern starting at work[p:], if any, extending
// the open run or starting a new one (writing what precedes it and
// Replacement to out).
func (t *table) matchAt(out, work []byte, p, runEnd, emitted int) ([]byte, int, int) {
	k := binary.LittleEndian.Uint32(work[p:])
	if h := (k * hashMul) >> t.shift; t.filter[h/64]&(1<<(h%64)) == 0 {
		return out, runEnd, emitted
	}
	for _, pat := range t.byKey[k] {
		if len(pat) <= len(work)-p && string(work[p:p+len(pat)]) == pat {
			if p >= runEnd { // a new run
				out = append(out, work[emitted:p]...)
				out = append(out, Replacement...)
			}
			runEnd = max(runEnd, p+len(pat))
			return out, runEnd, runEnd
		}
	}
	return out, runEnd, emitted
}

// scan masks work[:n] into out. covered is how many leading bytes of work are
// already inside a masked run whose Replacement was written. When final is
// false, scan stops at the first position from which a pattern may still
// start once more bytes arrive; it returns that position (hold) and how many
// bytes from hold on are already covered by the open run.
func (t *table) scan(out, work []byte, covered int, final bool) (_ []byte, hold, stillCovered int) {
	n := len(work)
	hold = n
	if !final && t.maxLen > 0 {
		for p := max(0, n-(t.maxLen-1)); p < n; p++ {
			if t.isPrefix(work[p:]) {
				hold = p
				break
			}
		}
	}
	runEnd := covered // end (exclusive) of the open masked run
	emitted := covered
	switch {
	case len(t.byKey) == 0:
	case t.skip != nil:
		// Wu-Manber: a window of wm bytes at p; the block ending it says how
		// far the window can move before a match could start in it. Matches
		// need wm bytes, so positions closer than that to the end hold none.
		last := min(hold, n-t.wm+1)
		skip, wmShift, wm := t.skip, t.wmShift, t.wm
		for p := 0; p < last; {
			h := (binary.LittleEndian.Uint32(work[p+wm-4:]) * hashMul) >> wmShift
			if s := skip[h]; s > 0 {
				p += int(s)
				continue
			}
			out, runEnd, emitted = t.matchAt(out, work, p, runEnd, emitted)
			p++
		}
	default:
		last := min(hold, n-MinLen+1) // positions with a full key
		filter, shift := t.filter, t.shift
		fmask := uint32(len(filter) - 1)
		p := 0
		// Fast path: one 8-byte load gives the keys of four positions; a
		// position whose key's filter bit is clear cannot start a match.
		for ; p+8 <= n && p+4 <= last; p += 4 {
			w := binary.LittleEndian.Uint64(work[p:])
			h0 := (uint32(w) * hashMul) >> shift
			h1 := (uint32(w>>8) * hashMul) >> shift
			h2 := (uint32(w>>16) * hashMul) >> shift
			h3 := (uint32(w>>24) * hashMul) >> shift
			hit := filter[(h0>>6)&fmask]>>(h0&63) | filter[(h1>>6)&fmask]>>(h1&63) |
				filter[(h2>>6)&fmask]>>(h2&63) | filter[(h3>>6)&fmask]>>(h3&63)
			if hit&1 == 0 {
				continue
			}
			for q := p; q < p+4; q++ {
				out, runEnd, emitted = t.matchAt(out, work, q, runEnd, emitted)
			}
		}
		for ; p < last; p++ {
			out, runEnd, emitted = t.matchAt(out, work, p, runEnd, emitted)
		}
	}
	if emitted < hold {
		out = append(out, work[emitted:hold]...)
	}
	return out, hold, max(0, runEnd-hold)
}

// String returns s with every registered secret masked.
func (m *Masker) String(s string) string {
	t := m.tab.Load()
	out, _, _ := t.scan(make([]byte, 0, len(s)), []byte(s), 0, true)
	return string(out)
}

// Writer masks what is written to it and passes the result to its
// destination. A secret split across writes is still masked: Write holds back
// the tail of the data from which a registered pattern may still start (at
// most the longest pattern's length minus one byte), and Flush or Close
// writes it. A Writer is not safe for concurrent use by several goroutines.
type Writer struct {
	m       *Masker
	dst     io.Writer
	held    []byte // tail not yet decided
	covered int    // leading bytes of held inside a run whose Replacement was written
	work    []byte
	out     []byte
	err     error
}

// NewWriter returns a Writer that writes masked output to dst.
func (m *Masker) NewWriter(dst io.Writer) *Writer {
	return &Writer{m: m, dst: dst}
}

// Write masks p and writes what is decided to the destination, with at most
// one Write call on it. It returns len(p) and nil when the destination
// accepted the data, or the destination's error (then and afterwards).
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	return len(p), w.process(p, false)
}

// Flush writes the held-back tail, masked, to the destination.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.process(nil, true)
}

// Close flushes the Writer. It does not close the destination.
func (w *Writer) Close() error { return w.Flush() }

func (w *Writer) process(p []byte, final bool) error {
	work := p
	if len(w.held) > 0 {
		w.work = append(append(w.work[:0], w.held...), p...)
		work = w.work
	}
	if len(work) == 0 {
		return nil
	}
	t := w.m.tab.Load()
	var hold int
	w.out, hold, w.covered = t.scan(w.out[:0], work, w.covered, final)
	w.held = append(w.held[:0], work[hold:]...)
	if len(w.out) > 0 {
		if _, err := w.dst.Write(w.out); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}
