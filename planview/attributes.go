package planview

import (
	"bytes"
	"strconv"
	"strings"
)

// walker lists the attribute paths that change between a change's before
// and after values.
type walker struct {
	fp        Fingerprinter
	secrets   *secrets // values shown as sensitive wherever they are
	replace   [][]step // replace_paths
	path      []step
	attrs     []Attribute
	unchanged int
}

// walk compares b and a (nil: absent) at w.path. unk is the after_unknown
// mark tree there, bs and as the before_sensitive and after_sensitive mark
// trees: each nil, a bool, or an object or array of them mirroring the
// value.
func (w *walker) walk(b, a, unk, bs, as *node) {
	switch {
	case bs.isTrue() || as.isTrue():
		w.sensitive(b, a, unk)
	case unk.isTrue():
		w.unknown(b, bs)
	case b != nil && a != nil && bytes.Equal(b.raw, a.raw) && !unk.anyTrue() && !bs.anyTrue() && !as.anyTrue():
		w.unchanged += leafCount(b)
	case descends(b, a, bs, as) && (w.secrets.inKeys(b) || w.secrets.inKeys(a)):
		w.sensitive(b, a, unk) // its paths would show the secret
	case descends(b, a, bs, as):
		w.children(b, a, unk, bs, as)
	default:
		w.leaf(b, a, unk, bs, as)
	}
}

// descends reports whether the walk goes on below a pair of values: both
// are collections of the same kind and not both empty, or one is a
// non-empty collection and the other is absent (a create), or null with
// sensitive parts in the collection (so that each is listed, not shown).
func descends(b, a, bs, as *node) bool {
	if !b.container() && !a.container() {
		return false
	}
	if b.container() && a.container() {
		return b.kind == a.kind && (len(b.kids) > 0 || len(a.kids) > 0)
	}
	c, other, marks := b, a, bs
	if a.container() {
		c, other, marks = a, b, as
	}
	if len(c.kids) == 0 {
		return false
	}
	return other == nil || other.kind == kindNull && marks.anyTrue()
}

// children walks the members or elements of b, a and unk.
func (w *walker) children(b, a, unk, bs, as *node) {
	k := b
	if !k.container() {
		k = a
	}
	if k.kind == kindArray {
		n := max(len(b.kidsOf(kindArray)), len(a.kidsOf(kindArray)), len(unk.kidsOf(kindArray)))
		for i := range n {
			w.path = append(w.path, step{index: i, isIdx: true})
			w.walk(b.elem(i), a.elem(i), unk.elem(i), bs.elem(i), as.elem(i))
			w.path = w.path[:len(w.path)-1]
		}
		return
	}
	mergeKeys(func(key []byte) {
		w.path = append(w.path, step{key: key})
		w.walk(b.member(key), a.member(key), unk.member(key), bs.member(key), as.member(key))
		w.path = w.path[:len(w.path)-1]
	}, b.keysOf(), a.keysOf(), unk.keysOf())
}

func (n *node) kidsOf(k kind) []*node {
	if n == nil || n.kind != k {
		return nil
	}
	return n.kids
}

func (n *node) keysOf() [][]byte {
	if n == nil || n.kind != kindObject {
		return nil
	}
	return n.keys
}

// mergeKeys calls fn once with each key of the sorted lists, in order.
func mergeKeys(fn func([]byte), lists ...[][]byte) {
	for {
		var next []byte
		found := false
		for _, l := range lists {
			if len(l) > 0 && (!found || bytes.Compare(l[0], next) < 0) {
				next, found = l[0], true
			}
		}
		if !found {
			return
		}
		fn(next)
		for i, l := range lists {
			if len(l) > 0 && bytes.Equal(l[0], next) {
				lists[i] = l[1:]
			}
		}
	}
}

// unknown lists a path whose after value is not known until apply. A
// before value holding a secret, or with parts bs marks sensitive, is
// listed path by path, each part holding one or marked as sensitive.
func (w *walker) unknown(b, bs *node) {
	if bs.isTrue() {
		w.sensitive(b, nil, trueNode)
		return
	}
	if !w.secrets.holds(b) && !bs.anyTrue() {
		w.emit(Attribute{Before: renderValue(b, bs, nil), Unknown: true})
		return
	}
	if !b.container() || len(b.kids) == 0 || w.secrets.inKeys(b) {
		w.sensitive(b, nil, trueNode)
		return
	}
	for i, k := range b.kids {
		if b.kind == kindArray {
			w.path = append(w.path, step{index: i, isIdx: true})
			w.unknown(k, bs.elem(i))
		} else {
			w.path = append(w.path, step{key: b.keys[i]})
			w.unknown(k, bs.member(b.keys[i]))
		}
		w.path = w.path[:len(w.path)-1]
	}
}

// leaf compares two values the walk does not go below.
func (w *walker) leaf(b, a, unk, bs, as *node) {
	switch {
	case b.isNull() && a.isNull():
		return
	case equalValues(b, a):
		w.unchanged += leafCount(b)
		return
	case w.secrets.holds(b) || w.secrets.holds(a):
		w.sensitive(b, a, unk)
		return
	case b != nil && a != nil && b.kind == kindString && a.kind == kindString && !unk.anyTrue():
		w.emit(stringChange(b.text(), a.text()))
		return
	}
	before, after := distinct(renderValue(b, bs, nil), renderValue(a, as, unk), func() (string, string) {
		return renderWhole(b, bs, nil), renderWhole(a, as, unk)
	}, maxValueRunes)
	w.emit(Attribute{Before: before, After: after})
}

// sensitive lists a path marked sensitive on either side: whether it
// changed and the fingerprints of the whole values, never the values. An
// after value not known in full until apply has no fingerprint, and counts
// as changed. A path null or absent on both sides is left out.
func (w *walker) sensitive(b, a, unk *node) {
	if b.isNull() && a.isNull() && !unk.anyTrue() {
		return
	}
	at := Attribute{Sensitive: true, Unknown: unk.anyTrue()}
	if !b.isNull() {
		at.BeforeFingerprint = w.fp.fingerprint(b)
	}
	if !a.isNull() && !at.Unknown {
		at.AfterFingerprint = w.fp.fingerprint(a)
	}
	at.Changed = at.Unknown || at.BeforeFingerprint != at.AfterFingerprint || !equalValues(nullToAbsent(b), nullToAbsent(a))
	w.emit(at)
}

func nullToAbsent(n *node) *node {
	if n.isNull() {
		return nil
	}
	return n
}

// emit adds at at the current path.
func (w *walker) emit(at Attribute) {
	at.Path = formatPath("", w.path)
	at.ForcesReplacement = w.forces()
	w.attrs = append(w.attrs, at)
}

// forces reports whether the current path is, is under, or is above one of
// the replace_paths.
func (w *walker) forces() bool {
	for _, rp := range w.replace {
		n := min(len(rp), len(w.path))
		same := true
		for i := range n {
			if !rp[i].equal(w.path[i]) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// replacePaths reads a change's replace_paths: an array of paths, each an
// array of keys (strings) and indexes (numbers). Anything else in it is
// left out: the paths are for display.
func replacePaths(v *node) [][]step {
	var out [][]step
	for _, p := range v.kidsOf(kindArray) {
		var path []step
		ok := p != nil && p.kind == kindArray
		for _, s := range p.kidsOf(kindArray) {
			switch s.kind {
			case kindString:
				path = append(path, step{key: s.str})
			case kindNumber:
				i, err := strconv.Atoi(s.text())
				ok = ok && err == nil
				path = append(path, step{index: i, isIdx: true})
			default:
				ok = false
			}
		}
		if ok {
			out = append(out, path)
		}
	}
	return out
}

// stringChange compares two strings that differ: structurally when both
// hold a JSON object or array, as a line diff when either is long, else as
// the two quoted values.
func stringChange(before, after string) Attribute {
	if d := jsonDiff(before, after); d != nil {
		return Attribute{JSON: d}
	}
	if isLong(before) || isLong(after) {
		return Attribute{Lines: lineDiff(before, after)}
	}
	b, a := distinct(quoteBounded(before, maxValueRunes), quoteBounded(after, maxValueRunes), func() (string, string) {
		return strconv.Quote(before), strconv.Quote(after)
	}, maxValueRunes)
	return Attribute{Before: b, After: a}
}

// longString is the length past which a one-line string gets a line diff.
const longString = 120

func isLong(s string) bool { return len(s) > longString || strings.Contains(s, "\n") }
