package planview

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchtender/switchtender/screentext"
)

// hostile are strings a configuration could put in an address, a key or a
// value to drive a terminal or hide what it says: ESC sequences, CR,
// newlines, C1 controls, bidirectional overrides, zero-width characters,
// and a byte that is not UTF-8.
var hostile = []string{
	"\x1b]52;c;ZXZpbA==\x07", "\x1b[2J\x1b[H", "a\rb", "line1\nline2", "\u009b31m", "\u202eevil\u202c",
	"zero\u200bwidth", "\u2066iso\u2069", "bad\xffbyte", "tab\there", "\u2028sep",
}

// hostileChangeSet puts every hostile string in every place a value is
// shown: addresses, old addresses, deposed keys, reasons, paths, values,
// fingerprints, JSON paths, diff lines, output names.
func hostileChangeSet() *ChangeSet {
	cs := &ChangeSet{}
	for i, h := range hostile {
		attrs := []Attribute{
			{Path: "p" + h, Before: `"` + h + `"`, After: `"` + h + `x"`},
			{Path: "s" + h, Sensitive: true, Changed: true, BeforeFingerprint: h, AfterFingerprint: h},
			{Path: "j" + h, JSON: &JSONDiff{Changes: []Attribute{{Path: "$." + h, Before: h, After: h + "1"}}}},
			{Path: "l" + h, Lines: []DiffLine{{Op: "-", Text: h}, {Op: "+", Text: h}, {Op: " ", Text: h}, {Op: "…", Text: h}}},
		}
		sec := Sections[i%len(Sections)]
		cs.Resources = append(cs.Resources, Resource{Section: sec, Address: "aws_x.y[\"" + h + "\"]", PreviousAddress: "old" + h,
			Deposed: h, Actions: []string{"delete", h}, Reason: h, ReplacePaths: []string{"p" + h}, Attributes: attrs, Unchanged: 1})
		cs.Drift = append(cs.Drift, Resource{Section: SectionUpdate, Address: "drift" + h, Actions: []string{"update"}, Attributes: attrs})
		cs.Outputs = append(cs.Outputs, Output{Name: "out" + h, Actions: []string{"update"}, Change: attrs[0]})
	}
	cs.Resources = append(cs.Resources, Resource{Section: "sec" + hostile[0], Address: "other", Actions: []string{hostile[0]}})
	return cs
}

// rawControl is the first character of s a terminal would act on or a
// reader could not see (screentext.Hidden), other than the newlines that
// end lines when lines is true; ok is false when there is none.
func rawControl(s string, lines bool) (rune, bool) {
	for _, r := range s {
		if (r == '\n' && lines) || !screentext.Hidden(r) {
			continue
		}
		return r, true
	}
	return 0, false
}

// TestHostileValuesNeverReachTheTextRaw checks that no control, BiDi or
// invisible character of a value reaches the text, the summary or any
// line of the view, folded or whole, wrapped or not: each shows as its
// escape, so the text is still there to read.
func TestHostileValuesNeverReachTheTextRaw(t *testing.T) {
	cs := hostileChangeSet()
	for _, w := range []int{0, 80, 23} {
		text := Text(cs, w)
		if r, ok := rawControl(text, true); ok {
			t.Fatalf("Text at width %d holds U+%04X raw:\n%q", w, r, text)
		}
		if !utf8.ValidString(text) {
			t.Fatalf("Text at width %d is not UTF-8", w)
		}
		for _, want := range []string{`\x1b]52;c;ZXZpbA==\x07`, `\u{202e}evil\u{202c}`, `line1\nline2`, `a\rb`, `bad\xffbyte`} {
			if !strings.Contains(strings.ReplaceAll(text, "\n", ""), want) && w == 0 {
				t.Errorf("the escaped %q is not in the text", want)
			}
		}
	}
	s := Summary(cs, 4000, "show r-1 --changes\x1b[2J")
	if r, ok := rawControl(s, true); ok {
		t.Fatalf("the summary holds U+%04X raw:\n%q", r, s)
	}
	v := NewView(cs)
	for i := range v.Len() {
		for _, whole := range []bool{false, true} {
			for _, l := range v.Lines(i, whole) {
				if r, ok := rawControl(l.Text, false); ok {
					t.Fatalf("item %d's line %q holds U+%04X raw", i, l.Text, r)
				}
			}
		}
	}
}

// TestALookalikeAddressIsMarked checks that an address that reads as
// another (a for_each key with an invisible combining character) is shown
// escaped and marked with what it looks like, in the text and folded.
func TestALookalikeAddressIsMarked(t *testing.T) {
	plain, marked := `terraform_data.db["prod"]`, "terraform_data.db[\"prod\u034f\"]"
	cs := &ChangeSet{Resources: []Resource{
		{Section: SectionDelete, Address: plain, Actions: []string{"delete"}},
		{Section: SectionDelete, Address: marked, Actions: []string{"delete"}},
	}}
	mustHave(t, Text(cs, 0),
		`! terraform_data.db["prod"] looks like terraform_data.db["prod\u{034f}"]: differs by U+034F`,
		`! terraform_data.db["prod\u{034f}"] looks like terraform_data.db["prod"]: differs by U+034F`)
}
