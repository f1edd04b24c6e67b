package gate

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAnalyzePlanRealShrinkCountsDestroys(t *testing.T) {
	s, err := AnalyzePlan(plans(t).shrink)
	if err != nil {
		t.Fatal(err)
	}
	if s.FormatVersion != "1.2" {
		t.Errorf("FormatVersion = %q, want 1.2 (OpenTofu v1.12.6)", s.FormatVersion)
	}
	if s.Destroy != 2 || s.Replace != 0 || s.Add != 0 || s.Change != 0 || s.Forget != 0 {
		t.Errorf("counts = add %d change %d destroy %d replace %d forget %d, want destroy 2 only",
			s.Add, s.Change, s.Destroy, s.Replace, s.Forget)
	}
	want := []string{"terraform_data.r[1]", "terraform_data.r[2]"}
	if got := s.ByAction[ActionDelete]; !slices.Equal(got, want) {
		t.Errorf("ByAction[delete] = %v, want %v", got, want)
	}
	if len(s.Changes) != 2 {
		t.Errorf("Changes = %+v, want the 2 deletes (no-ops left out)", s.Changes)
	}
	for _, c := range s.Changes {
		if c.Type != "terraform_data" || c.Action != ActionDelete || !slices.Equal(c.Actions, []string{"delete"}) {
			t.Errorf("change %+v, want a terraform_data delete", c)
		}
	}
}

func TestAnalyzePlanRealReplaceIsDestroy(t *testing.T) {
	s, err := AnalyzePlan(plans(t).replace)
	if err != nil {
		t.Fatal(err)
	}
	if s.Destroy != 3 || s.Replace != 3 || s.Add != 0 {
		t.Errorf("destroy %d replace %d add %d, want destroy 3 replace 3 add 0", s.Destroy, s.Replace, s.Add)
	}
	want := []string{"terraform_data.r[0]", "terraform_data.r[1]", "terraform_data.r[2]"}
	if got := s.ByAction[ActionReplace]; !slices.Equal(got, want) {
		t.Errorf("ByAction[replace] = %v, want %v", got, want)
	}
	if got := s.DestroyedAddresses(); !slices.Equal(got, want) {
		t.Errorf("DestroyedAddresses = %v, want %v", got, want)
	}
}

func TestAnalyzePlanRealForgetIsNotDestroy(t *testing.T) {
	s, err := AnalyzePlan(plans(t).forget)
	if err != nil {
		t.Fatal(err)
	}
	if s.Forget != 1 || s.Destroy != 0 {
		t.Errorf("forget %d destroy %d, want forget 1 destroy 0", s.Forget, s.Destroy)
	}
	if got := s.ByAction[ActionForget]; !slices.Equal(got, []string{"terraform_data.protected[0]"}) {
		t.Errorf("ByAction[forget] = %v", got)
	}
}

func TestAnalyzePlanRealNoChange(t *testing.T) {
	s, err := AnalyzePlan(plans(t).noChange)
	if err != nil {
		t.Fatal(err)
	}
	if s.Destroy+s.Add+s.Change+s.Replace+s.Forget != 0 || len(s.Changes) != 0 || len(s.ByAction) != 0 {
		t.Errorf("summary of an unchanged plan = %+v, want empty", s)
	}
}

func TestClassifyEveryOpenTofuActionList(t *testing.T) {
	// The lists OpenTofu v1.12.6 writes (internal/command/jsonplan actionString).
	cases := map[string]string{
		`"no-op"`:           "",
		`"read"`:            "",
		`"create"`:          ActionCreate,
		`"update"`:          ActionUpdate,
		`"delete"`:          ActionDelete,
		`"delete","create"`: ActionReplace,
		`"create","delete"`: ActionReplace,
		`"forget"`:          ActionForget,
		`"forget","create"`: ActionForgetCreate,
	}
	for actions, want := range cases {
		doc := `{"format_version":"1.2","resource_changes":[{"address":"terraform_data.x","mode":"managed","type":"terraform_data","name":"x","change":{"actions":[` + actions + `]}}]}`
		s, err := AnalyzePlan([]byte(doc))
		if err != nil {
			t.Errorf("actions [%s]: %v", actions, err)
			continue
		}
		var got string
		if len(s.Changes) == 1 {
			got = s.Changes[0].Action
		}
		if got != want {
			t.Errorf("actions [%s]: action %q, want %q", actions, got, want)
		}
		wantDestroy := 0
		if strings.Contains(actions, `"delete"`) {
			wantDestroy = 1
		}
		if s.Destroy != wantDestroy {
			t.Errorf("actions [%s]: destroy %d, want %d", actions, s.Destroy, wantDestroy)
		}
	}
}

func TestAnalyzePlanImport(t *testing.T) {
	doc := `{"format_version":"1.2","resource_changes":[
	  {"address":"terraform_data.a","type":"terraform_data","change":{"actions":["no-op"],"importing":{"id":"x"}}},
	  {"address":"terraform_data.b","type":"terraform_data","change":{"actions":["update"],"importing":{"id":"y"}}}]}`
	s, err := AnalyzePlan([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s.Import != 2 || s.Change != 1 || !slices.Equal(s.ByAction[ActionImport], []string{"terraform_data.a"}) {
		t.Errorf("summary = %+v, want 2 imports, 1 update, a listed under import", s)
	}
}

func TestAnalyzePlanFailsClosed(t *testing.T) {
	cases := map[string]string{
		"not JSON":              `{"format_version": "1.2", "resource_changes": [`,
		"empty":                 ``,
		"array":                 `[]`,
		"no format_version":     `{"resource_changes": []}`,
		"format 2.0":            `{"format_version": "2.0", "resource_changes": []}`,
		"format 1.3":            `{"format_version": "1.3", "resource_changes": []}`,
		"unknown action":        `{"format_version": "1.2", "resource_changes": [{"address": "a.b", "change": {"actions": ["obliterate"]}}]}`,
		"delete forget":         `{"format_version": "1.2", "resource_changes": [{"address": "a.b", "change": {"actions": ["delete", "forget"]}}]}`,
		"empty actions":         `{"format_version": "1.2", "resource_changes": [{"address": "a.b", "change": {"actions": []}}]}`,
		"no change":             `{"format_version": "1.2", "resource_changes": [{"address": "a.b"}]}`,
		"no address":            `{"format_version": "1.2", "resource_changes": [{"change": {"actions": ["delete"]}}]}`,
		"actions not a list":    `{"format_version": "1.2", "resource_changes": [{"address": "a.b", "change": {"actions": "delete"}}]}`,
		"resource_changes type": `{"format_version": "1.2", "resource_changes": {"a": 1}}`,
	}
	for name, doc := range cases {
		s, err := AnalyzePlan([]byte(doc))
		if err == nil {
			t.Errorf("%s: no error, summary %+v", name, s)
			continue
		}
		if s != nil {
			t.Errorf("%s: summary %+v returned with error", name, s)
		}
		if !errors.Is(err, ErrUnreadablePlan) {
			t.Errorf("%s: error %v does not wrap ErrUnreadablePlan", name, err)
		}
	}
}

func TestSensitiveValuesReal(t *testing.T) {
	vals, err := SensitiveValues(plans(t).shrink)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"s3cret-value",             // sensitive variable, and terraform_data.s input/output
		"tok-s3cret-value",         // sensitive output
		"eu-hidden-1",              // element of a sensitive map variable
		`{"region":"eu-hidden-1"}`, // the map's JSON form
	} {
		if !slices.Contains(vals, want) {
			t.Errorf("SensitiveValues lacks %q; got %q", want, vals)
		}
	}
	for _, v := range vals {
		if strings.Contains(v, "plainly-visible") || v == "3" || v == "a" {
			t.Errorf("SensitiveValues includes non-sensitive %q", v)
		}
	}
}

func TestSensitiveValuesShapes(t *testing.T) {
	doc := `{"format_version":"1.2",
	  "resource_changes":[{"address":"x.y","change":{"actions":["update"],
	    "before":{"a":"keep","n":42,"b":true,"l":["l0","l1"],"o":{"k":"deep"}},
	    "before_sensitive":{"n":true,"b":true,"l":[false,true],"o":{"k":true}},
	    "after":{"a":"whole","n":1.5},"after_sensitive":true}}],
	  "output_changes":{"o":{"actions":["create"],"after":["x1",7],"after_sensitive":true,"before_sensitive":false}}}`
	vals, err := SensitiveValues([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	// The sensitive bool "b" is left out on purpose (one bit; masking it
	// would blank every "true" in the log).
	want := []string{"1.5", "42", "7", `["x1",7]`, "deep", "l1", "whole", "x1", `{"a":"whole","n":1.5}`}
	if !slices.Equal(vals, want) {
		t.Errorf("SensitiveValues = %q\nwant %q", vals, want)
	}
	// planned_values / prior_state: outputs marked sensitive, resources at
	// their sensitive_values, child modules; nulls where tofu may write them.
	doc = `{"format_version":"1.2","resource_changes":null,"output_changes":{"n":null},
	  "planned_values":{"outputs":{"pw":{"sensitive":true,"value":"out-secret"},"pub":{"sensitive":false,"value":"out-public"}},
	    "root_module":{"resources":[{"address":"a.b","values":{"k":"res-public","s":"res-secret"},"sensitive_values":{"s":true}}],
	      "child_modules":[{"resources":[{"values":{"deep":["kid-secret"]},"sensitive_values":{"deep":[true]}}]}]}},
	  "prior_state":{"format_version":"1.0","values":{"outputs":{"old":{"sensitive":true,"value":{"x":1}}},"root_module":null}},
	  "configuration":{"root_module":{"variables":{"v":{"sensitive":true},"w":{}}}},
	  "variables":{"v":{"value":["var-secret"]},"w":{"value":"var-public"}}}`
	vals, err = SensitiveValues([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"1", `["var-secret"]`, "kid-secret", "out-secret", "res-secret", "var-secret", `{"x":1}`}
	if !slices.Equal(vals, want) {
		t.Errorf("SensitiveValues = %q\nwant %q", vals, want)
	}
	if _, err := SensitiveValues([]byte(`{"format_version":`)); !errors.Is(err, ErrUnreadablePlan) {
		t.Errorf("unparsable JSON: error %v, want ErrUnreadablePlan", err)
	}
}
