package planview

import (
	"slices"
	"strings"

	"github.com/switchtender/switchtender/exec/mask"
)

// secrets are the values the plan marks sensitive anywhere: the parts of
// every change's before and after values that its before_sensitive and
// after_sensitive marks (no-ops, deletes and forgets included), output
// values marked sensitive, and the values of root module variables the
// configuration declares sensitive; and the values Build was told are
// secret (a run's masker's: secret answers, credentials). A value the view would show that holds
// one of them is shown as a sensitive path instead, even where the plan
// does not mark it: OpenTofu does not always carry the mark along (a
// terraform_data's output mirrors a sensitive input unmarked, and `tofu
// show` prints it).
type secrets struct {
	// values holds every sensitive string, and the text of every
	// sensitive number.
	values map[string]bool
	// marked counts the values the plan marks (not those Build was told
	// of): the changes listed as the plan was read are listed again once
	// there is one.
	marked int
	// masker finds the values of mask.MinLen bytes or more inside a longer
	// string, in the encodings it knows; nil when there are none. sealed
	// is how many values it was made with.
	masker *mask.Masker
	sealed int
}

// know adds the values the caller knows to be secret (Build's known) and
// readies the masker with them, before the plan is read.
func (s *secrets) know(known []string) {
	for _, v := range known {
		if v != "" {
			if s.values == nil {
				s.values = map[string]bool{}
			}
			s.values[v] = true
		}
	}
	s.seal()
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

// addAll adds every string, number and object key in v (booleans are one
// bit, and null none).
func (s *secrets) addAll(v *node) {
	switch v.kind {
	case kindString, kindNumber:
		s.add(v.str)
	case kindObject, kindArray:
		for _, k := range v.keys {
			s.add(k)
		}
		for _, k := range v.kids {
			s.addAll(k)
		}
	}
}

func (s *secrets) add(v []byte) {
	if len(v) == 0 {
		return
	}
	if s.values == nil {
		s.values = map[string]bool{}
	}
	if !s.values[string(v)] {
		s.values[string(v)] = true
		s.marked++
	}
}

// seal readies the masker once every secret is known (again only when a
// value was added since it was last made).
func (s *secrets) seal() {
	if len(s.values) == 0 || len(s.values) == s.sealed {
		return
	}
	s.masker = mask.New()
	for v := range s.values {
		s.masker.Add(v)
	}
	s.sealed = len(s.values)
}

// holds reports whether v holds a secret: a string or number equal to one,
// a string with one of mask.MinLen bytes or more inside it, a multi-line
// string with a line equal to one, a string holding a JSON document that
// holds one, or a collection with such a part or key.
func (s *secrets) holds(v *node) bool {
	if s == nil || len(s.values) == 0 || v == nil {
		return false
	}
	switch v.kind {
	case kindString:
		return s.inString(v.str)
	case kindNumber:
		return s.values[string(v.str)]
	case kindObject, kindArray:
		return s.inKeys(v) || slices.ContainsFunc(v.kids, s.holds)
	}
	return false
}

// inKeys reports whether a key of the object v (not below it) is or holds
// a secret.
func (s *secrets) inKeys(v *node) bool {
	return s != nil && len(s.values) > 0 && v != nil && slices.ContainsFunc(v.keys, s.inString)
}

func (s *secrets) inString(b []byte) bool {
	if s.values[string(b)] {
		return true
	}
	text := string(b)
	return s.masker.String(text) != text || s.inLines(text) || s.inJSON(text)
}

// inLines reports whether a multi-line string has a line that, trimmed of
// white space, is a secret: a line diff shows each line whole, so a secret
// too short for the masker would be shown as one.
func (s *secrets) inLines(text string) bool {
	if !strings.ContainsAny(text, "\n\r") {
		return false
	}
	for line := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if s.values[strings.TrimSpace(line)] {
			return true
		}
	}
	return false
}

// inJSON reports whether a string holding a JSON object or array (a
// jsonencode result) holds a secret as one of its values or keys: a JSON
// diff shows each of them whole, so a secret too short for the masker, or
// a number, would be shown as one.
func (s *secrets) inJSON(text string) bool {
	if !looksLikeJSONContainer(text) {
		return false
	}
	v, ambiguous, err := parseDocument(text)
	if err == nil && ambiguous {
		// A repeated key: the tree keeps its last value, the view shows
		// the document as text, so any secret could be in what the tree
		// dropped.
		return len(s.values) > 0
	}
	return err == nil && s.holds(v)
}

// scrub masks every secret of mask.MinLen bytes or more left in a string
// of the change set (addresses, paths, map keys): the last guard after the
// walk has kept values holding secrets out.
func (s *secrets) scrub(cs *ChangeSet) {
	if s.masker != nil {
		cs.Mask(s.masker.String)
	}
}
