package planview

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// randomText is words (letters and digits, some wide, some long), joined
// by single spaces, with punctuation, escapes and addresses among them.
func randomText(rng *rand.Rand) string {
	pieces := []string{"terraform_data.web", `tags["env"]`, `\u{202e}`, `\x1b`, `\\`, "->", "=", "(known after apply)",
		"字字字", "é", `"lorem-ipsum-dolor-sit-amet-consectetur"`, `module.a.module.b.aws_s3_bucket.logs["eu-west-1"]`,
		`{"Effect":"Allow","Resource":"*"}`}
	var words []string
	for n := 1 + rng.IntN(14); len(words) < n; {
		switch rng.IntN(3) {
		case 0:
			words = append(words, pieces[rng.IntN(len(pieces))])
		case 1:
			words = append(words, strings.Repeat("ab1", 1+rng.IntN(12)))
		default:
			words = append(words, pieces[rng.IntN(len(pieces))]+strings.Repeat("x", rng.IntN(40)))
		}
	}
	return strings.Join(words, " ")
}

// TestNoLineWrapsInTheMiddleOfAWord wraps random lines at random widths
// and checks each result: every line fits the width; together the lines
// are the text less the spaces at the breaks; a break not at a space
// never falls between two letters or digits unless their run alone is
// wider than a line, and never inside an escape.
func TestNoLineWrapsInTheMiddleOfAWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		l := Line{Indent: rng.IntN(12), Text: randomText(rng)}
		width := 10 + rng.IntN(90)
		checkWrap(t, l, width, Wrap(l, width))
	}
}

// checkWrap checks the lines Wrap made of l at width.
func checkWrap(t *testing.T, l Line, width int, out []Line) {
	t.Helper()
	pos := 0
	for k, o := range out {
		if o.Width() > width {
			t.Fatalf("width %d: line %q is %d cells wide", width, o.String(), o.Width())
		}
		if o.Role != l.Role {
			t.Fatalf("a wrapped line lost its role")
		}
		atSpace := false
		for k > 0 && pos < len(l.Text) && l.Text[pos] == ' ' {
			pos, atSpace = pos+1, true
		}
		if k > 0 && !strings.HasPrefix(o.Text, Continued) {
			t.Fatalf("width %d: wrapped line %d %q does not begin with %q", width, k, o.Text, Continued)
		}
		if k > 0 {
			o.Text = strings.TrimPrefix(o.Text, Continued)
		}
		if !strings.HasPrefix(l.Text[pos:], o.Text) {
			t.Fatalf("width %d: line %d %q is not the text's next part %q", width, k, o.Text, l.Text[pos:])
		}
		if k > 0 && !atSpace {
			checkWordBreak(t, l.Text, pos, width-o.Indent-continuedCells)
		}
		pos += len(o.Text)
	}
	if strings.TrimLeft(l.Text[pos:], " ") != "" {
		t.Fatalf("width %d: the text after %q is lost", width, l.Text[:pos])
	}
}

// checkWordBreak checks a break at byte pos of text that is not at a
// space: at the boundary of two units (a cluster, or an escape, which is
// one unit), and between two word characters only when the run of units
// joined by word characters is wider than avail.
func checkWordBreak(t *testing.T, text string, pos, avail int) {
	t.Helper()
	type unit struct{ at, cells int }
	var units []unit
	k := -1 // the unit the break is before
	for i := 0; i < len(text); {
		u, w := escapeOrCluster(text[i:])
		if i == pos {
			k = len(units)
		}
		if i < pos && i+len(u) > pos {
			t.Fatalf("a break inside %q: %q|%q", u, text[:pos], text[pos:])
		}
		units = append(units, unit{i, w})
		i += len(u)
	}
	joined := func(j int) bool { // units j-1 and j are joined by word characters
		p, _ := utf8.DecodeLastRuneInString(text[units[j-1].at:units[j].at])
		n, _ := utf8.DecodeRuneInString(text[units[j].at:])
		return wordRune(p) && wordRune(n)
	}
	if !joined(k) {
		return
	}
	lo, hi := k-1, k
	for lo > 0 && joined(lo) {
		lo--
	}
	for hi+1 < len(units) && joined(hi+1) {
		hi++
	}
	cells := 0
	for _, u := range units[lo : hi+1] {
		cells += u.cells
	}
	if cells <= avail {
		t.Fatalf("a break inside a word of %d cells (%d fit): %q|%q", cells, avail, text[:pos], text[pos:])
	}
}

// TestWrappedLinesKeepTheirIndentation checks that the first line keeps
// its indentation and the rest hang deeper after the mark of a continued
// line, and that a line too deep for the width gives up indentation before
// text.
func TestWrappedLinesKeepTheirIndentation(t *testing.T) {
	out := Wrap(Line{Indent: 6, Text: "why: a change that cannot be made in place"}, 34)
	if len(out) != 2 || out[0].String() != "      why: a change that cannot be" || out[1].String() != "        ↪ made in place" {
		t.Fatalf("wrapped at 34: %q", out)
	}
	for _, o := range Wrap(Line{Indent: 40, Text: strings.Repeat("word ", 20)}, 44) {
		if o.Indent > 44-minText {
			t.Fatalf("a line indented %d at width 44 keeps %d cells of text", o.Indent, 44-o.Indent)
		}
	}
	if got := Wrap(Line{Indent: 2, Text: "fits"}, 0); len(got) != 1 || got[0].Text != "fits" {
		t.Fatalf("width 0 wrapped: %q", got)
	}
}
