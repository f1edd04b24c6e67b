package screentext

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// unfield reads Field's output back into the value: that it always gives
// the value back is what makes Field injective.
func unfield(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i += 2
		case 'n', 't', 'r':
			b.WriteByte(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r'}[s[i+1]])
			i += 2
		case 'x':
			v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				t.Fatalf("bad \\x escape in %q at %d", s, i)
			}
			b.WriteByte(byte(v))
			i += 4
		case 'u':
			end := strings.IndexByte(s[i:], '}')
			if s[i+2] != '{' || end < 0 {
				t.Fatalf("bad \\u escape in %q at %d", s, i)
			}
			v, err := strconv.ParseUint(s[i+3:i+end], 16, 32)
			if err != nil {
				t.Fatalf("bad \\u escape in %q at %d", s, i)
			}
			b.WriteRune(rune(v))
			i += end + 1
		default:
			b.WriteByte('\\')
			i++
		}
	}
	return b.String()
}

// rawHidden returns the first hidden character s holds as it is, if any.
func rawHidden(s string, allow string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return r, true
			}
		}
		if Hidden(r) && !strings.ContainsRune(allow, r) {
			return r, true
		}
	}
	return 0, false
}

// FuzzFieldIsInjectiveAndShowsNothingHidden: for any value, Field's output
// holds no C0, C1, DEL, bidirectional or default-ignorable code point (nor
// a byte that is not UTF-8) as it is, and reads back into exactly the value,
// so two different values never escape to the same text. Text and Sentence
// pass nothing hidden either (Text keeps only newline and tab).
func FuzzFieldIsInjectiveAndShowsNothingHidden(f *testing.F) {
	for _, s := range []string{"", `\`, `\\`, `\x1b`, "\x1b]x.tf", "dns.tf:4): a GET\n  no other finding\n\x1b]x.tf",
		"prod\u034f", "ok\u202e1.0v-esaeler\u202c", "\xff\xfe", "\u009b2J", `a\u{034f}`, "\U000e0041", "a\\\x00", "\ufe0f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Field(s)
		if r, bad := rawHidden(out, ""); bad {
			t.Fatalf("Field(%q) = %q passes %U raw", s, out, r)
		}
		if back := unfield(t, out); back != s {
			t.Fatalf("Field(%q) = %q reads back as %q: another value could look the same", s, out, back)
		}
		for name, fn := range map[string]func(string) string{"Sentence": Sentence, "Text": Text} {
			allow := ""
			if name == "Text" {
				allow = "\n\t"
			}
			if got := fn(s); func() bool { _, bad := rawHidden(got, allow); return bad }() {
				t.Fatalf("%s(%q) = %q passes a hidden character raw", name, s, got)
			}
		}
	})
}

// Every code point Unicode names default-ignorable, bidirectional or a
// control is hidden: checked over the whole range against the property's
// derivation (Other_Default_Ignorable_Code_Point, Cf, Variation_Selector).
func TestHiddenCoversEveryDefaultIgnorableCodePoint(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector, unicode.Cc)
		if want && !Hidden(r) {
			t.Errorf("%U is default-ignorable, a format or a control character but not hidden", r)
		}
	}
	for _, r := range []rune{0x061c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, 0x200b, 0x200d, 0x2060, 0x2064, 0xfeff, 0xfe0f, 0x034f, 0xe0100, 0x7f, 0x85, 0xa0, 0x2028, 0x3164} {
		if !Hidden(r) {
			t.Errorf("%U is not hidden", r)
		}
	}
	for _, r := range "aZ09 -_.[]\"é✓日本" {
		if Hidden(r) {
			t.Errorf("%U is hidden, though a person sees it", r)
		}
	}
}
