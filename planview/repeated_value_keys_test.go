package planview

import (
	"fmt"
	"strings"
	"testing"
)

// TestARepeatedKeyInAValueReadsAsItsLast checks that an object value
// whose key is repeated reads as its last member, as encoding/json and the
// gate's policy input read it, whether its keys come in order or not and
// however many it has: a change of that last member is listed, never
// counted among the unchanged attributes.
func TestARepeatedKeyInAValueReadsAsItsLast(t *testing.T) {
	many := ""
	for _, k := range strings.Split("b c d e f g h i j k", " ") {
		many += fmt.Sprintf(`,%q:0`, k)
	}
	for name, before := range map[string]string{
		"in order":        `{"a":1,"a":2}`,
		"out of order":    `{"z":0,"a":1,"a":2}`,
		"among many keys": `{"a":1,"a":2` + many + `}`,
	} {
		after := strings.Replace(before, `"a":1,"a":2`, `"a":1`, 1)
		cs := mustBuild(t, planWith(change("terraform_data.x", `["update"]`,
			fmt.Sprintf(`"before":{"input":%s},"after":{"input":%s}`, before, after))))
		r := resourceAt(t, cs, "terraform_data.x")
		a := attributeAt(t, r, "input.a")
		if a.Before != "2" || a.After != "1" {
			t.Errorf("%s: input.a reads %q -> %q, want 2 -> 1 (the last member before)", name, a.Before, a.After)
		}
		if len(r.Attributes) != 1 {
			t.Errorf("%s: the change lists %v, want input.a alone", name, paths(r))
		}
	}
}
