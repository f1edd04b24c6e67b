package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ResourceDiff is one resource instance a saved plan names, with the
// top-level attributes whose values differ between before and after. It
// never holds a value: values may be sensitive, so only names are kept.
type ResourceDiff struct {
	Address    string   `json:"address"`
	Action     string   `json:"action"`               // OpenTofu's action list joined with "+", e.g. "update", "delete+create"
	Attributes []string `json:"attributes,omitempty"` // attributes that differ, sorted; empty for a create or a delete
}

// Drift is what a drift check reads from a saved plan: the changes
// OpenTofu detected outside itself when it refreshed (resource_drift), kept
// apart from the changes the configuration would make (resource_changes).
type Drift struct {
	Drift   []ResourceDiff `json:"drift"`
	Changes []ResourceDiff `json:"changes"`
}

// AnalyzeDrift reads `tofu show -json PLANFILE` for a drift check:
// resource_drift and resource_changes, per address and attribute (no-op and
// read changes left out). It fails on JSON that does not parse or an
// unsupported format_version, like AnalyzePlan.
func AnalyzeDrift(planJSON []byte) (*Drift, error) {
	var doc struct {
		FormatVersion   string      `json:"format_version"`
		ResourceDrift   []driftItem `json:"resource_drift"`
		ResourceChanges []driftItem `json:"resource_changes"`
	}
	if err := json.Unmarshal(planJSON, &doc); err != nil {
		return nil, fmt.Errorf("%w: parsing tofu show -json output: %v", ErrUnreadablePlan, err)
	}
	if !slices.Contains(supportedFormatVersions, doc.FormatVersion) {
		return nil, fmt.Errorf("%w: plan format_version %q is not one the gate reads", ErrUnreadablePlan, doc.FormatVersion)
	}
	return &Drift{Drift: diffs(doc.ResourceDrift), Changes: diffs(doc.ResourceChanges)}, nil
}

// driftItem is one element of resource_drift or resource_changes.
type driftItem struct {
	Address string `json:"address"`
	Deposed string `json:"deposed"`
	Change  *struct {
		Actions      []string        `json:"actions"`
		Before       json.RawMessage `json:"before"`
		After        json.RawMessage `json:"after"`
		AfterUnknown json.RawMessage `json:"after_unknown"`
	} `json:"change"`
}

// diffs lists the items that change something, with their attributes.
func diffs(items []driftItem) []ResourceDiff {
	var out []ResourceDiff
	for _, it := range items {
		if it.Change == nil {
			continue
		}
		action := strings.Join(it.Change.Actions, "+")
		if action == "no-op" || action == "read" || action == "" {
			continue
		}
		addr := it.Address
		if it.Deposed != "" {
			addr += " (deposed " + it.Deposed + ")"
		}
		out = append(out, ResourceDiff{Address: addr, Action: action,
			Attributes: changedAttributes(it.Change.Before, it.Change.After, it.Change.AfterUnknown)})
	}
	return out
}

// changedAttributes names the top-level attributes whose values differ
// between two objects, or that are unknown after; nil unless both are
// objects. Values are compared, never returned.
func changedAttributes(before, after, unknown json.RawMessage) []string {
	var b, a, u map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil || b == nil || a == nil {
		return nil
	}
	_ = json.Unmarshal(unknown, &u)
	var names []string
	seen := map[string]bool{}
	for _, m := range []map[string]json.RawMessage{b, a, u} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			if !sameJSON(b[k], a[k]) || isTrue(u[k]) {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	return names
}

// sameJSON reports whether two JSON values are equal as written, ignoring
// insignificant space; a missing value equals null.
func sameJSON(x, y json.RawMessage) bool {
	norm := func(v json.RawMessage) []byte {
		var buf bytes.Buffer
		if len(v) == 0 || json.Compact(&buf, v) != nil {
			return []byte("null")
		}
		return buf.Bytes()
	}
	return bytes.Equal(norm(x), norm(y))
}

// isTrue reports whether an after_unknown entry marks anything unknown.
func isTrue(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	return s != "" && s != "false" && s != "null" && s != "{}" && s != "[]"
}
