package planview

import (
	"strings"
	"testing"
)

// The sensitive_copies scenario: sensitive values of under 4 bytes and a
// sensitive boolean, which OpenTofu copies unmarked (a terraform_data's
// output mirrors its input without its marks, and what reads that output
// is unmarked too), into a JSON document, a multi-line string and an
// object.
const (
	shortPinBefore = "q7" // neither is a hex digit pair, so a fingerprint never holds one
	shortPinAfter  = "z9"
)

// mustBeSensitivePath fails t unless the attribute of r at path is a
// sensitive path: no value, no JSON diff, no line diff.
func mustBeSensitivePath(t *testing.T, r Resource, path string) {
	t.Helper()
	a := attributeAt(t, r, path)
	if !a.Sensitive || a.Before != "" || a.After != "" || a.JSON != nil || a.Lines != nil {
		t.Errorf("%s %s shows what it holds instead of being a sensitive path: %+v", r.Address, path, a)
	}
}

// A JSON document or a multi-line string that holds a short sensitive
// value as one of its values (a JSON leaf, a line) is a sensitive path
// with fingerprints: its JSON diff or line diff would show the value
// whole, and the value before is not shown either.
func TestShortSensitiveValuesInsideJSONAndLinesAreNeverShown(t *testing.T) {
	cs := committedChangeSet(t, "sensitive_copies")
	for _, addr := range []string{"terraform_data.doc", "terraform_data.text"} {
		r := resourceAt(t, cs, addr)
		mustBeSensitivePath(t, r, "input")
		mustBeSensitivePath(t, r, "output")
		if a := attributeAt(t, r, "input"); !a.Changed || a.BeforeFingerprint == a.AfterFingerprint {
			t.Errorf("%s input: want changed with two fingerprints, got %+v", addr, a)
		}
	}
	text := Text(cs, 0)
	for _, pin := range []string{shortPinBefore, shortPinAfter} {
		if strings.Contains(text, pin) {
			t.Errorf("the change set's text shows the sensitive %q:\n%s", pin, text)
		}
	}
	for _, n := range []string{"$.n", "\"n\":7", "= 7 ", "-> 5"} {
		if strings.Contains(text, n) {
			t.Errorf("the change set's text shows a sensitive number (%q):\n%s", n, text)
		}
	}
}

// A terraform_data's output is its input: the parts of the input its
// marks call sensitive are sensitive in the output too, a boolean
// included (no value test can find one).
func TestATerraformDataOutputKeepsItsInputsSensitiveParts(t *testing.T) {
	cs := committedChangeSet(t, "sensitive_copies")
	r := resourceAt(t, cs, "terraform_data.flag")
	for _, a := range r.Attributes {
		if strings.Contains(a.Before, "true") || strings.Contains(a.After, "true") {
			t.Errorf("%s shows the sensitive boolean: %+v", a.Path, a)
		}
	}
	a := attributeAt(t, r, "output.enabled")
	if !a.Sensitive || !a.Changed || !a.Unknown || a.BeforeFingerprint != attributeAt(t, r, "input.enabled").BeforeFingerprint {
		t.Errorf("output.enabled: want sensitive, known after apply, with the input's fingerprint before; got %+v", a)
	}
	if got := attributeAt(t, r, "output.label"); got.Sensitive || got.Before != `"a"` || !got.Unknown {
		t.Errorf("output.label, plain: %+v", got)
	}
}
