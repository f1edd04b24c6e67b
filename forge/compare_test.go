package forge

import (
	"slices"
	"testing"

	"github.com/switchtender/switchtender/planview"
)

// TestAnApplyIsComparedWithThePlanShownResourceByResource guards what a
// held merge apply says: a resource only the apply changes, one only the
// shown plan changed, one whose action moved (an update become a
// replace) and one whose attribute changes differ are each named; a
// resource changed the same way in both is not.
func TestAnApplyIsComparedWithThePlanShownResourceByResource(t *testing.T) {
	attr := func(path, before, after string) []planview.Attribute {
		return []planview.Attribute{{Path: path, Before: before, After: after}}
	}
	shown := &planview.ChangeSet{Resources: []planview.Resource{
		{Address: "terraform_data.same", Actions: []string{"create"}},
		{Address: "terraform_data.gone", Actions: []string{"create"}},
		{Address: "terraform_data.moved", Actions: []string{"update"}},
		{Address: "terraform_data.values", Actions: []string{"update"}, Attributes: attr("input", `"a"`, `"b"`)},
	}}
	now := &planview.ChangeSet{Resources: []planview.Resource{
		{Address: "terraform_data.same", Actions: []string{"create"}},
		{Address: "terraform_data.moved", Actions: []string{"delete", "create"}},
		{Address: "terraform_data.values", Actions: []string{"update"}, Attributes: attr("input", `"a"`, `"c"`)},
		{Address: "terraform_data.new", Actions: []string{"create"}},
	}}
	want := []string{
		"terraform_data.gone: create in the plan shown, not now",
		"terraform_data.moved: delete, create now, update in the plan shown",
		"terraform_data.new: create now, not in the plan shown",
		"terraform_data.values: update with other attribute changes than the plan shown",
	}
	if got := CompareChanges(shown, now); !slices.Equal(got, want) {
		t.Fatalf("CompareChanges =\n%q\nwant\n%q", got, want)
	}
	if got := CompareChanges(shown, shown); len(got) != 0 {
		t.Fatalf("a change set compared with itself: %q, want none", got)
	}
}
