package planview

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// The values of a change, by their index in rawChange.values.
const (
	valBefore = iota
	valAfter
	valUnknown
	valBeforeSensitive
	valAfterSensitive
	valReplacePaths
	valCount
)

var valueKeys = [valCount]string{"before", "after", "after_unknown", "before_sensitive", "after_sensitive", "replace_paths"}

// span is where a value is in the document; the zero span is absent.
type span struct{ start, end int }

// rawChange is one resource_changes (or resource_drift) element as read:
// its strings, and where its values are, so they can be decoded once the
// whole document has said which values are sensitive.
type rawChange struct {
	address, previous, mode, deposed, reason string
	typ, provider                            string
	hasChange, importing                     bool
	actions                                  []string
	values                                   [valCount]span
	// nodes are the values decoded as they were read (see
	// builder.eager), or nil.
	nodes   [valCount]*node
	decoded bool
}

// pendingWalk is a change whose attributes are listed once the document
// has been read (or were listed as it was read, done): the Resource it
// fills and where its values are.
type pendingWalk struct {
	r      *Resource
	values [valCount]span
	done   bool
	// mirrors is true for a terraform_data, whose output is its input
	// (see mirroredMarks).
	mirrors bool
}

// at decodes the value at s, nil for the zero span, leaving p where it was.
func (p *parser) at(s span) (*node, error) {
	if s.end == 0 {
		return nil, nil
	}
	saved := p.pos
	p.pos = s.start
	v, err := p.value(3)
	p.pos = saved
	return v, err
}

// resourceChange reads element i of the list named list, adds its
// Resource to the change set (attributes to come, see walkPending) and
// collects the values its marks say are sensitive.
func (b *builder) resourceChange(list string, i int, drift bool) error {
	p := b.p
	p.reset()
	if p.peek() == 'n' {
		return fmt.Errorf("%s[%d] is null", list, i)
	}
	rc, err := b.readResourceChange()
	if err != nil {
		return fmt.Errorf("%s[%d]: %w", list, i, err)
	}
	if rc.address == "" || !rc.hasChange {
		return fmt.Errorf("%s[%d] has no address or no change", list, i)
	}
	if err := b.collectMarked(rc); err != nil {
		return fmt.Errorf("%s[%d] (%s): %w", list, i, rc.address, err)
	}
	if b.secrets.marked > 0 {
		b.eager = false
	}
	r, keep, err := b.resource(rc)
	if err != nil {
		return fmt.Errorf("%s[%d] (%s): %w", list, i, rc.address, err)
	}
	if keep {
		b.keep(r, rc, drift)
	}
	return nil
}

// readResourceChange reads the members of a resource change.
func (b *builder) readResourceChange() (*rawChange, error) {
	p := b.p
	rc := &rawChange{}
	var seen memberSet
	err := p.members(func(key []byte) error {
		if err := seen.once(key, changeMembers); err != nil {
			return err
		}
		var err error
		switch string(key) {
		case "address":
			rc.address, err = p.stringOrNull()
		case "previous_address":
			rc.previous, err = p.stringOrNull()
		case "mode":
			rc.mode, err = p.stringOrNull()
		case "deposed":
			rc.deposed, err = p.stringOrNull()
		case "action_reason":
			rc.reason, err = p.stringOrNull()
		case "type":
			rc.typ, err = p.stringOrNull()
		case "provider_name":
			rc.provider, err = p.stringOrNull()
		case "change":
			if p.peek() == 'n' {
				return p.literal("null")
			}
			rc.hasChange = true
			err = b.change(rc)
		default:
			err = p.skip(2)
		}
		return err
	})
	return rc, err
}

// keep adds r to the resources or the drift, and its change to the
// pending walks (listing its attributes now if the change was decoded and
// the plan has shown no secret yet).
func (b *builder) keep(r Resource, rc *rawChange, drift bool) {
	kept := &b.resourceArena.alloc(1)[0]
	*kept = r
	if drift {
		b.drift = append(b.drift, kept)
	} else {
		b.resources = append(b.resources, kept)
	}
	if listsAttributes(rc.actions) {
		pw := pendingWalk{r: kept, values: rc.values, mirrors: mirrorsInput(rc)}
		if b.eager && rc.decoded {
			b.walk(pw.r, rc.nodes, pw.mirrors)
			pw.done = true
		}
		b.pending = append(b.pending, pw)
	}
}

// change reads a change object into rc, checking its values and noting
// where they are.
func (b *builder) change(rc *rawChange) error {
	p := b.p
	known := false
	rc.decoded = b.eager
	var seen memberSet
	return p.members(func(key []byte) error {
		if err := seen.once(key, valueMembers); err != nil {
			return fmt.Errorf("change: %w", err)
		}
		switch string(key) {
		case "actions":
			known = true
			return p.nullOr(func() error {
				return p.elements(func() error {
					a, err := p.bytesOrNull()
					rc.actions = append(rc.actions, canonicalAction(a))
					return err
				})
			})
		case "importing":
			if p.peek() != 'n' {
				rc.importing = true
			}
		default:
			for i, k := range valueKeys {
				if string(key) == k {
					return b.changeValue(rc, i, known)
				}
			}
		}
		return p.skip(3)
	})
}

// changeValue reads value i of a change: decoded when the change is read
// eagerly and its actions, already read, list attributes; else only
// checked. Either way its span is noted.
func (b *builder) changeValue(rc *rawChange, i int, actionsKnown bool) error {
	p := b.p
	p.space()
	start := p.pos
	var err error
	if rc.decoded && actionsKnown && listsAttributes(rc.actions) {
		rc.nodes[i], err = p.value(3)
	} else {
		rc.decoded = false
		err = p.skip(3)
	}
	rc.values[i] = span{start, p.pos}
	return err
}

// node returns value i of a change, decoding it when it was not.
func (rc *rawChange) node(p *parser, i int) (*node, error) {
	if rc.nodes[i] != nil || rc.values[i].end == 0 {
		return rc.nodes[i], nil
	}
	v, err := p.at(rc.values[i])
	rc.nodes[i] = v
	return v, err
}

// collectMarked adds the parts of a change's before and after values that
// its before_sensitive and after_sensitive marks to the secrets.
func (b *builder) collectMarked(rc *rawChange) error {
	for _, pair := range [][2]int{{valBefore, valBeforeSensitive}, {valAfter, valAfterSensitive}} {
		marks, err := rc.node(b.p, pair[1])
		if err != nil {
			return err
		}
		if !marks.anyTrue() {
			continue
		}
		v, err := rc.node(b.p, pair[0])
		if err != nil {
			return err
		}
		b.secrets.collect(v, marks)
	}
	return nil
}

// canonicalAction returns OpenTofu's action names as shared constants,
// anything else as a new string.
func canonicalAction(a []byte) string {
	for _, c := range []string{"no-op", "create", "read", "update", "delete", "forget"} {
		if string(a) == c {
			return c
		}
	}
	return string(a)
}

// section maps an action list (OpenTofu v1.12.6 internal/command/jsonplan,
// actionString) to its section, "" for a plain no-op.
func section(actions []string, importing bool, previous string) (string, error) {
	switch strings.Join(actions, ",") {
	case "delete,create", "create,delete":
		return SectionReplace, nil
	case "delete":
		return SectionDelete, nil
	case "forget":
		return SectionForget, nil
	case "forget,create":
		return SectionForgetThenCreate, nil
	case "update":
		return SectionUpdate, nil
	case "create":
		return SectionCreate, nil
	case "read":
		return SectionRead, nil
	case "no-op":
		switch {
		case importing:
			return SectionImport, nil
		case previous != "":
			return SectionMove, nil
		}
		return "", nil
	}
	return "", fmt.Errorf("action list %q is not one OpenTofu writes", actions)
}

// listsAttributes reports whether a change of these actions lists its
// attributes: not a delete, a forget or a no-op.
func listsAttributes(actions []string) bool {
	if len(actions) != 1 {
		return true
	}
	switch actions[0] {
	case "delete", "forget", "no-op":
		return false
	}
	return true
}

// resource makes the Resource of a change, without its attributes; keep
// is false for a plain no-op or an ephemeral resource.
func (b *builder) resource(rc *rawChange) (r Resource, keep bool, err error) {
	if rc.mode == "ephemeral" {
		return r, false, nil // opened and closed each run: no change, values nulled
	}
	sec, err := section(rc.actions, rc.importing, rc.previous)
	if err != nil || sec == "" {
		return r, false, err
	}
	r = Resource{
		Section:         sec,
		Address:         rc.address,
		PreviousAddress: rc.previous,
		Deposed:         rc.deposed,
		Actions:         rc.actions,
		Reason:          rc.reason,
		Importing:       rc.importing,
	}
	rp, err := rc.node(b.p, valReplacePaths)
	for _, path := range replacePaths(rp) {
		r.ReplacePaths = append(r.ReplacePaths, formatPath("", path))
	}
	return r, true, err
}

// walkPending lists the attributes of every change that lists them, now
// that the secrets are all known.
//
// A change listed as it was read (builder.eager) stands when the plan marks
// no secret at all (it was listed knowing those Build was told of);
// otherwise it is listed again.
func (b *builder) walkPending() error {
	p := b.p
	again := b.secrets.marked > 0
	for _, pw := range b.pending {
		if pw.done && !again {
			continue
		}
		p.reset()
		var v [valCount]*node
		for i, s := range pw.values {
			n, err := p.at(s)
			if err != nil {
				return err
			}
			v[i] = n
		}
		b.walk(pw.r, v, pw.mirrors)
	}
	return nil
}

// walk lists the attributes of r from its change's values; mirrors says
// its output is its input (a terraform_data: mirroredMarks).
func (b *builder) walk(r *Resource, v [valCount]*node, mirrors bool) {
	if mirrors {
		v[valBeforeSensitive] = mirroredMarks(v[valBefore], v[valBeforeSensitive])
		v[valAfterSensitive] = mirroredMarks(v[valAfter], v[valAfterSensitive])
	}
	w := walker{fp: b.fp, secrets: &b.secrets, replace: replacePaths(v[valReplacePaths]), attrs: b.attrScratch[:0]}
	w.root(nullToAbsent(v[valBefore]), nullToAbsent(v[valAfter]), v[valUnknown], v[valBeforeSensitive], v[valAfterSensitive])
	r.Attributes = nil
	if len(w.attrs) > 0 {
		r.Attributes = b.attrArena.alloc(len(w.attrs))
		copy(r.Attributes, w.attrs)
	}
	r.Unchanged = w.unchanged
	b.attrScratch = w.attrs
}

// root walks a change's whole before and after values.
func (w *walker) root(b, a, unk, bs, as *node) {
	switch {
	case bs.isTrue() || as.isTrue() || unk.isTrue():
		w.walk(b, a, unk, bs, as)
	case b.container() || a.container():
		w.children(b, a, unk, bs, as)
	}
}

// outputChange is one output_changes member, decoded.
type outputChange struct {
	actions []string
	values  [valReplacePaths]*node
}

// readOutput decodes the output_changes member raw; nil for null.
func (b *builder) readOutput(raw rawOutput) (*outputChange, error) {
	p := newParser(b.p.buf[raw.start:raw.end])
	if p.peek() == 'n' {
		return nil, nil
	}
	oc := &outputChange{}
	err := p.members(func(key []byte) error {
		if string(key) == "actions" {
			return p.nullOr(func() error {
				return p.elements(func() error {
					a, err := p.bytesOrNull()
					oc.actions = append(oc.actions, canonicalAction(a))
					return err
				})
			})
		}
		for i, k := range valueKeys[:valReplacePaths] {
			if string(key) == k {
				v, err := p.value(1)
				oc.values[i] = v
				return err
			}
		}
		return p.skip(1)
	})
	if err != nil {
		return nil, fmt.Errorf("output_changes[%q]: %w", raw.name, err)
	}
	if b.sensitiveOutputs[raw.name] {
		oc.values[valBeforeSensitive], oc.values[valAfterSensitive] = trueNode, trueNode
	}
	return oc, nil
}

// collectOutputs adds the sensitive parts of the output changes to the
// secrets.
func (b *builder) collectOutputs() error {
	for _, raw := range b.rawOutputs {
		oc, err := b.readOutput(raw)
		if err != nil || oc == nil {
			return err
		}
		b.secrets.collect(oc.values[valBefore], oc.values[valBeforeSensitive])
		b.secrets.collect(oc.values[valAfter], oc.values[valAfterSensitive])
	}
	return nil
}

// outputs adds the output changes other than no-ops to the change set.
func (b *builder) outputs() error {
	for _, raw := range b.rawOutputs {
		oc, err := b.readOutput(raw)
		if err != nil {
			return err
		}
		if oc == nil || len(oc.actions) == 0 || (len(oc.actions) == 1 && oc.actions[0] == "no-op") {
			continue
		}
		b.cs.Outputs = append(b.cs.Outputs, Output{Name: raw.name, Actions: oc.actions, Change: b.outputAttribute(raw.name, oc)})
	}
	return nil
}

// outputAttribute compares an output's whole before and after values.
func (b *builder) outputAttribute(name string, oc *outputChange) Attribute {
	w := walker{fp: b.fp, secrets: &b.secrets}
	v := oc.values
	before, after, unknown := nullToAbsent(v[valBefore]), nullToAbsent(v[valAfter]), v[valUnknown]
	bs, as := v[valBeforeSensitive], v[valAfterSensitive]
	w.whole(before, after, unknown, bs, as)
	if len(w.attrs) == 0 && (bs.anyTrue() || as.anyTrue() || b.secrets.holds(before) || b.secrets.holds(after)) {
		w.sensitive(before, after, unknown)
	}
	var at Attribute
	switch {
	case len(w.attrs) > 0:
		at = w.attrs[0]
	case bs.anyTrue() || as.anyTrue():
		at = Attribute{Sensitive: true} // null on both sides
	default: // equal values: a change of type only
		at = Attribute{Before: renderValue(before, bs, nil), After: renderValue(after, as, unknown)}
	}
	at.Path = name
	return at
}

// trueNode marks a whole value; its marks cache is set, so it is never written
// (Builds run concurrently).
var trueNode = &node{kind: kindBool, str: trueText, raw: trueText, marks: 2}

// whole compares b and a as one value (an output's), without listing the
// paths inside it.
func (w *walker) whole(b, a, unk, bs, as *node) {
	switch {
	case bs.isTrue() || as.isTrue():
		w.sensitive(b, a, unk)
	case unk.isTrue():
		w.unknown(b, bs)
	default:
		w.leaf(b, a, unk, bs, as)
	}
}

// terraformProvider is the provider_name OpenTofu writes for its built-in
// provider, which has terraform_data.
const terraformProvider = "terraform.io/builtin/terraform"

var keyInput, keyOutput = []byte("input"), []byte("output")

// mirrorsInput reports whether rc is a change of a terraform_data, whose
// output the built-in provider sets to its input (OpenTofu documentation,
// "The terraform_data Managed Resource Type").
func mirrorsInput(rc *rawChange) bool {
	return rc.mode == "managed" && rc.typ == "terraform_data" && rc.provider == terraformProvider
}

// mirroredMarks returns the sensitive marks of a terraform_data's value v
// (its before or its after) with the marks of its input on its output too,
// when the output is the input's value and has no mark of its own:
// OpenTofu copies the value without its marks, and a sensitive boolean in
// it could not be found by its value (only strings and numbers are). The
// marks given are not changed.
func mirroredMarks(v, marks *node) *node {
	in := marks.member(keyInput)
	if !in.anyTrue() || marks.member(keyOutput).anyTrue() || v.member(keyOutput) == nil ||
		!equalValues(v.member(keyInput), v.member(keyOutput)) {
		return marks
	}
	out := &node{kind: kindObject}
	i, found := slices.BinarySearchFunc(marks.keys, keyOutput, bytes.Compare)
	out.keys = slices.Clone(marks.keys)
	out.kids = slices.Clone(marks.kids)
	if found {
		out.kids[i] = in
	} else {
		out.keys = slices.Insert(out.keys, i, keyOutput)
		out.kids = slices.Insert(out.kids, i, in)
	}
	return out
}
