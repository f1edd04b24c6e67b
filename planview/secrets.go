package planview

import (
	"github.com/switchtender/switchtender/exec/mask"
)

// secrets are the values the plan marks sensitive anywhere: the parts of
// every change's before and after values that its before_sensitive and
// after_sensitive marks (no-ops, deletes and forgets included), output
// values marked sensitive, and the values of root module variables the
// configuration declares sensitive. A value the view would show that holds
// one of them is shown as a sensitive path instead, even where the plan
// does not mark it: OpenTofu does not always carry the mark along (a
// terraform_data's output mirrors a sensitive input unmarked, and `tofu
// show` prints it).
type secrets struct {
	// values holds every sensitive string, and the text of every
	// sensitive number.
	values map[string]bool
	// masker finds the values of mask.MinLen bytes or more inside a longer
	// string, in the encodings it knows; nil when there are none.
	masker *mask.Masker
}

// collect adds the parts of v that marks (a bool, or an object or array of
// marks mirroring v) marks sensitive.
func (s *secrets) collect(v, marks *node) {
	if v == nil || marks == nil {
		return
	}
	if marks.isTrue() {
		s.addAll(v)
		return
	}
	switch v.kind {
	case kindObject:
		for i, k := range v.kids {
			s.collect(k, marks.member(v.keys[i]))
		}
	case kindArray:
		for i, k := range v.kids {
			s.collect(k, marks.elem(i))
		}
	}
}

// addAll adds every string and number in v (booleans are one bit, and null
// none).
func (s *secrets) addAll(v *node) {
	switch v.kind {
	case kindString, kindNumber:
		if len(v.str) > 0 {
			if s.values == nil {
				s.values = map[string]bool{}
			}
			s.values[string(v.str)] = true
		}
	case kindObject, kindArray:
		for _, k := range v.kids {
			s.addAll(k)
		}
	}
}

// seal readies the masker once every secret is known.
func (s *secrets) seal() {
	if len(s.values) == 0 {
		return
	}
	s.masker = mask.New()
	for v := range s.values {
		s.masker.Add(v)
	}
}

// holds reports whether v holds a secret: a string or number equal to one,
// a string with one of mask.MinLen bytes or more inside it, or a
// collection with such a part.
func (s *secrets) holds(v *node) bool {
	if s == nil || len(s.values) == 0 || v == nil {
		return false
	}
	switch v.kind {
	case kindString:
		if s.values[string(v.str)] {
			return true
		}
		text := string(v.str)
		return s.masker.String(text) != text
	case kindNumber:
		return s.values[string(v.str)]
	case kindObject, kindArray:
		for _, k := range v.kids {
			if s.holds(k) {
				return true
			}
		}
	}
	return false
}

// scrub masks every secret of mask.MinLen bytes or more left in a string
// of the change set (addresses, paths, map keys): the last guard after the
// walk has kept values holding secrets out.
func (s *secrets) scrub(cs *ChangeSet) {
	if s.masker != nil {
		cs.Mask(s.masker.String)
	}
}
