package testkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/server/sshd"
)

// MustContain fails the test for every want that text lacks.
func MustContain(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// MustLack fails the test for every unwanted string text holds.
func MustLack(t testing.TB, what, text string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Errorf("%s holds %q:\n%s", what, u, text)
		}
	}
}

// JSONRefusal decodes stderr as the contract's refusal object.
func JSONRefusal(t testing.TB, what, stderr string) sshd.ErrorWire {
	t.Helper()
	var e sshd.ErrorWire
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &e); err != nil || e.Error.Code == "" {
		t.Errorf("%s: stderr is not the JSON refusal object: %q (%v)", what, stderr, err)
	}
	return e
}

// StepNames are the names of v's steps, in order.
func StepNames(v api.RunView) []string {
	var names []string
	for _, s := range v.Steps {
		names = append(names, s.Name)
	}
	return names
}
