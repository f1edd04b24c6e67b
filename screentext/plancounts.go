package screentext

import (
	"fmt"
	"strings"
)

// PlanCounts is the one sentence that says what a plan does, in tofu's
// words and arithmetic ("Plan: 2 to add, 0 to change, 1 to destroy"): add
// is the pure creates and replace the replacements, each of which counts
// once in add; change is the updates; destroy is every delete, replacements
// included (as the gate counts them). Replacements and forgets, when there
// are any, follow in parentheses: "2 to add, 0 to change, 2 to destroy (1
// replaced, 1 to forget)". A caller that wants the three figures alone
// passes add+replace as add and zero replace and forget.
func PlanCounts(add, change, destroy, replace, forget int) string {
	s := fmt.Sprintf("%d to add, %d to change, %d to destroy", add+replace, change, destroy)
	var extra []string
	if replace > 0 {
		extra = append(extra, fmt.Sprintf("%d replaced", replace))
	}
	if forget > 0 {
		extra = append(extra, fmt.Sprintf("%d to forget", forget))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}
