package forge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/switchtender/switchtender/planview"
)

// MaxDifferences is how many differences CompareChanges names; past it,
// one more line says how many it left out.
const MaxDifferences = 50

// CompareChanges says, resource by resource, how the change set now (the
// apply a merge proposed) differs from was (the plan last shown on the
// pull request): a resource only one of them changes, a resource whose
// actions differ, or whose changed attributes differ (by path, values and
// the fingerprints of sensitive values, so no value is named). Lines are
// sorted by address; none means both change the same resources the same
// way. Values in the lines are raw: the renderer escapes them.
func CompareChanges(was, now *planview.ChangeSet) []string {
	before, after := byAddress(was), byAddress(now)
	var out []string
	for addr, r := range after {
		w, ok := before[addr]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s now, not in the plan shown", addr, actions(r)))
		case actions(w) != actions(r):
			out = append(out, fmt.Sprintf("%s: %s now, %s in the plan shown", addr, actions(r), actions(w)))
		case attributes(w) != attributes(r):
			out = append(out, fmt.Sprintf("%s: %s with other attribute changes than the plan shown", addr, actions(r)))
		}
	}
	for addr, w := range before {
		if _, ok := after[addr]; !ok {
			out = append(out, fmt.Sprintf("%s: %s in the plan shown, not now", addr, actions(w)))
		}
	}
	sort.Strings(out)
	if len(out) > MaxDifferences {
		out = append(out[:MaxDifferences], fmt.Sprintf("%d more differences", len(out)-MaxDifferences))
	}
	return out
}

// byAddress indexes cs's resource changes by address (deposed objects
// apart).
func byAddress(cs *planview.ChangeSet) map[string]planview.Resource {
	m := map[string]planview.Resource{}
	if cs == nil {
		return m
	}
	for _, r := range cs.Resources {
		key := r.Address
		if r.Deposed != "" {
			key += " (deposed " + r.Deposed + ")"
		}
		m[key] = r
	}
	return m
}

// actions is a resource change's actions as one word ("delete, create").
func actions(r planview.Resource) string { return strings.Join(r.Actions, ", ") }

// attributes is a comparable form of a resource change's changed
// attributes.
func attributes(r planview.Resource) string {
	var b strings.Builder
	for _, a := range r.Attributes {
		fmt.Fprintf(&b, "%q %q %q %t %t %s %s\n", a.Path, a.Before, a.After, a.Unknown, a.Sensitive, a.BeforeFingerprint, a.AfterFingerprint)
	}
	return b.String()
}
