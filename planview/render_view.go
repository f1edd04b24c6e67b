package planview

import (
	"slices"
	"strings"
	"sync"

	"github.com/switchtender/switchtender/screentext"
)

// Kind is what an item of a [View] is.
type Kind uint8

// Kinds of item, in the order a view lists them.
const (
	KindCounts   Kind = iota // the counts: what destroys, what leaves state, what else changes
	KindSection              // a section's heading (a blank line first)
	KindResource             // one resource instance change
	KindOutput               // one root module output that changes
	KindDrift                // one resource changed outside OpenTofu
	KindNone                 // "No changes." of a change set without any
)

// View is a change set laid out for reading, risk first: the counts, then
// each section that has changes (replaced, deleted, forgotten, forgotten
// then created, updated, created, read, imported, moved), the outputs and
// the drift, each a heading and one item a change. Every door draws it: a
// door asks for the lines of the items it shows (Lines), folded or whole,
// and wraps them to its width (Wrap); [Text] is every item whole.
//
// NewView costs one pass over the change set; an item's lines are made
// when asked for, so a door showing a screen of a plan of 10,000 changes
// makes a screen of lines. A View only reads its change set (which must
// not change under it) and is safe for concurrent use.
type View struct {
	cs       *ChangeSet
	items    []item
	looks    map[string]screentext.Lookalike
	keysOnce sync.Once
	keys     []string // keys[i] is item i's filter key, lower case (built by Filter's first call)
}

type item struct {
	kind    Kind
	section string
	n       int // KindSection: changes it lists; else the index in Resources, Outputs or Drift
}

// NewView lays out cs (nil: an empty change set).
func NewView(cs *ChangeSet) *View {
	if cs == nil {
		cs = &ChangeSet{}
	}
	v := &View{cs: cs, items: []item{{kind: KindCounts}}}
	buckets := map[string][]int{}
	for i := range cs.Resources {
		s := cs.Resources[i].Section
		if !slices.Contains(Sections, s) {
			s = sectionOther
		}
		buckets[s] = append(buckets[s], i)
	}
	for _, s := range append(slices.Clone(Sections), sectionOther) {
		v.add(s, KindResource, buckets[s])
	}
	v.add(sectionOutputs, KindOutput, seq(len(cs.Outputs)))
	v.add(sectionDrift, KindDrift, seq(len(cs.Drift)))
	if len(v.items) == 1 {
		v.items = append(v.items, item{kind: KindNone})
	}
	v.looks = lookalikes(cs)
	return v
}

func (v *View) add(section string, k Kind, idx []int) {
	if len(idx) == 0 {
		return
	}
	v.items = append(v.items, item{kind: KindSection, section: section, n: len(idx)})
	for _, i := range idx {
		v.items = append(v.items, item{kind: k, section: section, n: i})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// lookalikes marks the addresses of cs a person could take for another
// (screentext.Lookalikes over every address, old addresses and drift).
// Addresses of printable ASCII alone cannot be: each reads as itself and
// none as another, so a change set of only those skips the comparison.
func lookalikes(cs *ChangeSet) map[string]screentext.Lookalike {
	var all []string
	plain := true
	for _, rs := range [][]Resource{cs.Resources, cs.Drift} {
		for i := range rs {
			all = append(all, rs[i].Address)
			plain = plain && printableASCII(rs[i].Address) && printableASCII(rs[i].PreviousAddress)
			if rs[i].PreviousAddress != "" {
				all = append(all, rs[i].PreviousAddress)
			}
		}
	}
	out := map[string]screentext.Lookalike{}
	if plain {
		return out
	}
	for _, l := range screentext.Lookalikes(all) {
		out[l.Address] = l
	}
	return out
}

// printableASCII reports whether s is all printable ASCII (U+0020 to U+007E).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Len is how many items the view has.
func (v *View) Len() int { return len(v.items) }

// Kind is item i's kind.
func (v *View) Kind(i int) Kind { return v.items[i].kind }

// Section is the section item i is in ("" for the counts), one of the
// Section* constants, or "outputs", "drift" or "other".
func (v *View) Section(i int) string { return v.items[i].section }

// Resource is the change item i shows (a KindResource or KindDrift item),
// else nil.
func (v *View) Resource(i int) *Resource {
	switch it := v.items[i]; it.kind {
	case KindResource:
		return &v.cs.Resources[it.n]
	case KindDrift:
		return &v.cs.Drift[it.n]
	}
	return nil
}

// Expandable reports whether item i has more lines whole than folded.
func (v *View) Expandable(i int) bool { return len(v.body(i)) > 0 }

// Lines is item i's lines, folded (its head: the mark and address, why
// it happens and what forces it, and a lookalike mark) or whole (with
// every changed attribute and the count of unchanged ones).
func (v *View) Lines(i int, whole bool) []Line {
	h := v.head(i)
	if !whole {
		return h
	}
	return append(h, v.body(i)...)
}

// head is item i's folded lines.
func (v *View) head(i int) []Line {
	it := v.items[i]
	switch it.kind {
	case KindCounts:
		return countLines(v.cs.Counts)
	case KindSection:
		return []Line{{}, heading(it.section, it.n)}
	case KindNone:
		return []Line{{Role: RoleHeading, Text: "No changes: the plan changes no resource, no output, and found no drift."}}
	case KindOutput:
		return v.outputLines(it.n)[:1]
	}
	r := v.Resource(i)
	out := []Line{{Role: headRole(r.Section), Indent: 2, Text: headText(r)}}
	if it.kind == KindDrift {
		out[0].Role = RoleChanged
	}
	out = append(out, noteLines(r)...)
	for _, a := range []string{r.Address, r.PreviousAddress} {
		if l, ok := v.looks[a]; ok && a != "" {
			out = append(out, Line{Role: RoleWarning, Indent: 6, Text: "! " + screentext.Field(a) + " " + l.String()})
		}
	}
	return out
}

// body is what item i adds when whole.
func (v *View) body(i int) []Line {
	it := v.items[i]
	switch it.kind {
	case KindOutput:
		return v.outputLines(it.n)[1:]
	case KindResource, KindDrift:
	default:
		return nil
	}
	r := v.Resource(i)
	var out []Line
	for j := range r.Attributes {
		out = append(out, attrLines(&r.Attributes[j], 6)...)
	}
	if r.Unchanged > 0 {
		out = append(out, hiddenLine(r.Unchanged, 6))
	}
	return out
}

// outputLines are output n's change: its first line is the head.
func (v *View) outputLines(n int) []Line {
	o := v.cs.Outputs[n]
	a := o.Change
	a.Path = o.Name
	ls := attrLines(&a, 2)
	if len(o.Actions) == 1 && o.Actions[0] == "delete" && !a.Sensitive && a.JSON == nil && len(a.Lines) == 0 {
		ls[0].Role = RoleRemoved
	}
	return ls
}

// Filter is the items to show for an address filter: every item when q
// is empty (or only spaces), else the counts, the resources, outputs and
// drift whose address (old address, output name) as shown holds q,
// ignoring case, and the headings of their sections.
func (v *View) Filter(q string) []int {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		return seq(len(v.items))
	}
	v.keysOnce.Do(v.buildKeys)
	out := []int{0}
	head := -1
	for i := 1; i < len(v.items); i++ {
		switch {
		case v.items[i].kind == KindSection:
			head = i
		case strings.Contains(v.keys[i], q):
			if head >= 0 {
				out = append(out, head)
				head = -1
			}
			out = append(out, i)
		}
	}
	return out
}

// Matches counts the changes (resources, outputs, drift) among items.
func (v *View) Matches(items []int) int {
	n := 0
	for _, i := range items {
		switch v.items[i].kind {
		case KindResource, KindOutput, KindDrift:
			n++
		}
	}
	return n
}

// buildKeys makes each item's filter key once.
func (v *View) buildKeys() {
	keys := make([]string, len(v.items))
	for i, it := range v.items {
		switch it.kind {
		case KindResource, KindDrift:
			r := v.Resource(i)
			keys[i] = strings.ToLower(screentext.Field(r.Address) + "\n" + screentext.Field(r.PreviousAddress))
		case KindOutput:
			keys[i] = strings.ToLower(screentext.Field(v.cs.Outputs[it.n].Name))
		}
	}
	v.keys = keys
}
