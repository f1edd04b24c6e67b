package planview

import (
	"errors"
	"strings"
	"testing"
)

func TestAPlanOfAnotherFormatVersionIsRefused(t *testing.T) {
	for _, v := range []string{`"0.2"`, `"1.3"`, `"2.0"`, `""`, `null`} {
		_, err := Build([]byte(`{"format_version":`+v+`,"resource_changes":[]}`), testFP)
		if !errors.Is(err, ErrUnreadablePlan) || !strings.Contains(err.Error(), "format_version") {
			t.Errorf("format_version %s: error %v, want ErrUnreadablePlan naming format_version", v, err)
		}
	}
	if _, err := Build([]byte(`{"resource_changes":[]}`), testFP); !errors.Is(err, ErrUnreadablePlan) || !strings.Contains(err.Error(), "no format_version") {
		t.Errorf("no format_version: error %v", err)
	}
	for _, v := range SupportedFormatVersions {
		if _, err := Build([]byte(`{"format_version":"`+v+`"}`), testFP); err != nil {
			t.Errorf("format_version %s: %v", v, err)
		}
	}
}

func TestJSONThatDoesNotParseIsRefused(t *testing.T) {
	good := string(planWith(change("terraform_data.a", `["update"]`, `"before":{"input":"a"},"after":{"input":"b"}`)))
	for name, doc := range map[string]string{
		"truncated":          good[:len(good)-3],
		"trailing data":      good + `{}`,
		"trailing comma":     strings.Replace(good, `"b"}`, `"b",}`, 1),
		"bare word":          strings.Replace(good, `"b"`, `b`, 1),
		"control character":  strings.Replace(good, `"b"`, "\"b\x01\"", 1),
		"bad escape":         strings.Replace(good, `"b"`, `"\q"`, 1),
		"bad number":         strings.Replace(good, `"1.2"`, `"1.2","n":01`, 1),
		"not an object":      `[` + good + `]`,
		"empty":              ``,
		"unterminated value": `{"format_version":"1.2","x":"abc`,
	} {
		if _, err := Build([]byte(doc), testFP); !errors.Is(err, ErrUnreadablePlan) || !strings.Contains(err.Error(), "JSON") {
			t.Errorf("%s: error %v, want ErrUnreadablePlan about the JSON", name, err)
		}
	}
}

func TestAChangeWithoutAddressOrActionsOpenTofuWritesIsRefused(t *testing.T) {
	for name, doc := range map[string][]byte{
		"no address":     planWith(`{"mode":"managed","change":{"actions":["create"]}}`),
		"no change":      planWith(`{"address":"terraform_data.a","mode":"managed"}`),
		"null element":   planWith(`null`),
		"unknown action": planWith(change("terraform_data.a", `["create","update"]`, "")),
	} {
		if _, err := Build(doc, testFP); !errors.Is(err, ErrUnreadablePlan) {
			t.Errorf("%s: error %v, want ErrUnreadablePlan", name, err)
		}
	}
}

func TestAFingerprinterWithoutAKeyIsRefused(t *testing.T) {
	plan := planWith(change("terraform_data.a", `["create"]`, `"after":{"input":"x"},"after_sensitive":{"input":true}`))
	for name, fp := range map[string]Fingerprinter{"zero": {}, "empty key": NewFingerprinter(nil), "empty slice": NewFingerprinter([]byte{})} {
		if _, err := Build(plan, fp); !errors.Is(err, ErrNoFingerprintKey) {
			t.Errorf("%s: error %v, want ErrNoFingerprintKey", name, err)
		}
	}
}
