package gate

import (
	"fmt"
	"slices"
	"strings"
)

// GroupPrefix marks a group in a rule's approvers: "group:platform" names
// every member of group platform (a group block, or a certificate whose
// principal grants it).
const GroupPrefix = "group:"

// Approver is a person as a rule's approvers see them: a name and the
// groups they belong to now.
type Approver struct {
	Name   string
	Groups []string
}

// Names reports whether approvers (user names and "group:NAME") name who.
// An empty list names everyone (anyone with the approve role may release).
func Names(approvers []string, who Approver) bool {
	if len(approvers) == 0 {
		return true
	}
	for _, a := range approvers {
		if g, ok := strings.CutPrefix(a, GroupPrefix); ok {
			if slices.Contains(who.Groups, g) {
				return true
			}
		} else if a == who.Name {
			return true
		}
	}
	return false
}

// Tally is where a hold stands: the different people whose approvals count
// toward it, in the order they approved, and how many it needs.
type Tally struct {
	By   []string
	Need int
}

// Count tallies the approvals by (names in the order they approved) for a
// hold that needs min different people (min < 1 means 1): a name counts
// once however often it appears, and one of except (the requester, who
// never counts) not at all.
func Count(min int, by []string, except ...string) Tally {
	t := Tally{Need: max(min, 1)}
	for _, b := range by {
		if b == "" || slices.Contains(except, b) || slices.Contains(t.By, b) {
			continue
		}
		t.By = append(t.By, b)
	}
	return t
}

// Released reports whether the tally reached what the hold needs.
func (t Tally) Released() bool { return len(t.By) >= t.Need }

// String says where the tally stands for people: "1 of 2 approvals:
// alice". A hold that needs one approval and has none says "no approval
// yet".
func (t Tally) String() string {
	if len(t.By) == 0 && t.Need == 1 {
		return "no approval yet"
	}
	word := "approvals"
	if t.Need == 1 {
		word = "approval"
	}
	s := fmt.Sprintf("%d of %d %s", len(t.By), t.Need, word)
	if len(t.By) > 0 {
		s += ": " + strings.Join(t.By, ", ")
	}
	return s
}
