package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestSensitiveVariables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.tf", `
variable "password" {
  type      = string
  sensitive = true
}
variable "region" { type = string }
variable "open" {
  sensitive = false
}
`)
	write("extra.tf.json", `{"variable": {"api_key": {"sensitive": true}, "zone": {}}}`)
	// x.tofu shadows x.tf: the .tf declares "shadowed" sensitive, the .tofu not.
	write("over.tf", `variable "shadowed" { sensitive = true }`)
	write("over.tofu", `variable "shadowed" {}
variable "tofu_only" { sensitive = true }`)
	write("notes.txt", `variable "ignored" { sensitive = true }`)
	got, err := SensitiveVariables(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"api_key", "password", "tofu_only"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	write("broken.tf", `variable "x" { sensitive = var.y }`)
	if _, err := SensitiveVariables(dir); err == nil {
		t.Fatalf("a sensitive argument that is not a literal was accepted")
	}
	write("broken.tf", `variable "x" {`)
	if _, err := SensitiveVariables(dir); err == nil {
		t.Fatalf("a file that does not parse was accepted")
	}
}
