package planview

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// inputChange is a plan of one update of terraform_data.x whose input
// string goes from before to after.
func inputChange(before, after string) []byte {
	return planWith(change("terraform_data.x", `["update"]`,
		fmt.Sprintf(`"before":{"input":%s},"after":{"input":%s}`, jsonString(before), jsonString(after))))
}

// TestAJSONStringReadersReadTwoWaysIsNeverCalledFormatOnly checks that a
// string holding JSON that readers read differently (a repeated key: the
// last wins in encoding/json, the first in others; half a surrogate pair,
// which decodes to U+FFFD whatever it was) is shown as text, never as
// "whitespace or key order only", while documents every reader reads
// alike still are.
func TestAJSONStringReadersReadTwoWaysIsNeverCalledFormatOnly(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{`{"a":1,"a":2}`, `{"a":1}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"a":1,"a":2}`, `{"a":2,"a":1}`},
		{`[{"Effect":"Deny","Effect":"Allow"}]`, `[{"Effect":"Allow"}]`},
		{`{"a":"\ud800"}`, `{"a":"\udbff"}`},
		{`{"a":"\udc00\ud800"}`, `{"a":"\ud800\udc01"}`},
	} {
		cs := mustBuild(t, inputChange(c.before, c.after))
		a := attributeAt(t, resourceAt(t, cs, "terraform_data.x"), "input")
		text := Text(cs, 0)
		if a.JSON != nil || strings.Contains(text, "whitespace or key order only") {
			t.Errorf("%s -> %s is compared as JSON (%+v):\n%s", c.before, c.after, a.JSON, text)
		}
		if a.Before == a.After {
			t.Errorf("%s -> %s reads %s -> %s", c.before, c.after, a.Before, a.After)
		}
	}
	for _, c := range []struct{ before, after string }{
		{`{"b":1,"a":2}`, "{\n  \"a\": 2,\n  \"b\": 1\n}"},
		{`{"a":"\ud83d\ude00"}`, `{"a":"😀"}`},
		{`{"a":"\u0041"}`, `{"a":"A"}`},
	} {
		cs := mustBuild(t, inputChange(c.before, c.after))
		a := attributeAt(t, resourceAt(t, cs, "terraform_data.x"), "input")
		if a.JSON == nil || !a.JSON.FormatOnly {
			t.Errorf("%s -> %s, the same JSON, is not format only: %+v", c.before, c.after, a)
		}
	}
}
