package planview

import (
	"fmt"
	"strings"
	"testing"
)

// TestEveryChangedJSONPathIsListedOrCounted checks that a JSON string
// with more changed paths than the view lists says how many changed in
// all and how many it leaves out, and that a comparison listing changes is
// never read as whitespace or key order only.
func TestEveryChangedJSONPathIsListedOrCounted(t *testing.T) {
	var before, after []string
	for i := range 150 {
		before, after = append(before, fmt.Sprint(i)), append(after, fmt.Sprint(i+1000))
	}
	cs := mustBuild(t, inputChange("["+strings.Join(before, ",")+"]", "["+strings.Join(after, ",")+"]"))
	text := Text(cs, 0)
	mustHave(t, text,
		"~ input = JSON, 150 paths changed:",
		"~ $[99] = 99 -> 1099",
		"… 50 more changed paths not shown (the first 100 are)")

	hand := &ChangeSet{Resources: []Resource{{Section: SectionUpdate, Address: "terraform_data.x", Actions: []string{"update"},
		Attributes: []Attribute{{Path: "policy", JSON: &JSONDiff{FormatOnly: true, Changes: []Attribute{{Path: "$.a", Before: "1", After: "2"}}}}}}}}
	if text := Text(hand, 0); strings.Contains(text, "key order only") || !strings.Contains(text, "~ $.a = 1 -> 2") {
		t.Fatalf("a comparison with a changed path reads:\n%s", text)
	}
}
