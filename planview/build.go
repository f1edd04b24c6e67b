package planview

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SupportedFormatVersions are the `tofu show -json` plan format versions
// Build reads: OpenTofu 1.10 to 1.12 and Terraform 1.11+ write "1.2";
// OpenTofu raises the minor version for a change a reader must handle, so a
// newer one is refused until planview has been checked against it.
var SupportedFormatVersions = []string{"1.0", "1.1", "1.2"}

// ErrUnreadablePlan is wrapped by every Build error about the plan JSON
// itself: it does not parse, its format_version is missing or unsupported,
// or a change in it is malformed. The change set cannot be computed.
var ErrUnreadablePlan = errors.New("plan JSON cannot be read")

// Build computes the change set of a saved plan from its JSON rendering
// (`tofu show -json PLANFILE`, format_version 1.0 to 1.2; OpenTofu's "JSON
// Output Format" documentation), reading resource_changes, resource_drift,
// output_changes, and the sensitive flags of planned_values and prior_state
// outputs; the rest is only checked to be JSON.
//
// In the change set:
//   - every resource instance change but a plain no-op (no-op without
//     importing or previous_address) and ephemeral resources, in section
//     order ([Sections]) then by address and deposed key. A no-op that
//     imports is in SectionImport, one that only moves in SectionMove; a
//     move that also changes is in its action's section with
//     PreviousAddress set. No-ops, deletes and forgets list no attributes.
//   - attributes ([Attribute]): for an update, a replace and a forget then
//     create, the leaf paths that change, with the unchanged leaves
//     counted in Resource.Unchanged; for a create or read, every non-null
//     leaf. Strings holding JSON objects or arrays compare structurally
//     (Attribute.JSON) unless JSON readers could read one two ways (a
//     repeated key, half a surrogate pair); long or multi-line strings
//     get a line diff (Attribute.Lines); other values are rendered as
//     OpenTofu literals of at most 200 runes (see renderValue).
//   - sensitive paths (marked by before_sensitive or after_sensitive, or an
//     output marked sensitive) are listed whether or not they change, with
//     Changed and keyed fingerprints of the whole value at the path
//     ([Fingerprinter.Fingerprint]), never descended into. So is any other
//     value that holds a sensitive value of the plan (see secrets: OpenTofu
//     does not carry every mark along) or one of known, and a map keyed
//     by one; a terraform_data's output takes its input's marks (it is a
//     copy of the input OpenTofu leaves unmarked). known are the values
//     the caller knows are secret though the plan may not mark them (a
//     run's secret answers and credentials: mask.Masker.Values), found
//     like the plan's, so that no part of one is shown either, not even
//     where a value is cut. No part of a sensitive value reaches
//     any string of the change set; a secret shorter than mask.MinLen
//     bytes is found only as a whole value: a string, a number, a line of
//     a multi-line string, or a value or key of a JSON document in a
//     string. A sensitive boolean is hidden only where it is marked.
//   - outputs that change, by name; drift (resource_drift) apart from the
//     resources, in the same form.
//
// Build neither modifies planJSON nor keeps any part of it. It reads the
// document once when the plan marks no sensitive value, and decodes the
// values of each change a second time otherwise (benchmark:
// BenchmarkBuildTenThousandChanges).
//
// Errors: ErrNoFingerprintKey when fp has no key; an error wrapping
// ErrUnreadablePlan when planJSON is not JSON, its format_version is
// missing or unsupported, a resource change has no address or no change,
// or an action list is not one OpenTofu writes.
func Build(planJSON []byte, fp Fingerprinter, known ...string) (*ChangeSet, error) {
	if len(fp.key) == 0 {
		return nil, ErrNoFingerprintKey
	}
	b := &builder{p: newParser(planJSON), fp: fp, sensitiveOutputs: map[string]bool{}, eager: true}
	b.secrets.know(known)
	if err := b.scan(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadablePlan, err)
	}
	if b.cs.FormatVersion == "" {
		return nil, fmt.Errorf("%w: it has no format_version; give Build the output of tofu show -json PLANFILE", ErrUnreadablePlan)
	}
	// The secrets are all known once the whole document is read; only then
	// are values compared and shown.
	for _, step := range []func() error{b.collectVariables, b.collectOutputs, b.seal, b.walkPending, b.outputs} {
		if err := step(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnreadablePlan, err)
		}
	}
	b.finish()
	b.secrets.scrub(&b.cs)
	return &b.cs, nil
}

func (b *builder) seal() error { b.secrets.seal(); return nil }

// The members of the plan document, of a resource change and of its change
// that Build reads. Each may be written once: tofu show -json writes each
// once, and a repeated one could be read as either value (encoding/json
// keeps the last, a streaming reader may keep the first or both), so a
// rendering with one is refused rather than shown one way and measured
// another (gate.AnalyzePlan refuses it too).
var (
	topMembers    = []string{"format_version", "resource_changes", "resource_drift", "output_changes", "variables", "configuration", "planned_values", "prior_state"}
	changeMembers = []string{"address", "previous_address", "mode", "deposed", "action_reason", "change"}
	valueMembers  = append([]string{"actions", "importing"}, valueKeys[:]...)
)

// repeatedHint ends the error about a repeated member.
const repeatedHint = "tofu show -json writes each once, so this rendering was changed after tofu wrote it; render the saved plan again with tofu show -json"

// memberSet is the members of one object met so far, among a list of at
// most 32 names.
type memberSet uint32

// once notes key, failing when it is one of names already met.
func (m *memberSet) once(key []byte, names []string) error {
	for i, n := range names {
		if string(key) != n {
			continue
		}
		if *m&(1<<i) != 0 {
			return fmt.Errorf("the member %q is repeated; %s", key, repeatedHint)
		}
		*m |= 1 << i
	}
	return nil
}

// builder holds a Build in progress.
type builder struct {
	p  *parser
	fp Fingerprinter
	cs ChangeSet
	// rawOutputs are the output_changes members, read once the whole
	// document has said which outputs are sensitive.
	rawOutputs       []rawOutput
	sensitiveOutputs map[string]bool
	// pending are the changes whose attributes are listed once the
	// secrets are known; variables and configuration where those members
	// are.
	pending []pendingWalk
	secrets secrets
	// eager is true until the first secret is found: until then each
	// change's attributes are listed as it is read, which stands if the
	// plan holds no secret at all (no value can then need hiding).
	eager                    bool
	variables, configuration span
	// resources and drift are the resources kept, in plan order, until
	// finish sorts them into the change set; the arenas allocate resources
	// and attribute lists a block at a time, attrScratch is a walk's list.
	resources, drift []*Resource
	resourceArena    arena[Resource]
	attrArena        arena[Attribute]
	attrScratch      []Attribute
}

type rawOutput struct {
	name       string
	start, end int
}

// scan reads the top-level members of the plan document.
func (b *builder) scan() error {
	p := b.p
	var seen memberSet
	err := p.members(func(key []byte) error {
		if err := seen.once(key, topMembers); err != nil {
			return err
		}
		switch string(key) {
		case "format_version":
			return b.formatVersion()
		case "resource_changes", "resource_drift":
			list := string(key)
			drift := list == "resource_drift"
			i := 0
			return p.nullOr(func() error {
				return p.elements(func() error {
					i++
					return b.resourceChange(list, i-1, drift)
				})
			})
		case "output_changes":
			names := map[string]bool{}
			return p.nullOr(func() error {
				return p.members(func(name []byte) error {
					if names[string(name)] {
						return fmt.Errorf("output_changes repeats the output %q; %s", name, repeatedHint)
					}
					names[string(name)] = true
					start := p.pos
					err := p.skip(2)
					b.rawOutputs = append(b.rawOutputs, rawOutput{string(name), start, p.pos})
					return err
				})
			})
		case "variables", "configuration":
			p.space()
			start := p.pos
			err := p.skip(1)
			if string(key) == "variables" {
				b.variables = span{start, p.pos}
			} else {
				b.configuration = span{start, p.pos}
			}
			return err
		case "planned_values":
			return p.nullOr(b.outputFlags)
		case "prior_state":
			return p.nullOr(func() error {
				return p.members(func(key []byte) error {
					if string(key) == "values" {
						return p.nullOr(b.outputFlags)
					}
					return p.skip(2)
				})
			})
		}
		return p.skip(1)
	})
	if err != nil {
		return err
	}
	return p.end()
}

func (b *builder) formatVersion() error {
	v, err := b.p.stringOrNull()
	if err != nil {
		return err
	}
	if !slices.Contains(SupportedFormatVersions, v) {
		return fmt.Errorf("plan format_version %q is not one planview reads (%s); check planview against this OpenTofu version",
			v, strings.Join(SupportedFormatVersions, ", "))
	}
	b.cs.FormatVersion = v
	return nil
}

// outputFlags reads the "outputs" of a values object (planned_values,
// prior_state.values) for the names marked "sensitive": true.
func (b *builder) outputFlags() error {
	p := b.p
	return p.members(func(key []byte) error {
		if string(key) != "outputs" {
			return p.skip(2)
		}
		return p.nullOr(func() error {
			return p.members(func(name []byte) error {
				return p.nullOr(func() error {
					return p.members(func(key []byte) error {
						if string(key) != "sensitive" {
							return p.skip(4)
						}
						v, err := p.value(4)
						if v.isTrue() {
							b.sensitiveOutputs[string(name)] = true
						}
						return err
					})
				})
			})
		})
	})
}

// stringOrNull reads a string, or null as "".
func (p *parser) stringOrNull() (string, error) {
	b, err := p.bytesOrNull()
	return string(b), err
}

// bytesOrNull reads a string, or null as nil.
func (p *parser) bytesOrNull() ([]byte, error) {
	switch p.peek() {
	case 'n':
		return nil, p.literal("null")
	case '"':
		return p.stringValue()
	}
	return nil, p.errorf("want a string")
}

// finish sorts the change set and counts it.
func (b *builder) finish() {
	cs := &b.cs
	order := map[string]int{}
	for i, s := range Sections {
		order[s] = i
	}
	byRisk := func(x, y *Resource) int {
		if c := order[x.Section] - order[y.Section]; c != 0 {
			return c
		}
		if c := strings.Compare(x.Address, y.Address); c != 0 {
			return c
		}
		return strings.Compare(x.Deposed, y.Deposed)
	}
	slices.SortStableFunc(b.resources, byRisk)
	slices.SortStableFunc(b.drift, byRisk)
	cs.Resources = derefAll(b.resources)
	cs.Drift = derefAll(b.drift)
	slices.SortFunc(cs.Outputs, func(x, y Output) int { return strings.Compare(x.Name, y.Name) })
	c := &cs.Counts
	for _, r := range cs.Resources {
		c.add(r)
	}
	c.Destroy = c.Replace + c.Delete
	c.Outputs = len(cs.Outputs)
	c.Drift = len(cs.Drift)
}

func (c *Counts) add(r Resource) {
	switch r.Section {
	case SectionReplace:
		c.Replace++
	case SectionDelete:
		c.Delete++
	case SectionForget:
		c.Forget++
	case SectionForgetThenCreate:
		c.ForgetThenCreate++
	case SectionUpdate:
		c.Update++
	case SectionCreate:
		c.Create++
	case SectionRead:
		c.Read++
	}
	if r.Importing {
		c.Import++
	}
	if r.PreviousAddress != "" {
		c.Move++
	}
}

// collectVariables adds the values of the root module variables the
// configuration declares sensitive (configuration.root_module.variables
// NAME.sensitive, value from variables NAME.value) to the secrets.
func (b *builder) collectVariables() error {
	if b.variables.end == 0 || b.configuration.end == 0 {
		return nil
	}
	p := b.p
	p.reset()
	conf, err := p.at(b.configuration)
	if err != nil {
		return err
	}
	declared := conf.member([]byte("root_module")).member([]byte("variables"))
	vars, err := p.at(b.variables)
	if err != nil {
		return err
	}
	for i, name := range declared.keysOf() {
		if declared.kids[i].member([]byte("sensitive")).isTrue() {
			if v := vars.member(name).member([]byte("value")); v != nil {
				b.secrets.addAll(v)
			}
		}
	}
	return nil
}

// derefAll copies the resources rs points to into a slice (nil for none).
func derefAll(rs []*Resource) []Resource {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Resource, len(rs))
	for i, r := range rs {
		out[i] = *r
	}
	return out
}
