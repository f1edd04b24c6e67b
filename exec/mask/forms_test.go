package mask

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// tofuQuote is how OpenTofu prints a single-line string: the plan renderer
// with fmt.Sprintf("%q") of the cty (NFC-normalised) value.
func tofuQuote(s string) string { return fmt.Sprintf("%q", norm.NFC.String(s)) }

// checkMasked checks that in is masked to want by String and by a Writer for
// every split of in into two writes.
func checkMasked(t *testing.T, m *Masker, in, want string) {
	t.Helper()
	if got := m.String(in); got != want {
		t.Fatalf("String(%q) = %q, want %q", in, got, want)
	}
	for i := 0; i <= len(in); i++ {
		if got, _ := streamed(m, in, []int{i}); got != want {
			t.Fatalf("split at %d: %q masked to %q, want %q", i, in, got, want)
		}
	}
}

// TestTofuRenderedForms gives secrets as a user might type them and checks
// the output in the form OpenTofu prints them, written out literally here
// (so the test does not rely on the code it tests to know the renderings).
func TestTofuRenderedForms(t *testing.T) {
	cases := []struct {
		name    string
		secret  string
		printed string // as OpenTofu prints it, quotes included
	}{
		{"decomposed e-acute printed NFC", "cafe\u0301-pass", "\"caf\u00e9-pass\""},
		{"composed given, decomposed printed", "caf\u00e9-pass", "\"cafe\u0301-pass\""},
		{"ESC printed as \\x1b", "ab\x1bcd-token", `"ab\x1bcd-token"`},
		{"no-break space printed as \\u00a0", "pass\u00a0word", `"pass\u00a0word"`},
		{"zero-width space printed as \\u200b", "pass\u200bword", `"pass\u200bword"`},
		{"quote and backslash", `pa"ss\word`, `"pa\"ss\\word"`},
		{"tab and newline escapes", "a\tb\x7fc", `"a\tb\x7fc"`},
		{"invalid UTF-8", "ab\xffcd", `"ab\xffcd"`},
		{"decomposed and ESC together", "e\u0301\x1bsecret", `"é\x1bsecret"`},
		{"NFC shorter than MinLen", "e\u0301x", `"éx"`},
		{"bell and DEL", "\a\x7fsecret", `"\a\x7fsecret"`},
		{"line separator U+2028", "pass\u2028word", `"pass\u2028word"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "composed given, decomposed printed" {
				// The table is OpenTofu's rendering: %q of the NFC form.
				if got := tofuQuote(c.secret); got != c.printed {
					t.Fatalf("table wrong: OpenTofu prints %s, table says %s", got, c.printed)
				}
			}
			m := New()
			m.Add(c.secret)
			in := "  + password = " + c.printed + "\n"
			want := "  + password = \"***\"\n"
			if c.name == "NFC shorter than MinLen" {
				want = "  + password = ***\n" // quotes and all
			}
			checkMasked(t, m, in, want)
		})
	}
}

// TestHeredocLines checks a multi-line secret as OpenTofu prints it: the
// plan renderer trims white space from the whole string and prints each line
// of it in a heredoc; `Outputs:` prints the lines untrimmed.
func TestHeredocLines(t *testing.T) {
	// White space OpenTofu's indentation cannot supply (a tab) around the
	// value, so only the trimmed lines match in the plan.
	secret := "\tfirst-line-secret\n\tmiddle line\x1b here\r\nlast-line-secret\t\n"
	m := New()
	m.Add(secret)
	plan := "  + content = <<-EOT\n        first-line-secret\n        \tmiddle line\x1b here\r\n        last-line-secret\n    EOT\n"
	want := "  + content = <<-EOT\n        ***\n        ***\r\n        ***\n    EOT\n"
	checkMasked(t, m, plan, want)
	// `Outputs:` prints the value's lines as they are, indented in a map.
	outputs := "x = {\n  content = <<-EOT\n  \tfirst-line-secret\n  \tmiddle line\x1b here\r\n  last-line-secret\t\n  \n  EOT\n}\n"
	checkMasked(t, m, outputs, "x = {\n  content = <<-EOT\n  ***\n  ***\r\n  ***\n  \n  EOT\n}\n")
}

// coreBounds returns the characters of the base64 encoding of a value that
// depend only on the p..p+n bytes of it, computed from the encoding's
// definition (6 bits a character).
func coreBounds(p, n int) (lo, hi int) { return (8*p + 5) / 6, 8 * (p + n) / 6 }

// TestBase64AllAlignments encodes prefix+secret+suffix for prefixes of 0..5
// bytes and suffixes of 0..3, in the standard and URL alphabets, padded and
// not, and checks that every character depending only on the secret is
// inside the masked run, also when the output is split at any byte.
func TestBase64AllAlignments(t *testing.T) {
	secrets := []string{
		"abcd", "abcde", "abcdef", "s3cr3t-tok",
		"\xfb\xff\xbf\xfe\xfb\xef", // encodes to + and / (- and _ in the URL alphabet)
		"cafe\u0301-\x1b",
	}
	encs := map[string]*base64.Encoding{
		"std": base64.StdEncoding, "rawstd": base64.RawStdEncoding,
		"url": base64.URLEncoding, "rawurl": base64.RawURLEncoding,
	}
	for _, secret := range secrets {
		m := New()
		m.Add(secret)
		for pre := 0; pre <= 5; pre++ {
			for suf := 0; suf <= 3; suf++ {
				for name, e := range encs {
					prefix := strings.Repeat("\x93", pre)
					suffix := "\x00\x7f\xff"[:suf]
					blob := e.EncodeToString([]byte(prefix + secret + suffix))
					lo, hi := coreBounds(pre, len(secret))
					in := "data = \"" + blob + "\"\n"
					out := m.String(in)
					what := fmt.Sprintf("secret %q prefix %d suffix %d %s: %q -> %q", secret, pre, suf, name, in, out)
					checkCovered(t, in, out, 8+lo, 8+hi, what)
					for i := 0; i <= len(in); i++ {
						if got, _ := streamed(m, in, []int{i}); got != out {
							t.Fatalf("%s: split at %d gives %q", what, i, got)
						}
					}
				}
			}
		}
	}
}

// checkCovered checks that out is in with one masked run that covers
// in[lo:hi].
func checkCovered(t *testing.T, in, out string, lo, hi int, what string) {
	t.Helper()
	before, after, ok := strings.Cut(out, Replacement)
	if !ok || strings.Contains(after, Replacement) {
		t.Fatalf("%s: want exactly one masked run", what)
	}
	if !strings.HasPrefix(in, before) || !strings.HasSuffix(in, after) ||
		len(before) > lo || len(in)-len(after) < hi {
		t.Fatalf("%s: masked run does not cover bytes %d..%d", what, lo, hi)
	}
}

// TestBase64CoreIndependentOfNeighbours checks the test's own premise: the
// core characters are the same whatever bytes precede and follow.
func TestBase64CoreIndependentOfNeighbours(t *testing.T) {
	secret := "s3cr3t-tok"
	for pre := range 3 {
		lo, hi := coreBounds(pre, len(secret))
		var first string
		for _, fill := range []byte{0x00, 0xff, 0x5a} {
			nb := strings.Repeat(string(fill), 3)
			blob := base64.StdEncoding.EncodeToString([]byte(nb[:pre] + secret + nb))
			if first == "" {
				first = blob[lo:hi]
			} else if blob[lo:hi] != first {
				t.Fatalf("prefix %d: core %q differs from %q", pre, blob[lo:hi], first)
			}
		}
		if got := base64Core(base64.RawStdEncoding, secret, pre); got != first {
			t.Fatalf("base64Core(%d) = %q, want %q", pre, got, first)
		}
	}
}

// TestRegisteredForms lists the forms registered for one secret.
func TestRegisteredForms(t *testing.T) {
	got := variants("e\u0301\x1b\"/+x")
	for _, want := range []string{
		"e\u0301\x1b\"/+x",        // as given (NFD)
		"\u00e9\x1b\"/+x",         // NFC
		"e\u0301" + `\u001b\"/+x`, // JSON (non-ASCII is not escaped)
		"\u00e9" + `\u001b\"/+x`,  // JSON of NFC
		`é\x1b\"/+x`,              // OpenTofu's %q of NFC
		"e\u0301" + `\x1b\"/+x`,   // and of NFD (a combining mark is printable)
		"e%CC%81%1B%22%2F%2Bx",    // query escape
		"e%CC%81%1B%22%2F+x",      // path escape
		"w6kbIi8reA==",            // base64 of NFC
		"w6kbIi8reA",              // unpadded
		base64Core(base64.RawURLEncoding, "\u00e9\x1b\"/+x", 1),
		base64Core(base64.RawStdEncoding, "e\u0301\x1b\"/+x", 2),
	} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("form %q not registered; registered: %q", want, got)
		}
	}
	for _, g := range got {
		if len(g) < MinLen {
			t.Errorf("form %q shorter than MinLen registered", g)
		}
	}
}

// FuzzRenderedForms registers one secret and streams, cut at two points, an
// input holding the secret's renderings (OpenTofu's quoted NFC and NFD forms
// and base64 of it behind a prefix of any length) between fuzzed text. The
// output must equal the brute-force reference over the registered patterns,
// and no rendering (computed here, independently of variants) may survive.
func FuzzRenderedForms(f *testing.F) {
	f.Add("x", "cafe\u0301-pass", "", uint8(0), uint8(3), uint8(9))
	f.Add("y = ", "ab\x1bcd", "\x93", uint8(1), uint8(1), uint8(2))
	f.Add("", "pass\u00a0word\u200b", "ab", uint8(2), uint8(5), uint8(40))
	f.Add("\"", `pa"ss\word`, "\x00\x00\x00", uint8(5), uint8(0), uint8(0))
	f.Add("\n", "e\u0301x", "", uint8(0), uint8(2), uint8(3))
	f.Add(" = ", `{"k":"va\u00a0lue","n":[12345,"x\ny-line"]}`, "\x01", uint8(1), uint8(7), uint8(200))
	f.Add("\t", "  line-one\n\tline-two\x1b  \n", "", uint8(0), uint8(20), uint8(21))
	f.Fuzz(func(t *testing.T, in, s, prefix string, suf, c1, c2 uint8) {
		if len(s) < MinLen || len(s) > 64 || len(in) > 256 || len(prefix) > 8 {
			return
		}
		m := New()
		m.Add(s)
		blob := base64.StdEncoding.EncodeToString([]byte(prefix + s + in[:min(int(suf), len(in))]))
		lo, hi := coreBounds(len(prefix), len(s))
		urlBlob := base64.RawURLEncoding.EncodeToString([]byte(prefix + s))
		nfc, nfd := tofuQuote(s), fmt.Sprintf("%q", norm.NFD.String(s))
		forms := []string{
			s, nfc[1 : len(nfc)-1], nfd[1 : len(nfd)-1], blob[lo:hi], urlBlob[lo:hi],
		}
		input := in + nfc + in + nfd + in + blob + in + urlBlob + in
		var patterns []string
		for p := range m.seen {
			patterns = append(patterns, p)
		}
		cuts := []int{int(c1) * len(input) / 255, int(c2) * len(input) / 255}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		want := reference(input, patterns)
		got, _ := streamed(m, input, cuts)
		if got != want {
			t.Fatalf("streamed %q cut at %v with %q = %q, want %q", input, cuts, s, got, want)
		}
		for _, form := range forms {
			if len(form) >= MinLen && !strings.Contains(form, "*") && strings.Contains(got, form) {
				t.Fatalf("rendering %q of %q survives in %q", form, s, got)
			}
		}
	})
}

// TestJSONDocumentSecret gives a secret that is a JSON document (a service
// account key) and checks its parts as OpenTofu's plan renderer shows them:
// a jsonencode() structure whose strings are rendered as strings of their
// own (%q, or a heredoc when multi-line). Numbers and keys stay visible.
func TestJSONDocumentSecret(t *testing.T) {
	secret := `{"type":"service_account","private_key_id":"0123456789abcdef",` +
		`"private_key":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n",` +
		`"nested":"{\"token\":\"tok\\u00e9-\\u001b-xyz\"}","port":54321,"id":"ab"}`
	m := New()
	m.Add(secret)
	plan := `  + content = jsonencode(
        {
          + id             = "ab"
          + nested         = jsonencode(
                {
                  + token = "tok` + "\u00e9" + `-\x1b-xyz"
                }
            )
          + port           = 54321
          + private_key    = <<-EOT
                -----BEGIN PRIVATE KEY-----
                MIIEvQIBADANBgkqhkiG9w0B
                -----END PRIVATE KEY-----
            EOT
          + private_key_id = "0123456789abcdef"
          + type           = "service_account"
        }
    )
`
	want := `  + content = jsonencode(
        {
          + id             = "ab"
          + nested         = jsonencode(
                {
                  + token = "***"
                }
            )
          + port           = 54321
          + private_key    = <<-EOT
                ***
                ***
                ***
            EOT
          + private_key_id = "***"
          + type           = "***"
        }
    )
`
	checkMasked(t, m, plan, want)
	// The document itself, as given and JSON-escaped, is masked whole.
	checkMasked(t, m, "v="+secret+";", "v=***;")
	// A string that only starts like JSON is a plain string.
	if got := jsonValues(`{"a":"bcdefg"`); got != nil {
		t.Fatalf("jsonValues of a broken document = %q", got)
	}
}
