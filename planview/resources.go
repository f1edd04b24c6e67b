package planview

import (
	"fmt"
	"strings"
)

// rawChange is one resource_changes (or resource_drift) element as read,
// its strings cut from the document and its values in the parser's
// recycled nodes: nothing of it outlives the element.
type rawChange struct {
	address, previous, mode, deposed, reason string
	hasChange, importing                     bool
	actions                                  []string
	before, after, unknown, bsens, asens     *node
	replace                                  *node
}

// resourceChange reads element i of the list named list and adds its
// Resource to the change set.
func (b *builder) resourceChange(list string, i int, drift bool) error {
	p := b.p
	p.reset()
	if p.peek() == 'n' {
		return fmt.Errorf("%s[%d] is null", list, i)
	}
	rc := &rawChange{}
	err := p.members(func(key []byte) error {
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
	if err != nil {
		return err
	}
	if rc.address == "" || !rc.hasChange {
		return fmt.Errorf("%s[%d] has no address or no change", list, i)
	}
	r, keep, err := b.resource(rc)
	if err != nil {
		return fmt.Errorf("%s[%d] (%s): %w", list, i, rc.address, err)
	}
	switch {
	case !keep:
	case drift:
		b.cs.Drift = append(b.cs.Drift, r)
	default:
		b.cs.Resources = append(b.cs.Resources, r)
	}
	return nil
}

// change reads a change object into rc. When its actions come first (as
// OpenTofu writes them) and list no attributes (delete, forget, no-op), the
// values are only checked, not decoded.
func (b *builder) change(rc *rawChange) error {
	p := b.p
	known := false
	return p.members(func(key []byte) error {
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
		case "before", "after", "after_unknown", "before_sensitive", "after_sensitive":
			if known && !listsAttributes(rc.actions) {
				return p.skip(3)
			}
			v, err := p.value(3)
			*rc.slot(string(key)) = v
			return err
		case "replace_paths":
			v, err := p.value(3)
			rc.replace = v
			return err
		case "importing":
			if p.peek() != 'n' {
				rc.importing = true
			}
		}
		return p.skip(3)
	})
}

func (rc *rawChange) slot(key string) **node {
	switch key {
	case "before":
		return &rc.before
	case "after":
		return &rc.after
	case "after_unknown":
		return &rc.unknown
	case "before_sensitive":
		return &rc.bsens
	}
	return &rc.asens
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

// resource makes the Resource of a change; keep is false for a plain no-op
// or an ephemeral resource.
func (b *builder) resource(rc *rawChange) (r Resource, keep bool, err error) {
	sec, err := section(rc.actions, rc.importing, rc.previous)
	if err != nil || sec == "" || rc.mode == "ephemeral" {
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
	paths := replacePaths(rc.replace)
	for _, path := range paths {
		r.ReplacePaths = append(r.ReplacePaths, formatPath("", path))
	}
	if listsAttributes(rc.actions) {
		w := walker{fp: b.fp, replace: paths}
		w.root(nullToAbsent(rc.before), nullToAbsent(rc.after), rc.unknown, rc.bsens, rc.asens)
		r.Attributes, r.Unchanged = w.attrs, w.unchanged
	}
	return r, true, nil
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

// outputs reads the output_changes members into the change set.
func (b *builder) outputs() error {
	for _, raw := range b.rawOutputs {
		o, keep, err := b.output(raw)
		if err != nil {
			return fmt.Errorf("output_changes[%q]: %w", raw.name, err)
		}
		if keep {
			b.cs.Outputs = append(b.cs.Outputs, o)
		}
	}
	return nil
}

func (b *builder) output(raw rawOutput) (Output, bool, error) {
	p := newParser(b.p.buf[raw.start:raw.end])
	rc := &rawChange{}
	if p.peek() == 'n' {
		return Output{}, false, nil
	}
	err := p.members(func(key []byte) error {
		switch string(key) {
		case "actions":
			return p.nullOr(func() error {
				return p.elements(func() error {
					a, err := p.bytesOrNull()
					rc.actions = append(rc.actions, canonicalAction(a))
					return err
				})
			})
		case "before", "after", "after_unknown", "before_sensitive", "after_sensitive":
			v, err := p.value(1)
			*rc.slot(string(key)) = v
			return err
		}
		return p.skip(1)
	})
	if err != nil || len(rc.actions) == 0 || (len(rc.actions) == 1 && rc.actions[0] == "no-op") {
		return Output{}, false, err
	}
	w := walker{fp: b.fp}
	bs, as := rc.bsens, rc.asens
	if b.sensitiveOutputs[raw.name] {
		bs, as = trueNode, trueNode
	}
	w.whole(nullToAbsent(rc.before), nullToAbsent(rc.after), rc.unknown, bs, as)
	var at Attribute
	switch {
	case len(w.attrs) > 0:
		at = w.attrs[0]
	case bs.isTrue() || as.isTrue():
		at = Attribute{Sensitive: true}
	default: // equal values: a change of sensitivity or type only
		at = Attribute{Before: renderValue(nullToAbsent(rc.before), bs, nil), After: renderValue(nullToAbsent(rc.after), as, rc.unknown)}
	}
	at.Path = raw.name
	return Output{Name: raw.name, Actions: rc.actions, Change: at}, true, nil
}

var trueNode = &node{kind: kindBool, str: trueText, raw: trueText}

// whole compares b and a as one value (an output's), without listing the
// paths inside it.
func (w *walker) whole(b, a, unk, bs, as *node) {
	switch {
	case bs.isTrue() || as.isTrue():
		w.sensitive(b, a, unk)
	case unk.isTrue():
		w.emit(Attribute{Before: renderValue(b, bs, nil), Unknown: true})
	default:
		w.leaf(b, a, unk, bs, as)
	}
}
