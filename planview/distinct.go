package planview

import (
	"strings"
	"unicode/utf8"
)

// windowContext is how many units of text a window shows before the first
// difference of two values.
const windowContext = 24

// distinct returns the renderings of two values that differ, each of at
// most limit runes: cutB and cutA, their renderings bounded from the
// start, when those differ; else (both were cut before their first
// difference, or summarised alike) windows of their whole renderings,
// which full makes, each starting windowContext units before the first
// difference, "…" marking where a window cuts the text. A unit is a rune,
// or a whole backslash escape (\", \n, \x01, \u00a0, \U0001f600), so a
// window never starts or ends inside one.
//
// Equal whole renderings are returned as cutB and cutA: what tells the
// values apart is then not in their text.
func distinct(cutB, cutA string, full func() (string, string), limit int) (string, string) {
	if cutB != cutA {
		return cutB, cutA
	}
	fb, fa := full()
	if fb == fa {
		return cutB, cutA
	}
	// ends are the ends of the last windowContext units the two have in
	// common, before is the end of the one before them.
	var ends []int
	before, d := 0, 0
	for {
		ub, ua := unitLen(fb[d:]), unitLen(fa[d:])
		if ub == 0 || fb[d:d+ub] != fa[d:d+ua] {
			break
		}
		d += ub
		if ends = append(ends, d); len(ends) > windowContext {
			before, ends = ends[0], ends[1:]
		}
	}
	start := d
	for _, c := range append([]int{before}, ends...) {
		if utf8.RuneCountInString(fb[c:d]) <= limit/4 {
			start = c
			break
		}
	}
	return window(fb, start, limit), window(fa, start, limit)
}

// window is s from byte start (a unit boundary) to at most limit runes,
// "…" first when start is past the beginning and last when s goes on.
func window(s string, start, limit int) string {
	var b strings.Builder
	runes := 0
	if start > 0 {
		b.WriteString("…")
		runes++
	}
	for i := start; i < len(s); {
		u := unitLen(s[i:])
		n := utf8.RuneCountInString(s[i : i+u])
		if runes+n > limit-1 && i+u < len(s) || runes+n > limit {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(s[i : i+u])
		runes += n
		i += u
	}
	return b.String()
}

// unitLen is the byte length of the unit at the start of s: a backslash
// escape as strconv.Quote and encoding/json write them, else a rune; 0 for
// an empty s.
func unitLen(s string) int {
	if s == "" {
		return 0
	}
	if s[0] == '\\' && len(s) > 1 {
		n := 2
		switch s[1] {
		case 'x':
			n = 4
		case 'u':
			n = 6
		case 'U':
			n = 10
		}
		return min(n, len(s))
	}
	_, w := utf8.DecodeRuneInString(s)
	return w
}
