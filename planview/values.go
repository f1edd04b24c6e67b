package planview

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxValueRunes bounds a rendered value: a longer one is cut, ending with
// "…" (a string), or summarised by its size (a collection).
const maxValueRunes = 200

// Placeholders written inside a rendered collection in place of a part
// that is sensitive or not known until apply, as OpenTofu prints them.
const (
	sensitivePlaceholder = "(sensitive value)"
	unknownPlaceholder   = "(known after apply)"
)

// renderValue renders v as an OpenTofu literal of at most maxValueRunes
// runes: "x" quoted with Go escaping (quotes, backslashes and control
// characters, not printable non-ASCII), numbers as the JSON wrote them,
// true, false, null, ["a", "b"], { a = 1, "b c" = 2 }. Parts that sens marks
// sensitive, or unk unknown, are written as placeholders, never as values.
// A nil v (absent) renders as "". The result never shares memory with the
// plan document.
func renderValue(v, sens, unk *node) string {
	switch {
	case sens.isTrue():
		return sensitivePlaceholder
	case unk.isTrue():
		return unknownPlaceholder
	case v == nil:
		return ""
	case v.kind == kindString:
		return quoteBounded(v.text(), maxValueRunes)
	case v.kind == kindNull:
		return "null"
	case v.kind == kindBool || v.kind == kindNumber:
		return cutRunes(v.text(), maxValueRunes)
	}
	var b strings.Builder
	if writeValue(&b, v, sens, unk, maxValueRunes*4) && utf8.RuneCountInString(b.String()) <= maxValueRunes {
		return b.String()
	}
	return summary(v)
}

// renderWhole renders v as renderValue does, but whole: no string is cut
// and no collection summarised. It is for telling apart two values whose
// bounded renderings read the same (see distinct).
func renderWhole(v, sens, unk *node) string {
	switch {
	case sens.isTrue():
		return sensitivePlaceholder
	case unk.isTrue():
		return unknownPlaceholder
	case v == nil:
		return ""
	case v.kind == kindString:
		return strconv.Quote(v.text())
	}
	var b strings.Builder
	writeValue(&b, v, sens, unk, 0)
	return b.String()
}

// summary names a collection too long to show by its size.
func summary(v *node) string {
	n := len(v.kids)
	if v.kind == kindArray {
		return "[…" + countNoun(n, "element") + "]"
	}
	return "{…" + countNoun(n, "attribute") + "}"
}

func countNoun(n int, what string) string {
	return strconv.Itoa(n) + " " + what + plural(n)
}

// writeValue writes v inline, returning false once b passes limit bytes
// (0: no limit).
func writeValue(b *strings.Builder, v, sens, unk *node, limit int) bool {
	if over(b, limit) {
		return false
	}
	switch {
	case sens.isTrue():
		b.WriteString(sensitivePlaceholder)
	case unk.isTrue():
		b.WriteString(unknownPlaceholder)
	case v == nil || v.kind == kindNull:
		b.WriteString("null")
	case v.kind == kindString:
		writeQuoted(b, v.str)
	case v.kind == kindBool || v.kind == kindNumber:
		b.Write(v.str)
	case v.kind == kindArray:
		return writeArray(b, v, sens, unk, limit)
	default:
		return writeObject(b, v, sens, unk, limit)
	}
	return !over(b, limit)
}

// over reports whether b passed limit bytes (0: no limit).
func over(b *strings.Builder, limit int) bool { return limit > 0 && b.Len() > limit }

func writeArray(b *strings.Builder, v, sens, unk *node, limit int) bool {
	b.WriteByte('[')
	for i, k := range v.kids {
		if i > 0 {
			b.WriteString(", ")
		}
		if !writeValue(b, k, sens.elem(i), unk.elem(i), limit) {
			return false
		}
	}
	b.WriteByte(']')
	return !over(b, limit)
}

func writeObject(b *strings.Builder, v, sens, unk *node, limit int) bool {
	if len(v.kids) == 0 {
		b.WriteString("{}")
		return true
	}
	b.WriteString("{ ")
	for i, k := range v.kids {
		if i > 0 {
			b.WriteString(", ")
		}
		key := v.keys[i]
		if isIdentifier(key) {
			b.Write(key)
		} else {
			b.WriteString(strconv.Quote(string(key)))
		}
		b.WriteString(" = ")
		if !writeValue(b, k, sens.member(key), unk.member(key), limit) {
			return false
		}
	}
	b.WriteString(" }")
	return !over(b, limit)
}

// quoteBounded quotes s (strconv.Quote); when the result would pass limit
// runes, s is cut between runes and the result ends with "…" instead of a
// closing quote.
func quoteBounded(s string, limit int) string {
	if len(s) <= limit-2 && plainASCII(s) {
		return `"` + s + `"`
	}
	if len(s) <= limit {
		if q := strconv.Quote(s); utf8.RuneCountInString(q) <= limit {
			return q
		}
	}
	var b strings.Builder
	b.WriteByte('"')
	runes := 1
	for i := 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		piece := strconv.Quote(s[i : i+w])
		piece = piece[1 : len(piece)-1]
		n := utf8.RuneCountInString(piece)
		if runes+n+1 > limit {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		runes += n
		i += w
	}
	b.WriteByte('"')
	return b.String()
}

// plainASCII reports whether strconv.Quote leaves every byte of s as it
// is: printable ASCII other than a quote or backslash.
func plainASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// writeQuoted writes s quoted as strconv.Quote does.
func writeQuoted(b *strings.Builder, s []byte) {
	if !plainASCII(s) {
		b.WriteString(strconv.Quote(string(s)))
		return
	}
	b.WriteByte('"')
	b.Write(s)
	b.WriteByte('"')
}

// cutRunes returns s, or its first limit-1 runes and "…" when it is longer
// than limit runes.
func cutRunes(s string, limit int) string {
	if len(s) <= limit || utf8.RuneCountInString(s) <= limit {
		return s
	}
	i := 0
	for range limit - 1 {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return strings.Clone(s[:i]) + "…"
}

// isIdentifier reports whether s can follow a dot in a path: an ASCII
// letter or underscore, then letters, digits and underscores. (OpenTofu
// allows dashes too; a key with one is written ["a-b"], which reads the same
// and cannot be mistaken for a subtraction.)
func isIdentifier(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// step is one step of an attribute path: an object or map key, or a list,
// tuple or set index.
type step struct {
	key   []byte
	index int // when isIdx
	isIdx bool
}

func (s step) equal(t step) bool {
	return s.isIdx == t.isIdx && s.index == t.index && bytes.Equal(s.key, t.key)
}

// formatPath writes a path in OpenTofu's expression form after root (""
// for a resource attribute, "$" for a JSON path): input.name, rule[0].port,
// tags["a b"]. A key that is not an identifier is written ["..."]. The plan
// JSON does not say whether a key is a map's or an object's, so a map key
// that is an identifier is written .key, which OpenTofu reads the same as
// ["key"].
func formatPath(root string, steps []step) string {
	var b strings.Builder
	b.WriteString(root)
	for i, s := range steps {
		switch {
		case s.isIdx:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case isIdentifier(s.key):
			if i > 0 || root != "" {
				b.WriteByte('.')
			}
			b.Write(s.key)
		default:
			b.WriteString("[")
			b.WriteString(strconv.Quote(string(s.key)))
			b.WriteString("]")
		}
	}
	return b.String()
}

// leafCount counts the non-null leaves of v, an empty collection counting
// as one.
func leafCount(v *node) int {
	if v.isNull() {
		return 0
	}
	if !v.container() {
		return 1
	}
	if len(v.kids) == 0 {
		return 1
	}
	n := 0
	for _, k := range v.kids {
		n += leafCount(k)
	}
	return n
}

// equalValues reports whether a and b are the same JSON value (members are
// sorted, so key order does not matter; numbers compare by their text, as
// OpenTofu writes one number one way).
func equalValues(a, b *node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if bytes.Equal(a.raw, b.raw) {
		return true
	}
	if a.kind != b.kind || !bytes.Equal(a.str, b.str) || len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if a.kind == kindObject && !bytes.Equal(a.keys[i], b.keys[i]) {
			return false
		}
		if !equalValues(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}
