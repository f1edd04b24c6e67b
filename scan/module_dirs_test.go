package scan

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestAScanNamesTheDirectoriesOfTheModulesItRead: a pull request that
// changes only a local module a template calls must plan that template,
// so the scan says which directories its configuration comes from — the
// root module's and each local module's, nested ones included — and not
// a directory it was never led to.
func TestAScanNamesTheDirectoriesOfTheModulesItRead(t *testing.T) {
	root := writeTree(t, map[string]string{
		"network/main.tf":         "module \"vpc\" {\n  source = \"../modules/vpc\"\n}\n",
		"modules/vpc/main.tf":     "module \"subnet\" {\n  source = \"./subnet\"\n}\n",
		"modules/vpc/subnet/a.tf": "resource \"terraform_data\" \"s\" {}\n",
		"modules/unused/main.tf":  "resource \"terraform_data\" \"u\" {}\n",
	})
	res, err := Module(Options{Root: root, Dir: filepath.Join(root, "network")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"modules/vpc", "modules/vpc/subnet", "network"}
	if !slices.Equal(res.Dirs, want) {
		t.Fatalf("Dirs = %q, want %q", res.Dirs, want)
	}
}
