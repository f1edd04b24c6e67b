package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backendOf writes files into a new directory and returns its Backend.
func backendOf(t *testing.T, files map[string]string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Backend(dir)
}

// A backend block that takes its address from a variable through a local
// is pinned by what it references: the variable's declaration, the local,
// and the values auto-loaded .tfvars files give that variable. Changing
// any of them changes Backend; a variable, local or .tfvars value the
// block does not reference does not.
func TestBackendFollowsWhatTheBlockReferences(t *testing.T) {
	base := map[string]string{
		"backend.tf":   "terraform {\n  backend \"http\" {\n    address = local.addr\n  }\n}\n",
		"locals.tf":    "locals {\n  addr  = \"${var.host}/state\"\n  other = 1\n}\n",
		"variables.tf": "variable \"host\" {\n  default = \"https://state.example\"\n}\nvariable \"size\" {\n  default = 1\n}\n",
	}
	want, err := backendOf(t, base)
	if err != nil {
		t.Fatal(err)
	}
	with := func(name, text string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		m[name] = text
		return m
	}
	same := map[string]map[string]string{
		"an unrelated variable":     with("variables.tf", base["variables.tf"]+"variable \"new\" {}\n"),
		"an unrelated local":        with("locals.tf", "locals {\n  addr  = \"${var.host}/state\"\n  other = 2\n}\n"),
		"an unrelated tfvars value": with("terraform.tfvars", "size = 3\n"),
		"a resource":                with("main.tf", "resource \"terraform_data\" \"x\" {}\n"),
	}
	for what, files := range same {
		if got, err := backendOf(t, files); err != nil || got != want {
			t.Errorf("%s changed the backend (%v):\n%s", what, err, got)
		}
	}
	other := map[string]map[string]string{
		"the variable's default":       with("variables.tf", strings.Replace(base["variables.tf"], "state.example", "evil.example", 1)),
		"the local":                    with("locals.tf", "locals {\n  addr  = \"${var.host}/other\"\n  other = 1\n}\n"),
		"a terraform.tfvars value":     with("terraform.tfvars", "host = \"https://evil.example\"\n"),
		"an .auto.tfvars.json value":   with("x.auto.tfvars.json", "{\"host\": \"https://evil.example\"}\n"),
		"an override of the local":     with("locals_override.tf", "locals {\n  addr = \"https://evil.example\"\n}\n"),
		"a second declaration of host": with("more.tf", "variable \"host\" {\n  default = \"https://evil.example\"\n}\n"),
	}
	for what, files := range other {
		if got, err := backendOf(t, files); err == nil && got == want {
			t.Errorf("changing %s left the backend the same", what)
		}
	}
	if _, err := backendOf(t, with("locals.tf", "locals {\n  addr = file(\"addr.txt\")\n}\n")); err == nil || !strings.Contains(err.Error(), "file(") {
		t.Errorf("a backend address read from a file: %v", err)
	}
	if got, err := backendOf(t, map[string]string{"b.tf": "terraform {\n  backend \"local\" {\n    path = \"s.tfstate\"\n  }\n}\nvariable \"x\" {}\n"}); err != nil || strings.Contains(got, "variable") {
		t.Errorf("a literal backend follows the variables (%v):\n%s", err, got)
	}
}

// In a pull request's plan every remote state is a finding, in the root
// module and in a module it calls; otherwise one that names no credentials
// file is not.
func TestRemoteStateIsAFindingInPullRequests(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.tf":   "data \"terraform_remote_state\" \"net\" {\n  backend = \"local\"\n  config = { path = \"other.tfstate\" }\n}\nmodule \"m\" {\n  source = \"./m\"\n}\n",
		"m/main.tf": "data \"terraform_remote_state\" \"inner\" {\n  backend = \"http\"\n  config = { address = \"https://state.example\" }\n}\n",
	})
	plain, err := Module(Options{Root: root, Dir: root})
	if err != nil || len(plain.Findings) != 0 {
		t.Fatalf("a dry run's remote states: %v %+v", err, plain.Findings)
	}
	pr, err := Module(Options{Root: root, Dir: root, PullRequest: true})
	if err != nil || len(pr.Findings) != 2 || pr.Findings[0].Address != "data.terraform_remote_state.net" ||
		pr.Findings[1].Address != "module.m.data.terraform_remote_state.inner" || !strings.Contains(pr.Findings[1].Reason, "pull request") {
		t.Fatalf("a pull request's remote states: %v %+v", err, pr.Findings)
	}
	if pr.Digest != plain.Digest {
		t.Fatal("the option changed the digest")
	}
}
