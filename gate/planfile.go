package gate

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// The saved plan file is a zip archive whose "tfplan" entry is OpenTofu's
// plan protobuf (internal/plans/internal/planproto/planfile.proto): Plan
// field 3 is resource_changes, each a ResourceInstanceChange whose field 9
// is its Change, whose field 1 is its Action and field 5 its Importing.
const (
	planfileEntry      = "tfplan"
	maxPlanProtoSize   = 512 << 20
	fieldPlanChanges   = 3
	fieldRICAddr       = 13
	fieldRICChange     = 9
	fieldChangeAction  = 1
	fieldChangeImports = 5
)

// Actions of planfile.proto's enum Action.
const (
	protoNoop, protoCreate, protoRead, protoUpdate            = 0, 1, 2, 3
	protoDelete, protoDeleteThenCreate, protoCreateThenDelete = 5, 6, 7
	protoForget, protoForgetThenCreate                        = 8, 10
)

// PlanFileChanges lists the resource instance addresses the saved plan file
// plan changes, by the Action* constants, from its protobuf (each
// ResourceInstanceChange's addr, field 13), in the plan's order; reads and
// no-ops are left out.
func PlanFileChanges(plan []byte) (map[string][]string, error) {
	z, err := zip.NewReader(bytes.NewReader(plan), int64(len(plan)))
	if err != nil {
		return nil, fmt.Errorf("reading the saved plan archive: %w", err)
	}
	for _, f := range z.File {
		if f.Name != planfileEntry {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("reading the saved plan's %s: %w", planfileEntry, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, maxPlanProtoSize+1))
		if err != nil || len(b) > maxPlanProtoSize {
			return nil, fmt.Errorf("reading the saved plan's %s: too large or unreadable", planfileEntry)
		}
		return protoActions(b)
	}
	return nil, errors.New("the saved plan has no " + planfileEntry + " entry")
}

// protoActions walks the Plan message b for its resource changes.
func protoActions(b []byte) (map[string][]string, error) {
	out := map[string][]string{}
	err := fields(b, func(num protowire.Number, v []byte) error {
		if num != fieldPlanChanges {
			return nil
		}
		action, err := changeAction(v)
		if err != nil || action == "" {
			return err
		}
		addr := ""
		_ = fields(v, func(num protowire.Number, w []byte) error {
			if num == fieldRICAddr {
				addr = string(w)
			}
			return nil
		})
		out[action] = append(out[action], addr)
		return nil
	})
	return out, err
}

// changeAction is the Action* constant of one ResourceInstanceChange, or
// "" for a read or a no-op that imports nothing.
func changeAction(ric []byte) (string, error) {
	action, importing := uint64(protoNoop), false
	err := fields(ric, func(num protowire.Number, v []byte) error {
		if num != fieldRICChange {
			return nil
		}
		return fields(v, func(num protowire.Number, w []byte) error {
			switch num {
			case fieldChangeAction:
				a, n := protowire.ConsumeVarint(w)
				if n < 0 {
					return errors.New("a change's action does not decode")
				}
				action = a
			case fieldChangeImports:
				importing = true
			}
			return nil
		})
	})
	if err != nil {
		return "", err
	}
	switch action {
	case protoCreate:
		return ActionCreate, nil
	case protoUpdate:
		return ActionUpdate, nil
	case protoDelete:
		return ActionDelete, nil
	case protoDeleteThenCreate, protoCreateThenDelete:
		return ActionReplace, nil
	case protoForget:
		return ActionForget, nil
	case protoForgetThenCreate:
		return ActionForgetCreate, nil
	case protoNoop, protoRead:
		if importing && action == protoNoop {
			return ActionImport, nil
		}
		return "", nil
	}
	return "", fmt.Errorf("a change has action %d, which this version does not know", action)
}

// fields calls fn with each length-delimited field of message b (number
// and bytes; a varint field's bytes are its encoding), refusing anything
// that does not decode.
func fields(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New("the plan's protobuf does not decode")
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return errors.New("the plan's protobuf does not decode")
		}
		v := b[:m]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		if err := fn(num, v); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

// SameChanges reports whether the summary of a rendering names, for each
// action, the resource instances the plan file changes (PlanFileChanges),
// and if not, the first difference: a rendering of another plan with the
// same counts is told apart.
func SameChanges(sum *Summary, file map[string][]string) (bool, string) {
	for _, a := range []string{ActionCreate, ActionUpdate, ActionDelete, ActionReplace, ActionForget, ActionForgetCreate, ActionImport} {
		got, want := slices.Sorted(slices.Values(sum.ByAction[a])), slices.Sorted(slices.Values(file[a]))
		if len(got) != len(want) {
			return false, fmt.Sprintf("the rendering counts %d %s, the plan file %d", len(got), a, len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				return false, fmt.Sprintf("the rendering would %s %s, the plan file %s", a, got[i], want[i])
			}
		}
	}
	return true, ""
}

// RenderingNamesItsAddresses checks that each of the resource_changes in
// planJSON (a `tofu show -json` rendering) describes the instance its
// address names: module_address, mode, type, name and index agree with the
// address. With SameChanges it ties what a policy reads of a change (its
// type, say) to the plan file's own addresses: a rendering made elsewhere
// cannot keep the addresses and change what they are. Keys are read as
// written (OpenTofu writes them in lower case, and policies read them so):
// a change that names a key twice, or in two cases, is refused, since
// readers that differ in how they match keys would read different values.
func RenderingNamesItsAddresses(planJSON []byte) error {
	var doc struct {
		ResourceChanges []json.RawMessage `json:"resource_changes"`
	}
	if err := json.Unmarshal(planJSON, &doc); err != nil {
		return fmt.Errorf("reading the rendering: %w", err)
	}
	for i, raw := range doc.ResourceChanges {
		rc, err := exactKeys(raw)
		if err == nil {
			_, err = exactKeys(rc["change"]) // its actions, importing: read by the rules
		}
		if err != nil {
			return fmt.Errorf("resource_changes[%d]: %w", i, err)
		}
		addr, mode, typ, name, module := rc.str("address"), rc.str("mode"), rc.str("type"), rc.str("name"), rc.str("module_address")
		base := typ + "." + name
		switch mode {
		case "managed":
		case "data", "ephemeral":
			base = mode + "." + base
		default:
			return fmt.Errorf("%s has mode %q", addr, mode)
		}
		if module != "" {
			base = module + "." + base
		}
		suffix, ok := strings.CutPrefix(addr, base)
		if !ok || !indexSuffix(suffix, rc["index"]) {
			return fmt.Errorf("%s is not the %s its module_address, mode, type, name and index say", addr, base)
		}
	}
	return nil
}

// keyed is a JSON object's members by their exact keys.
type keyed map[string]json.RawMessage

// str is the string member k, "" when it is missing or not a string.
func (o keyed) str(k string) string {
	var s string
	_ = json.Unmarshal(o[k], &s)
	return s
}

// exactKeys reads a JSON object, refusing a key given twice or in two
// cases.
func exactKeys(raw json.RawMessage) (keyed, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("a change is not an object")
	}
	out, folded := keyed{}, map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		if folded[strings.ToLower(k)] {
			return nil, fmt.Errorf("key %q is given twice (or in another case)", k)
		}
		folded[strings.ToLower(k)] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// indexSuffix reports whether suffix is the address's instance key for
// index: none, [N] for a number, ["…"] for a string.
func indexSuffix(suffix string, index json.RawMessage) bool {
	raw := strings.TrimSpace(string(index))
	switch {
	case raw == "" || raw == "null":
		return suffix == ""
	case strings.HasPrefix(raw, `"`):
		return strings.HasPrefix(suffix, `["`) && strings.HasSuffix(suffix, `"]`)
	}
	var n json.Number
	if err := json.Unmarshal(index, &n); err != nil {
		return false
	}
	return suffix == "["+n.String()+"]"
}
