package gate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/open-policy-agent/opa/v1/ast"
)

// The actions a Change can carry, one per OpenTofu action list. The set is
// closed: AnalyzePlan refuses a plan whose resource change has any other
// action list. The lists come from OpenTofu's jsonplan package (v1.12.6,
// internal/command/jsonplan, actionString); ["no-op"] and ["read"] change no
// infrastructure and are left out of the summary.
const (
	ActionCreate       = "create"        // ["create"]
	ActionUpdate       = "update"        // ["update"]
	ActionDelete       = "delete"        // ["delete"]
	ActionReplace      = "replace"       // ["delete","create"] or ["create","delete"]
	ActionForget       = "forget"        // ["forget"]: removed from state, not destroyed
	ActionForgetCreate = "forget+create" // ["forget","create"]: a replace under lifecycle { destroy = false }
	// ActionImport is the action of a change whose only effect is importing
	// an existing object (actions ["no-op"] with an "importing" block).
	ActionImport = "import"
)

// supportedFormatVersions are the `tofu show -json` plan format versions the
// gate reads. OpenTofu 1.10 to 1.12 write "1.2"; OpenTofu raises the minor
// version for changes a consuming parser must handle, so a newer one is
// refused until the gate has been checked against it.
var supportedFormatVersions = []string{"1.0", "1.1", "1.2"}

// Change is one resource instance change of a plan that changes
// infrastructure or state.
type Change struct {
	// Address is the resource instance address, e.g. terraform_data.x[0].
	Address string
	// Type is the resource type, e.g. terraform_data.
	Type string
	// Actions is the action list as `tofu show -json` wrote it.
	Actions []string
	// Action is one of the Action* constants.
	Action string
	// Deposed is the deposed object key when the change is to a deposed
	// object of Address (an earlier create_before_destroy left it), else "".
	Deposed string
	// Importing reports that the change imports an existing object.
	Importing bool
}

// Summary counts what a saved plan would do, measured from the JSON
// rendering of the plan (`tofu show -json PLANFILE`), never from the text the
// tool printed (spec: "A gated apply carries out the approved plan").
type Summary struct {
	// FormatVersion is the plan JSON's format_version, e.g. "1.2".
	FormatVersion string
	// Add counts pure creates (["create"]).
	Add int
	// Change counts in-place updates (["update"]).
	Change int
	// Destroy counts every resource change whose action list includes
	// "delete": deletes and replaces alike.
	Destroy int
	// Replace counts replaces (["delete","create"] and ["create","delete"]);
	// each is counted in Destroy as well.
	Replace int
	// Forget counts objects removed from state without being destroyed
	// (["forget"] and ["forget","create"]); they are not destroys.
	Forget int
	// Import counts changes that import an existing object, whatever their
	// action.
	Import int
	// Changes lists every resource change other than no-op and read, in plan
	// order (a no-op import is listed with ActionImport).
	Changes []Change
	// ByAction maps an Action* constant to the sorted addresses with that
	// action. Only actions that occur are present.
	ByAction map[string][]string
}

// classify maps an OpenTofu action list to an Action* constant. It returns
// "" for no-op and read, and an error for a list OpenTofu does not produce.
func classify(actions tfjson.Actions) (string, error) {
	switch strings.Join(actionStrings(actions), ",") {
	case "no-op", "read":
		return "", nil
	case "create":
		return ActionCreate, nil
	case "update":
		return ActionUpdate, nil
	case "delete":
		return ActionDelete, nil
	case "delete,create", "create,delete":
		return ActionReplace, nil
	case "forget":
		return ActionForget, nil
	case "forget,create":
		return ActionForgetCreate, nil
	}
	return "", fmt.Errorf("unknown action list %q", actionStrings(actions))
}

func actionStrings(actions tfjson.Actions) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = string(a)
	}
	return out
}

// ErrUnreadablePlan is wrapped by every AnalyzePlan error: the plan JSON could
// not be read in full, so the gate cannot say what the plan does and the
// caller must hold the apply (DESIGN invariant 5, the gate fails closed).
var ErrUnreadablePlan = errors.New("plan JSON cannot be read")

// AnalyzePlan reads the output of `tofu show -json PLANFILE` and counts what
// the plan would do. It fails closed: JSON that does not parse, a missing or
// unsupported format_version (supported: 1.0, 1.1, 1.2), a resource change
// without an address or change, and an action list OpenTofu does not produce
// all return an error wrapping ErrUnreadablePlan, never a zero Summary.
// Ephemeral resources are skipped, as tofu's own plan rendering skips them.
func AnalyzePlan(planJSON []byte) (*Summary, error) {
	plan, err := parsePlan(planJSON)
	if err != nil {
		return nil, err
	}
	return summarize(plan)
}

// planDoc is the part of a `tofu show -json` document the summary reads, in
// terraform-json's types. Decoding the whole tfjson.Plan (every before and
// after value, the prior state, the planned values) takes about five times
// as long on a large plan, for fields the summary never reads; parsePlan
// checks the whole document is JSON and reads only these.
type planDoc struct {
	FormatVersion   string
	ResourceChanges []*resourceChange
}

type resourceChange struct {
	Address    string
	Mode       tfjson.ResourceMode
	Type       string
	DeposedKey string
	Change     *changeDoc
}

type changeDoc struct {
	Actions   tfjson.Actions
	Importing *tfjson.Importing
}

func parsePlan(planJSON []byte) (*planDoc, error) {
	plan, err := scanPlan(planJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: parsing tofu show -json output: %v", ErrUnreadablePlan, err)
	}
	if !slices.Contains(supportedFormatVersions, plan.FormatVersion) {
		return nil, fmt.Errorf("%w: plan format_version %q is not one the gate reads (%s); check the gate against this OpenTofu version",
			ErrUnreadablePlan, plan.FormatVersion, strings.Join(supportedFormatVersions, ", "))
	}
	return plan, nil
}

// scanPlan reads format_version and the resource changes' address, mode,
// type, deposed, change.actions and change.importing, checking that the
// rest is well-formed JSON.
func scanPlan(doc []byte) (*planDoc, error) {
	p := valueParser{buf: doc, strs: map[string]*ast.Term{}}
	plan := &planDoc{}
	p.skipSpace()
	var seen memberSet
	err := p.members(func(key []byte) error {
		if err := seen.once(key, "format_version", "resource_changes"); err != nil {
			return err
		}
		switch string(key) {
		case "format_version":
			v, err := p.stringOrNull()
			plan.FormatVersion = v
			return err
		case "resource_changes":
			if p.pos < len(p.buf) && p.buf[p.pos] == 'n' {
				return p.skip(1)
			}
			plan.ResourceChanges = plan.ResourceChanges[:0]
			return p.elements(func() error {
				rc, err := p.scanResourceChange()
				plan.ResourceChanges = append(plan.ResourceChanges, rc)
				if err != nil {
					return fmt.Errorf("resource_changes[%d]: %w", len(plan.ResourceChanges)-1, err)
				}
				return nil
			})
		}
		return p.skip(1)
	})
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return nil, p.errorf("data after the JSON value")
	}
	return plan, nil
}

// scanResourceChange reads one resource_changes element; null gives nil.
func (p *valueParser) scanResourceChange() (*resourceChange, error) {
	if p.pos < len(p.buf) && p.buf[p.pos] == 'n' {
		return nil, p.skip(2)
	}
	rc := &resourceChange{}
	var seen memberSet
	err := p.members(func(key []byte) error {
		if err := seen.once(key, "address", "mode", "type", "deposed", "change"); err != nil {
			return err
		}
		var err error
		switch string(key) {
		case "address":
			rc.Address, err = p.stringOrNull()
		case "mode":
			var m string
			m, err = p.stringOrNull()
			rc.Mode = tfjson.ResourceMode(m)
		case "type":
			rc.Type, err = p.stringOrNull()
		case "deposed":
			rc.DeposedKey, err = p.stringOrNull()
		case "change":
			err = p.scanChange(rc)
		default:
			err = p.skip(3)
		}
		return err
	})
	return rc, err
}

// scanChange reads the change of a resource_changes element into rc; null
// leaves it nil.
func (p *valueParser) scanChange(rc *resourceChange) error {
	if p.pos < len(p.buf) && p.buf[p.pos] == 'n' {
		return p.skip(3)
	}
	rc.Change = &changeDoc{}
	var seen memberSet
	return p.members(func(key []byte) error {
		if err := seen.once(key, "actions", "importing"); err != nil {
			return err
		}
		switch string(key) {
		case "actions":
			if p.pos < len(p.buf) && p.buf[p.pos] == 'n' {
				return p.skip(4)
			}
			rc.Change.Actions = rc.Change.Actions[:0]
			return p.elements(func() error {
				a, err := p.stringOrNull()
				rc.Change.Actions = append(rc.Change.Actions, tfjson.Action(a))
				return err
			})
		case "importing":
			if p.pos < len(p.buf) && p.buf[p.pos] != 'n' {
				rc.Change.Importing = &tfjson.Importing{}
			}
		}
		return p.skip(4)
	})
}

// memberSet is the members of one object met so far, among the few the
// summary reads. tofu show -json writes each once; a repeated one could be
// read as either value (the change view, package planview, refuses it
// too), so the plan is refused rather than measured one way and shown
// another.
type memberSet uint32

// once notes key, failing when it is one of names already met.
func (m *memberSet) once(key []byte, names ...string) error {
	for i, n := range names {
		if string(key) != n {
			continue
		}
		if *m&(1<<i) != 0 {
			return fmt.Errorf("the member %q is repeated; tofu show -json writes each once, so this rendering was changed after tofu wrote it", key)
		}
		*m |= 1 << i
	}
	return nil
}

// count adds one change of action to the summary's totals.
func (s *Summary) count(action string) {
	switch action {
	case ActionCreate:
		s.Add++
	case ActionUpdate:
		s.Change++
	case ActionDelete:
		s.Destroy++
	case ActionReplace:
		s.Destroy++
		s.Replace++
	case ActionForget, ActionForgetCreate:
		s.Forget++
	}
}

func summarize(plan *planDoc) (*Summary, error) {
	s := &Summary{FormatVersion: plan.FormatVersion, ByAction: map[string][]string{}}
	for i, rc := range plan.ResourceChanges {
		if rc == nil || rc.Change == nil || rc.Address == "" {
			return nil, fmt.Errorf("%w: resource_changes[%d] has no address or no change", ErrUnreadablePlan, i)
		}
		action, err := classify(rc.Change.Actions)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnreadablePlan, rc.Address, err)
		}
		if rc.Mode == "ephemeral" {
			continue
		}
		importing := rc.Change.Importing != nil
		if importing {
			s.Import++
			if action == "" {
				action = ActionImport
			}
		}
		if action == "" {
			continue
		}
		s.count(action)
		s.Changes = append(s.Changes, Change{
			Address:   rc.Address,
			Type:      rc.Type,
			Actions:   actionStrings(rc.Change.Actions),
			Action:    action,
			Deposed:   rc.DeposedKey,
			Importing: importing,
		})
		s.ByAction[action] = append(s.ByAction[action], rc.Address)
	}
	for _, addrs := range s.ByAction {
		slices.Sort(addrs)
	}
	return s, nil
}

// inputMap renders the summary as the "summary" object of a plan_gate
// policy's input: add, change, destroy, replace, forget, import (numbers) and
// by_action (action -> sorted addresses).
func (s *Summary) inputMap() map[string]any {
	by := make(map[string]any, len(s.ByAction))
	for k, v := range s.ByAction {
		addrs := make([]any, len(v))
		for i, a := range v {
			addrs[i] = a
		}
		by[k] = addrs
	}
	return map[string]any{
		"add":       s.Add,
		"change":    s.Change,
		"destroy":   s.Destroy,
		"replace":   s.Replace,
		"forget":    s.Forget,
		"import":    s.Import,
		"by_action": by,
	}
}

// DestroyedAddresses returns the sorted addresses of the changes that destroy
// an object (deletes and replaces), for showing with a max_destroy hold.
func (s *Summary) DestroyedAddresses() []string {
	out := append(append([]string(nil), s.ByAction[ActionDelete]...), s.ByAction[ActionReplace]...)
	slices.Sort(out)
	return out
}
