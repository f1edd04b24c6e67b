package forge

import (
	"strings"
	"testing"

	"github.com/switchtender/switchtender/screentext"
)

// hostile is a value that tries everything at once: a terminal control
// string, a bidirectional override, a zero-width space, a link, an image,
// an HTML tag, a mention, an issue reference, an emoji, fences of both
// kinds, emphasis, a table row, a backslash and an escape look-alike, a
// newline followed by a heading, a list item and an indented line, a NUL
// and a line separator.
const hostile = "` \x1b[2J\u202e\u200b](http://evil)<img src=x>@everyone #1 :+1: ```~~~ *b* _i_ | t | \\ \\x41 &amp;\n# h\n- i\n    c\r\x00\u2028![ `` `"

// awkward are values that try to end or open markdown: backticks at the
// edges and in runs, spaces at the edges, only spaces, tildes, a
// backslash last, sigils alone and followed by text, and hostile.
var awkward = []string{
	"plain", "`", "``", "a`b", "`a`", "a ``` b", " a ", "  ", " `", "~~~", "a\\", "\\`", "@", "@x", "# x", "#1",
	"x: y", "x:y", "http://evil", "www.evil.example", "<b>", "&lt;", "1. x", "- x", "> x", "| a | b |", "---",
	"*a* _b_", "[x](y)", "![x](y)", "    four", "\ttab", "a\nb", "é\u0301\u0301\u0301\u0301\u0301", "\xff\xfe", hostile,
}

// TestAValueReadsBackWholeFromItsCodeSpan checks mdCode: one code span on
// one line, nothing around it, whose content as CommonMark reads it is
// the value as screentext.Field shows it.
func TestAValueReadsBackWholeFromItsCodeSpan(t *testing.T) {
	for _, v := range awkward {
		l, err := readInline(mdCode(v))
		if err != nil || len(l.spans) != 1 || l.active != "" {
			t.Fatalf("mdCode(%q) = %q: spans %q, active %q, %v", v, mdCode(v), l.spans, l.active, err)
		}
		if l.spans[0] != screentext.Field(v) {
			t.Errorf("mdCode(%q) reads back as %q, want %q", v, l.spans[0], screentext.Field(v))
		}
	}
	if got := mdCode(""); got != "(empty)" {
		t.Errorf("an empty value is %q", got)
	}
}

// TestALongValueIsCutOutsideItsEscapesAndItsSpan checks that a value
// longer than a code span shows is cut before its escaping, so the span
// holds a prefix of its Field escape, whole escapes only, and "…" follows
// the closed span.
func TestALongValueIsCutOutsideItsEscapesAndItsSpan(t *testing.T) {
	v := strings.Repeat("ab\u202e`", 200)
	s := mdCode(v)
	if !strings.HasSuffix(s, "`"+ellipsis) {
		t.Fatalf("a cut value does not end with its closed span and …: %q", s[max(0, len(s)-20):])
	}
	l, err := readInline(strings.TrimSuffix(s, ellipsis))
	if err != nil || len(l.spans) != 1 {
		t.Fatalf("the cut span does not read as one span: %v %q", err, s)
	}
	if full := screentext.Field(v); !strings.HasPrefix(full, l.spans[0]) || len(l.spans[0]) > maxValue || !strings.HasSuffix(l.spans[0], "`") {
		t.Errorf("the span holds %q, which is not a prefix of the escaped value cut between whole escapes", l.spans[0])
	}
}

// TestPlainTextReadsAsItsSentenceAndOpensNothing checks mdText: it reads
// back as screentext.Sentence of the value (its edge spaces dropped), and
// what stays active holds no character that opens markdown or names
// anyone.
func TestPlainTextReadsAsItsSentenceAndOpensNothing(t *testing.T) {
	for _, v := range awkward {
		l, err := readInline("x " + mdText(v))
		if err != nil {
			t.Fatalf("mdText(%q) = %q: %v", v, mdText(v), err)
		}
		if want := "x " + strings.Trim(screentext.Sentence(v), " "); l.shown != want {
			t.Errorf("mdText(%q) reads as %q, want %q", v, l.shown, want)
		}
		if i := strings.IndexFunc(l.active, func(r rune) bool { return r < 0x80 && asciiPunct(byte(r)) }); i >= 0 {
			t.Errorf("mdText(%q) = %q leaves %q active", v, mdText(v), l.active[i])
		}
	}
}

// TestAFenceHoldsItsContentWhole checks mdFence: the block opens and
// closes once, and every line of the content is read as code, as it is.
func TestAFenceHoldsItsContentWhole(t *testing.T) {
	for _, v := range awkward {
		content := screentext.Text(v) + "\n" + strings.Repeat("`", 5) + "\n~~~~\n"
		lines, err := readMarkdown(mdFence(content))
		if err != nil {
			t.Fatalf("mdFence(%q): %v", content, err)
		}
		var got []string
		for _, l := range lines {
			if l.kind == "code" {
				got = append(got, l.shown)
			}
		}
		if s := skeleton(lines); s != "fence code end blank " {
			t.Fatalf("mdFence(%q) reads as %s", content, s)
		}
		if strings.Join(got, "\n")+"\n" != content {
			t.Errorf("mdFence(%q) holds %q", content, got)
		}
	}
}
