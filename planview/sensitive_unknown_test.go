package planview

import (
	"regexp"
	"testing"
)

// TestASensitiveValueKnownOnlyAfterApplySaysSo checks that a sensitive
// value whose after value OpenTofu knows only after apply (terraform_data's
// output, replaced by a new input) reads "after (known after apply)", not
// "after (none)", which says the value goes away; and that such a value is
// never called unchanged.
func TestASensitiveValueKnownOnlyAfterApplySaysSo(t *testing.T) {
	text := Text(committedChangeSet(t, "sensitive_word"), 0)
	if !regexp.MustCompile(`~ output = \(sensitive, changed\) before fp:[0-9a-f]+, after \(known after apply\)\n`).MatchString(text) {
		t.Fatalf("the unknown sensitive output reads:\n%s", text)
	}
	hand := &ChangeSet{Resources: []Resource{{Section: SectionUpdate, Address: "terraform_data.x", Actions: []string{"update"},
		Attributes: []Attribute{{Path: "secret", Sensitive: true, Unknown: true, BeforeFingerprint: "fp:1"}}}}}
	mustHave(t, Text(hand, 0), "~ secret = (sensitive, changed) before fp:1, after (known after apply)")
}
