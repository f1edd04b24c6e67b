package planview

import "testing"

// TestAnOutputWhoseValueReadsTheSameSaysOnlyItsTypeChanges checks a real
// OpenTofu plan that updates an output from tolist(["a", "b"]) to the
// tuple ["a", "b"]: the JSON rendering carries no types, so both sides read
// the same, and the view says that only the type changes rather than show
// a change that reads as none.
func TestAnOutputWhoseValueReadsTheSameSaysOnlyItsTypeChanges(t *testing.T) {
	mustHave(t, Text(committedChangeSet(t, "output_type"), 0),
		`~ zones = ["a", "b"] -> ["a", "b"] (the same value: only its type changes)`)
}
