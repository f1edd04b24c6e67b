package planview

import (
	"slices"
	"strings"
	"testing"
)

func TestAnUpdateListsOnlyTheChangedPathsAndCountsTheRest(t *testing.T) {
	before := `{"id":"i-1","name":"web","tags":{"env":"prod","team":"a","a b":"x"},"rule":[{"port":80,"cidr":"0.0.0.0/0"},{"port":443,"cidr":"10.0.0.0/8"}],"count":2,"gone":"old","empty":[],"nothing":null}`
	after := `{"id":"i-1","name":"web","tags":{"env":"stage","team":"a","a b":"y","new-key":"n"},"rule":[{"port":80,"cidr":"0.0.0.0/0"},{"port":8443,"cidr":"10.0.0.0/8"}],"count":3,"empty":[],"nothing":null}`
	cs := mustBuild(t, planWith(change("terraform_data.x", `["update"]`, `"before":`+before+`,"after":`+after)))
	r := resourceAt(t, cs, "terraform_data.x")
	want := []string{"count", "gone", `tags["a b"]`, "tags.env", `tags["new-key"]`, "rule[1].port"}
	slices.Sort(want)
	got := slices.Clone(paths(r))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("changed paths %v, want %v", paths(r), want)
	}
	// id, name, tags.team, rule[0].port, rule[0].cidr, rule[1].cidr, empty.
	if r.Unchanged != 7 {
		t.Errorf("unchanged %d, want 7", r.Unchanged)
	}
	for path, ba := range map[string][2]string{
		"count":           {"2", "3"},
		"gone":            {`"old"`, ""},
		"tags.env":        {`"prod"`, `"stage"`},
		`tags["new-key"]`: {"", `"n"`},
		"rule[1].port":    {"443", "8443"},
	} {
		if a := attributeAt(t, r, path); a.Before != ba[0] || a.After != ba[1] {
			t.Errorf("%s: %q -> %q, want %q -> %q", path, a.Before, a.After, ba[0], ba[1])
		}
	}
}

func TestACreateListsEveryAttributeThatIsSet(t *testing.T) {
	after := `{"input":{"name":"r","ports":[80,443]},"tags":{},"triggers_replace":null}`
	cs := mustBuild(t, planWith(change("terraform_data.x", `["create"]`,
		`"before":null,"after":`+after+`,"after_unknown":{"id":true,"output":true,"input":{"ports":[false,false]}}`)))
	r := resourceAt(t, cs, "terraform_data.x")
	want := []string{"id", "input.name", "input.ports[0]", "input.ports[1]", "output", "tags"}
	if !slices.Equal(paths(r), want) {
		t.Errorf("paths %v, want %v", paths(r), want)
	}
	for _, a := range r.Attributes {
		if a.Before != "" {
			t.Errorf("%s has a before value %q", a.Path, a.Before)
		}
	}
	if a := attributeAt(t, r, "id"); !a.Unknown || a.After != "" {
		t.Errorf("id: %+v, want unknown", a)
	}
	if a := attributeAt(t, r, "tags"); a.After != "{}" {
		t.Errorf("tags: %+v", a)
	}
	if r.Unchanged != 0 {
		t.Errorf("unchanged %d", r.Unchanged)
	}
}

func TestAnAfterValueKnownOnlyAtApplyIsMarkedUnknown(t *testing.T) {
	cs := mustBuild(t, planWith(change("terraform_data.x", `["update"]`,
		`"before":{"input":"a","output":"a","list":[1,2]},"after":{"input":"b","list":[1]},"after_unknown":{"output":true,"list":[false,true]}`)))
	r := resourceAt(t, cs, "terraform_data.x")
	if a := attributeAt(t, r, "output"); !a.Unknown || a.Before != `"a"` || a.After != "" {
		t.Errorf("output: %+v", a)
	}
	if a := attributeAt(t, r, "list[1]"); !a.Unknown || a.Before != "2" {
		t.Errorf("list[1]: %+v", a)
	}
}

func TestThePathsThatForceAReplacementAreMarked(t *testing.T) {
	cs := committedChangeSet(t, "replace_triggers")
	r := resourceAt(t, cs, "terraform_data.server")
	if !slices.Equal(r.ReplacePaths, []string{"triggers_replace"}) {
		t.Errorf("replace paths %v", r.ReplacePaths)
	}
	a := attributeAt(t, r, "triggers_replace[0]")
	if !a.ForcesReplacement || a.Before != `"image-v1"` || a.After != `"image-v2"` {
		t.Errorf("triggers_replace[0]: %+v", a)
	}
	for _, a := range r.Attributes {
		if a.ForcesReplacement != strings.HasPrefix(a.Path, "triggers_replace") {
			t.Errorf("%s forces replacement: %v", a.Path, a.ForcesReplacement)
		}
	}
	// Below and above a replace path.
	cs = mustBuild(t, planWith(change("terraform_data.x", `["delete","create"]`,
		`"before":{"a":{"b":{"c":1}},"d":{"e":1},"f":1},"after":{"a":{"b":{"c":2}},"d":{"e":2},"f":2},"replace_paths":[["a","b"],["d","e","g"],[7]]`)))
	r = resourceAt(t, cs, "terraform_data.x")
	for path, forces := range map[string]bool{"a.b.c": true, "d.e": true, "f": false} {
		if a := attributeAt(t, r, path); a.ForcesReplacement != forces {
			t.Errorf("%s forces replacement %v, want %v", path, a.ForcesReplacement, forces)
		}
	}
	if !slices.Equal(r.ReplacePaths, []string{"a.b", "d.e.g", "[7]"}) {
		t.Errorf("replace paths %v", r.ReplacePaths)
	}
}

func TestValuesAreShownAsOpenTofuLiterals(t *testing.T) {
	long := strings.Repeat("é", 300)
	before := `{"s":"plain","q":"say \"hi\" \\ back","u":"naïve ☃","n":1.50,"big":12345678901234567890,"b":true,"l":["a",1,null],"o":{"k":"v","a b":2},"long":"` + long + `","c":` + "\"tab\\there\"" + `}`
	after := `{"s":"plain2","q":"x","u":"y","n":2,"big":1,"b":false,"l":"now a string","o":"now a string","long":5,"c":"d"}`
	cs := mustBuild(t, planWith(change("terraform_data.x", `["update"]`, `"before":`+before+`,"after":`+after)))
	r := resourceAt(t, cs, "terraform_data.x")
	for path, want := range map[string]string{
		"s":   `"plain"`,
		"q":   `"say \"hi\" \\ back"`,
		"u":   `"naïve ☃"`,
		"n":   "1.50",
		"big": "12345678901234567890",
		"b":   "true",
		"l":   `["a", 1, null]`,
		"o":   `{ "a b" = 2, k = "v" }`,
		"c":   `"tab\there"`,
	} {
		if a := attributeAt(t, r, path); a.Before != want {
			t.Errorf("%s: before %s, want %s", path, a.Before, want)
		}
	}
	a := attributeAt(t, r, "long")
	if n := len([]rune(a.Before)); n > maxValueRunes || !strings.HasSuffix(a.Before, "…") || !strings.HasPrefix(a.Before, `"éé`) {
		t.Errorf("a 300-rune string shows as %d runes: %q", n, a.Before)
	}
}

func TestALargeCollectionIsSummarised(t *testing.T) {
	var elems []string
	for range 100 {
		elems = append(elems, `"element"`)
	}
	cs := mustBuild(t, planWith(change("terraform_data.x", `["update"]`,
		`"before":{"l":[`+strings.Join(elems, ",")+`]},"after":{"l":"x"}`)))
	if a := attributeAt(t, resourceAt(t, cs, "terraform_data.x"), "l"); a.Before != "[…100 elements]" {
		t.Errorf("before %q", a.Before)
	}
}

func TestAttributesOfDriftAreListedApart(t *testing.T) {
	plan := []byte(`{"format_version":"1.2",
	"resource_drift":[` + change("terraform_data.edited", `["update"]`, `"before":{"input":"applied"},"after":{"input":"edited by hand"}`) + `,` +
		change("terraform_data.deleted_by_hand", `["delete"]`, `"before":{"input":"a"},"after":null`) + `],
	"resource_changes":[` + change("terraform_data.edited", `["update"]`, `"before":{"input":"edited by hand"},"after":{"input":"applied"}`) + `]}`)
	cs := mustBuild(t, plan)
	if len(cs.Drift) != 2 || cs.Counts.Drift != 2 || len(cs.Resources) != 1 || cs.Counts.Update != 1 || cs.Counts.Destroy != 0 {
		t.Fatalf("drift %+v, resources %+v, counts %+v", cs.Drift, cs.Resources, cs.Counts)
	}
	if cs.Drift[0].Section != SectionDelete || cs.Drift[1].Section != SectionUpdate {
		t.Errorf("drift sections %s, %s", cs.Drift[0].Section, cs.Drift[1].Section)
	}
	if a := cs.Drift[1].Attributes; len(a) != 1 || a[0].Before != `"applied"` || a[0].After != `"edited by hand"` {
		t.Errorf("drift attributes %+v", a)
	}
}

func TestOutputsThatChangeAreListedByName(t *testing.T) {
	cs := committedChangeSet(t, "output")
	got := map[string]Output{}
	var names []string
	for _, o := range cs.Outputs {
		got[o.Name] = o
		names = append(names, o.Name)
	}
	if !slices.Equal(names, []string{"added", "computed", "endpoint", "ports", "removed"}) {
		t.Errorf("outputs %v", names)
	}
	for name, want := range map[string][3]string{
		"added":    {"create", "", `{ region = "eu-west-1", zones = 3 }`},
		"endpoint": {"update", `"https://old.example.com"`, `"https://new.example.com"`},
		"ports":    {"update", "[80, 443]", "[80, 443, 8443]"},
		"removed":  {"delete", `"goes away"`, ""},
	} {
		o := got[name]
		if joinActions(o.Actions) != want[0] || o.Change.Before != want[1] || o.Change.After != want[2] || o.Change.Path != name {
			t.Errorf("%s: %+v, want %v", name, o, want)
		}
	}
	if cs.Counts.Outputs != 5 || len(cs.Resources) != 0 {
		t.Errorf("counts %+v, resources %+v", cs.Counts, cs.Resources)
	}
}
