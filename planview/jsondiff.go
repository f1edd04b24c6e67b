package planview

import (
	"strconv"
	"strings"
)

// maxJSONChanges bounds the changed paths a JSONDiff lists; JSONDiff.More
// counts the rest.
const maxJSONChanges = 100

// jsonDiff compares two strings structurally when both hold a JSON object
// or array (a policy document, a jsonencode result), else returns nil.
// Arrays compare element by element; objects by key, whatever the order.
// A document JSON readers could read differently (a repeated key, half a
// surrogate pair; see parser.ambiguous) is not compared structurally
// either: which of its readings the service takes is not known, so
// neither is whether only its form changed.
func jsonDiff(before, after string) *JSONDiff {
	if !looksLikeJSONContainer(before) || !looksLikeJSONContainer(after) {
		return nil
	}
	b, ambiguous, err := parseDocument(before)
	if err != nil || ambiguous || !b.container() {
		return nil
	}
	a, ambiguous, err := parseDocument(after)
	if err != nil || ambiguous || !a.container() {
		return nil
	}
	d := &jsonDiffer{}
	d.walk(b, a)
	if len(d.changes) == 0 && d.more == 0 {
		return &JSONDiff{FormatOnly: true}
	}
	return &JSONDiff{Changes: d.changes, More: d.more}
}

func looksLikeJSONContainer(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && (s[0] == '{' || s[0] == '[')
}

type jsonDiffer struct {
	path    []step
	changes []Attribute
	more    int
}

func (d *jsonDiffer) walk(b, a *node) {
	switch {
	case equalValues(b, a):
		return
	case b != nil && a != nil && b.kind == a.kind && b.kind == kindObject:
		mergeKeys(func(key []byte) {
			d.path = append(d.path, step{key: key})
			d.walk(b.member(key), a.member(key))
			d.path = d.path[:len(d.path)-1]
		}, b.keys, a.keys)
	case b != nil && a != nil && b.kind == a.kind && b.kind == kindArray:
		for i := range max(len(b.kids), len(a.kids)) {
			d.path = append(d.path, step{index: i, isIdx: true})
			d.walk(b.elem(i), a.elem(i))
			d.path = d.path[:len(d.path)-1]
		}
	default:
		if len(d.changes) == maxJSONChanges {
			d.more++
			return
		}
		before, after := distinct(renderJSON(b), renderJSON(a), func() (string, string) {
			return wholeJSON(b), wholeJSON(a)
		}, maxValueRunes)
		d.changes = append(d.changes, Attribute{Path: formatPath("$", d.path), Before: before, After: after})
	}
}

// renderJSON writes v as compact JSON of at most maxValueRunes runes ("" for
// absent): a longer string is cut ending with "…", a longer collection
// summarised by its size.
func renderJSON(v *node) string {
	switch {
	case v == nil:
		return ""
	case v.kind == kindString:
		return quoteBounded(v.text(), maxValueRunes)
	case !v.container():
		return cutRunes(string(v.raw), maxValueRunes)
	}
	out := canonicalJSON(v)
	if len(out) <= maxValueRunes {
		return string(out)
	}
	if v.kind == kindArray {
		return "[…" + countNoun(len(v.kids), "element") + "]"
	}
	return "{…" + countNoun(len(v.kids), "key") + "}"
}

// wholeJSON renders v as renderJSON does, but whole: no string is cut and
// no collection summarised (see distinct).
func wholeJSON(v *node) string {
	switch {
	case v == nil:
		return ""
	case v.kind == kindString:
		return strconv.Quote(v.text())
	case !v.container():
		return string(v.raw)
	}
	return string(canonicalJSON(v))
}
