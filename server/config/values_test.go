package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	choice := &SurveyField{Name: "size", Type: TypeChoice, Choices: []string{"small", "large"}}
	cases := []struct {
		field *SurveyField
		in    string
		want  any
		err   string // substring of the error; "" = no error
	}{
		{&SurveyField{Name: "region", Type: TypeString}, "eu-west-1", "eu-west-1", ""},
		{&SurveyField{Name: "region", Type: TypeString}, " spaced, kept ", " spaced, kept ", ""},
		{&SurveyField{Name: "region", Type: TypeString}, "", "", ""},
		{&SurveyField{Name: "count", Type: TypeNumber}, "3", json.Number("3"), ""},
		{&SurveyField{Name: "count", Type: TypeNumber}, " -2.5 ", json.Number("-2.5"), ""},
		{&SurveyField{Name: "count", Type: TypeNumber}, "1e3", json.Number("1e3"), ""},
		{&SurveyField{Name: "count", Type: TypeNumber}, "123456789012345678901234567890", json.Number("123456789012345678901234567890"), ""},
		{&SurveyField{Name: "count", Type: TypeNumber}, "three", nil, `survey field "count" wants a number, got "three"`},
		{&SurveyField{Name: "count", Type: TypeNumber}, "0x10", nil, `wants a number, got "0x10"`},
		{&SurveyField{Name: "count", Type: TypeNumber}, "NaN", nil, `wants a number`},
		{&SurveyField{Name: "count", Type: TypeNumber}, "3 4", nil, `wants a number`},
		{&SurveyField{Name: "count", Type: TypeNumber}, `"3"`, nil, `wants a number`},
		{&SurveyField{Name: "count", Type: TypeNumber}, "", nil, `wants a number, got ""`},
		{&SurveyField{Name: "on", Type: TypeBool}, "true", true, ""},
		{&SurveyField{Name: "on", Type: TypeBool}, "false", false, ""},
		{&SurveyField{Name: "on", Type: TypeBool}, "yes", nil, `survey field "on" wants true or false, got "yes"`},
		{&SurveyField{Name: "on", Type: TypeBool}, "1", nil, `wants true or false`},
		{&SurveyField{Name: "zones", Type: TypeList}, `["a", 2, true, {"k": "v"}]`, []any{"a", json.Number("2"), true, map[string]any{"k": "v"}}, ""},
		{&SurveyField{Name: "zones", Type: TypeList}, "a, b,c", []any{"a", "b", "c"}, ""},
		{&SurveyField{Name: "zones", Type: TypeList}, "single", []any{"single"}, ""},
		{&SurveyField{Name: "zones", Type: TypeList}, "", []any{}, ""},
		{&SurveyField{Name: "zones", Type: TypeList}, "[]", []any{}, ""},
		{&SurveyField{Name: "zones", Type: TypeList}, "a,,b", nil, `survey field "zones" wants a list, got "a,,b", which has an empty item`},
		{&SurveyField{Name: "zones", Type: TypeList}, `["a",`, nil, `not a JSON array`},
		{&SurveyField{Name: "zones", Type: TypeList}, `[1] [2]`, nil, `not a JSON array`},
		{&SurveyField{Name: "tags", Type: TypeMap}, `{"team": "infra", "n": 1.50}`, map[string]any{"team": "infra", "n": json.Number("1.50")}, ""},
		{&SurveyField{Name: "tags", Type: TypeMap}, `team=infra`, nil, `survey field "tags" wants a map, got "team=infra", which is not a JSON object`},
		{&SurveyField{Name: "tags", Type: TypeMap}, `["a"]`, nil, `not a JSON object`},
		{choice, "small", "small", ""},
		{choice, "large", "large", ""},
		{choice, "Small", nil, `survey field "size" wants one of "small", "large", got "Small"`},
		{choice, "", nil, `wants one of`},
		{&SurveyField{Name: "odd", Type: "integer"}, "1", nil, `unknown type "integer"`},
	}
	for _, tc := range cases {
		got, err := tc.field.ParseAnswer(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: err = %v, want %q", tc.field.Type, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tc.field.Type, tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q = %#v, want %#v", tc.field.Type, tc.in, got, tc.want)
		}
	}
}

// TestVarsNumbers checks numbers keep their exact decimal text from the
// configuration into vars (no float64 rounding).
func TestVarsNumbers(t *testing.T) {
	checkout := t.TempDir()
	src := `project "p" { path = "` + checkout + `" }
template "t" {
  project = "p"
  command = "x"
  vars = {
    a = 0.1
    b = 9007199254740993
    c = 1e3
    d = -0
    e = 3.14159265358979323846264338327950288
    f = [1, 2.5]
  }
}`
	cfg, err := Parse([]byte(src), "n.hcl", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": json.Number("0.1"),
		"b": json.Number("9007199254740993"),
		"c": json.Number("1000"),
		"d": json.Number("0"),
		"e": json.Number("3.14159265358979323846264338327950288"),
		"f": []any{json.Number("1"), json.Number("2.5")},
	}
	if got := cfg.Templates["t"].Vars; !reflect.DeepEqual(got, want) {
		t.Errorf("vars = %#v\nwant %#v", got, want)
	}
}
