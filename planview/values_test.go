package planview

import (
	"strings"
	"testing"
)

// textOf is the unwrapped text of a change set of the one resource r.
func textOf(r Resource) string {
	return Text(&ChangeSet{Resources: []Resource{r}}, 0)
}

// mustHave fails unless text holds every one of want.
func mustHave(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%q is not in:\n%s", w, text)
		}
	}
}

// TestAReplacementShowsItsReasonAndForcingAttribute checks that a replaced
// resource says why (the plan's action_reason in words) and which paths
// force it, folded as well as whole, and marks the forcing attribute.
func TestAReplacementShowsItsReasonAndForcingAttribute(t *testing.T) {
	v := NewView(everySection(t))
	var folded []string
	for i := range v.Len() {
		if r := v.Resource(i); r != nil && r.Section == SectionReplace {
			for _, l := range v.Lines(i, false) {
				folded = append(folded, l.String())
			}
		}
	}
	mustHave(t, strings.Join(folded, "\n"), "-/+ aws_instance.web", "why: a change that cannot be made in place", "forced by: ami")
	mustHave(t, Text(everySection(t), 0), `~ ami = "ami-0a1b2c3d" -> "ami-9f8e7d6c" (forces replacement)`)
	// A reason tofu adds later is shown as its keyword, escaped.
	mustHave(t, textOf(Resource{Section: SectionReplace, Address: "a.b", Actions: []string{"create", "delete"}, Reason: "replace_because_\x1bnew"}),
		`+/- a.b (the new object is created first)`, `why: replace_because_\x1bnew`)
}

// TestAJSONStringShowsItsChangedPaths checks that a JSON string is
// compared structurally: its changed JSON paths, each with its values,
// and "whitespace or key order only" when only the formatting differs.
func TestAJSONStringShowsItsChangedPaths(t *testing.T) {
	text := Text(everySection(t), 0)
	mustHave(t, text,
		"~ policy = JSON, 2 paths changed:",
		`    ~ $.Statement[0].Action = "s3:GetObject" -> "s3:*"`,
		`    + $.Statement[1] = {"Effect":"Allow","Resource":"*"}`,
		"~ assume_role_policy = JSON, whitespace or key order only")
}

// TestALongStringShowsALineDiff checks that a long or multi-line string
// reads as its changed lines with their context and a count of the lines
// left out.
func TestALongStringShowsALineDiff(t *testing.T) {
	mustHave(t, Text(everySection(t), 0),
		"~ user_data = text, line by line:\n            #!/bin/sh\n          - echo deploy v1\n          + echo deploy v2\n          … 14 unchanged lines\n")
}

// TestAnUnknownValueReadsKnownAfterApply checks both a created attribute
// and an updated one whose value is unknown until apply.
func TestAnUnknownValueReadsKnownAfterApply(t *testing.T) {
	mustHave(t, Text(everySection(t), 0),
		"+ fqdn = (known after apply)", `~ id = "i-0123456789abcdef0" -> (known after apply)`)
}

// TestASensitiveValueNeverShows checks that a sensitive path says only
// whether it changed, with its two fingerprints, and never a value, even
// one a change set carries by mistake.
func TestASensitiveValueNeverShows(t *testing.T) {
	r := Resource{Section: SectionUpdate, Address: "a.b", Actions: []string{"update"}, Attributes: []Attribute{
		{Path: "password", Sensitive: true, Changed: true, Before: `"hunter2"`, After: `"correct horse"`,
			BeforeFingerprint: "3f9a1c2b", AfterFingerprint: "77d0e4aa"},
		{Path: "token", Sensitive: true, Before: `"s3cret"`, After: `"s3cret"`, BeforeFingerprint: "5be10c9d", AfterFingerprint: "5be10c9d"},
		{Path: "new_secret", Sensitive: true, Changed: true, AfterFingerprint: "0badf00d"},
	}}
	text := textOf(r)
	mustHave(t, text,
		"~ password = (sensitive, changed) before 3f9a1c2b, after 77d0e4aa",
		"  token = (sensitive, unchanged) before 5be10c9d, after 5be10c9d",
		"+ new_secret = (sensitive) 0badf00d")
	for _, secret := range []string{"hunter2", "correct horse", "s3cret"} {
		if strings.Contains(text, secret) {
			t.Errorf("the sensitive value %q is shown:\n%s", secret, text)
		}
	}
	o := &ChangeSet{Outputs: []Output{{Name: "db_password", Actions: []string{"update"},
		Change: Attribute{Sensitive: true, Changed: true, Before: `"hunter2"`, BeforeFingerprint: "aa", AfterFingerprint: "bb"}}}}
	if s := Text(o, 0) + Summary(o, 1000, ""); strings.Contains(s, "hunter2") || !strings.Contains(s, "~ db_password = (sensitive, changed)") {
		t.Errorf("a sensitive output reads:\n%s", s)
	}
}

// TestUnchangedAttributesAreCollapsed checks that the attributes left as
// they are show as one count, in the singular for one.
func TestUnchangedAttributesAreCollapsed(t *testing.T) {
	mustHave(t, Text(everySection(t), 0), "      … 12 unchanged attributes hidden\n", "      … 4 unchanged attributes hidden\n")
	mustHave(t, textOf(Resource{Section: SectionDelete, Address: "a.b", Actions: []string{"delete"}, Unchanged: 1}), "… 1 unchanged attribute hidden")
	if s := textOf(Resource{Section: SectionDelete, Address: "a.b", Actions: []string{"delete"}}); strings.Contains(s, "unchanged") {
		t.Errorf("a resource without unchanged attributes counts some:\n%s", s)
	}
}

// TestAMoveShowsOldToNew checks that a move reads old → new, and that a
// change that also moves says where from.
func TestAMoveShowsOldToNew(t *testing.T) {
	mustHave(t, Text(everySection(t), 0), "Moved (1): old address → new\n  moved aws_vpc.main → module.net.aws_vpc.main\n")
	mustHave(t, textOf(Resource{Section: SectionUpdate, Address: "b.new", PreviousAddress: "b.old", Actions: []string{"update"}}),
		"~ b.new (moved from b.old)")
}

// TestAResourceOfAnUnknownSectionIsShownNotHidden checks that a change
// the renderer has no section for is still listed, with its actions.
func TestAResourceOfAnUnknownSectionIsShownNotHidden(t *testing.T) {
	mustHave(t, textOf(Resource{Section: "obliterate", Address: "a.b", Actions: []string{"obliterate"}}),
		"Other changes (1)", "? obliterate a.b")
}

// TestAValueReadsAsOpenTofuWritesIt guards the escaping of a value's
// literal: a string holding a newline once read "a\\nb" on the screen (the
// quoting's backslash doubled again), which OpenTofu reads as a backslash
// and an n. It reads "a\nb" now, and a string that does hold a backslash
// and an n still reads apart from it.
func TestAValueReadsAsOpenTofuWritesIt(t *testing.T) {
	r := Resource{Section: SectionUpdate, Address: "a.b", Actions: []string{"update"}, Attributes: []Attribute{
		{Path: "newline", Before: `"a"`, After: `"a\nb"`},
		{Path: "backslash_n", Before: `"a"`, After: `"a\\nb"`},
		{Path: "hidden", Before: `"a"`, After: "\"a\u202eb\""},
	}}
	text := textOf(r)
	mustHave(t, text, `~ newline = "a" -> "a\nb"`, `~ backslash_n = "a" -> "a\\nb"`, `~ hidden = "a" -> "a\u{202e}b"`)
}

// TestASensitiveValueCreatedOrDestroyedShowsOneFingerprint guards the
// marks of a sensitive attribute of a created resource: it once read
// "~ … (sensitive, changed) before (none)" among the "+" lines.
func TestASensitiveValueCreatedOrDestroyedShowsOneFingerprint(t *testing.T) {
	r := Resource{Section: SectionCreate, Address: "a.b", Actions: []string{"create"}, Attributes: []Attribute{
		{Path: "made", Sensitive: true, Changed: true, AfterFingerprint: "fp:0badf00d0000"},
		{Path: "later", Sensitive: true, Changed: true, Unknown: true},
		{Path: "gone", Sensitive: true, Changed: true, BeforeFingerprint: "fp:1badf00d0000"},
	}}
	text := textOf(r)
	mustHave(t, text, "+ made = (sensitive) fp:0badf00d0000", "+ later = (sensitive) (known after apply)", "- gone = (sensitive) fp:1badf00d0000")
}

// TestAForgetSaysARemovedBlockLeavesTheObject guards the reason of a
// forget made by a removed block: OpenTofu 1.12.6 writes
// delete_because_no_resource_config for it, which read only "no longer in
// the configuration" under the forgotten section.
func TestAForgetSaysARemovedBlockLeavesTheObject(t *testing.T) {
	r := Resource{Section: SectionForget, Address: "a.b", Actions: []string{"forget"}, Reason: "delete_because_no_resource_config"}
	mustHave(t, textOf(r), "why: no longer in the configuration; a removed block with lifecycle { destroy = false } leaves the object in place")
	d := Resource{Section: SectionDelete, Address: "a.c", Actions: []string{"delete"}, Reason: "delete_because_no_resource_config"}
	if text := textOf(d); strings.Contains(text, "removed block") {
		t.Errorf("a delete reads as a forget:\n%s", text)
	}
}
