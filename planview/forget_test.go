package planview

import (
	"strings"
	"testing"
)

// TestAForgetIsLabelledAsLeavingStateNotDestroying checks that forgotten
// resources (and those forgotten then created) are counted apart from the
// destroys, under headings that say they leave state and are not
// destroyed, and never under a destroying heading.
func TestAForgetIsLabelledAsLeavingStateNotDestroying(t *testing.T) {
	text := Text(everySection(t), 0)
	lines := strings.Split(text, "\n")
	for _, want := range []string{
		"Destroys 2 (1 replaced, 1 deleted)",
		"Leaves state, not destroyed: 2 (1 forgotten, 1 forgotten then created)",
		"Forgotten (1): leaves state, not destroyed",
		"Forgotten, then created (1): the old object leaves state, not destroyed",
	} {
		if lineIndex(lines, want) < 0 {
			t.Errorf("%q is not in the text:\n%s", want, text)
		}
	}
	forget := lineIndex(lines, "forget aws_iam_role.legacy")
	heading := lineIndex(lines, "Forgotten (1)")
	deleted := lineIndex(lines, "Deleted (1)")
	if forget < 0 || heading < 0 || deleted < 0 || !(deleted < heading && heading < forget) {
		t.Fatalf("the forget is not under its own heading after the deletes:\n%s", text)
	}
	for _, l := range lines[heading:forget] {
		if strings.Contains(strings.ToLower(l), "destroyed,") || strings.HasPrefix(l, "Deleted") {
			t.Fatalf("a destroying heading stands over the forget: %q", l)
		}
	}
}

// TestAForgetIsNeverCountedAsADestroy checks that the destroy count the
// view shows is the one the rules measure (every delete, replacements
// included) and that a change set of forgets alone destroys nothing but
// still says, in its first lines and in its summary, what leaves state.
func TestAForgetIsNeverCountedAsADestroy(t *testing.T) {
	cs := &ChangeSet{
		Counts:    Counts{Forget: 2},
		Resources: []Resource{{Section: SectionForget, Address: "a.x", Actions: []string{"forget"}}, {Section: SectionForget, Address: "a.y", Actions: []string{"forget"}}},
	}
	text := Text(cs, 0)
	if !strings.HasPrefix(text, "Destroys 0 (0 replaced, 0 deleted)\nLeaves state, not destroyed: 2 (2 forgotten, 0 forgotten then created)\n") {
		t.Fatalf("the counts of a plan of forgets read:\n%s", text)
	}
	if s := Summary(cs, 200, "show r-1 --changes"); !strings.Contains(s, "Leaves state, not destroyed: 2") {
		t.Fatalf("the summary hides the forgets:\n%s", s)
	}
}
