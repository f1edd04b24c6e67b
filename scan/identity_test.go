package scan

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// writeFiles writes name -> text under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A saved plan made by the real OpenTofu has the identity of the directory
// it was planned in (an override file and a .tofu file shadowing a .tf
// included, and a plan with no provider against a directory with no lock
// file); each change that decides what OpenTofu runs at start is named,
// and a change OpenTofu does not read (a shadowed .tf, a test file, a
// module's file) is not.
func TestPlanIdentityIsTheDirectoryItWasPlannedIn(t *testing.T) {
	bin, err := tofuBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf":       `resource "terraform_data" "x" { input = "x" }` + "\n",
		"x_override.tf": `resource "terraform_data" "x" { input = "y" }` + "\n",
		"shadowed.tf":   `this is not read: shadowed.tofu shadows it` + "\n",
		"shadowed.tofu": `output "o" { value = 1 }` + "\n",
		"a.tftest.hcl":  `run "r" {}` + "\n",
	})
	if err := runTofu(bin, dir, "init", "-input=false", "-no-color"); err != nil {
		t.Fatal(err)
	}
	if err := runTofu(bin, dir, "plan", "-input=false", "-no-color", "-out=p.tfplan"); err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile(filepath.Join(dir, "p.tfplan"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := PlanIdentity(plan)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDirIdentity(t, dir); len(want.Diff(got)) != 0 {
		t.Fatalf("the directory the plan was made in differs from it: %v", want.Diff(got))
	}
	if names := keys(want.Files); !slices.Equal(names, []string{"main.tf", "shadowed.tofu", "x_override.tf"}) {
		t.Fatalf("the plan's root files = %v", names)
	}
	unread := map[string]string{"shadowed.tf": "changed, still shadowed\n", "a.tftest.hcl": "changed\n", "notes.txt": "new\n"}
	writeFiles(t, dir, unread)
	if d := want.Diff(mustDirIdentity(t, dir)); len(d) != 0 {
		t.Fatalf("a change OpenTofu does not read is named: %v", d)
	}
	for _, c := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"main.tf": "# edited\n"}, "main.tf changed"},
		{map[string]string{"enc_override.tf": "terraform {}\n"}, "enc_override.tf is new"},
		{map[string]string{"main.tofu": "terraform {}\n"}, "main.tf is no longer read (removed, or shadowed by a .tofu file)"},
		{map[string]string{LockFileName: "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.2.1\"\n}\n"}, LockFileName + " changed (it locks other providers, versions or hashes than when the plan was made)"},
	} {
		d := t.TempDir()
		for _, n := range []string{"main.tf", "x_override.tf", "shadowed.tf", "shadowed.tofu"} {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			writeFiles(t, d, map[string]string{n: string(b)})
		}
		writeFiles(t, d, c.files)
		if got := want.Diff(mustDirIdentity(t, d)); !slices.Contains(got, c.want) {
			t.Errorf("after %v: %v, want %q", c.files, got, c.want)
		}
	}
}

// A lock file is compared by what it locks: the same providers, versions,
// constraints and hashes written another way (comments, spacing, order of
// blocks) are the same; another hash is not.
func TestLockFileComparedByWhatItLocks(t *testing.T) {
	a := `# This file is maintained automatically by "tofu init".
provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.1"
  constraints = "~> 3.0"
  hashes = [
    "h1:aaa=",
    "zh:bbb",
  ]
}
provider "registry.opentofu.org/hashicorp/random" {
  version = "3.6.0"
}
`
	b := `provider "registry.opentofu.org/hashicorp/random" { version = "3.6.0" }

provider "registry.opentofu.org/hashicorp/null" {
  hashes = ["h1:aaa=", "zh:bbb"]
  # reordered by hand
  constraints = "~> 3.0"
  version = "3.2.1"
}
`
	la, err := lockedProviders([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := lockedProviders([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if la != lb || la == "" {
		t.Fatalf("the same locks read differently:\n%s\n%s", la, lb)
	}
	lc, _ := lockedProviders([]byte(`provider "registry.opentofu.org/hashicorp/null" { version = "3.2.1"` + "\n" + `constraints = "~> 3.0"` + "\n" + `hashes = ["h1:ccc=", "zh:bbb"] }` + "\n" + `provider "registry.opentofu.org/hashicorp/random" { version = "3.6.0" }`))
	if lc == la {
		t.Fatal("another hash reads as the same lock")
	}
	if none, err := lockedProviders([]byte("# This file is maintained automatically by \"tofu init\".\n")); err != nil || none != "" {
		t.Fatalf("a lock file locking nothing: %q %v", none, err)
	}
	if _, err := lockedProviders([]byte("provider {")); err == nil {
		t.Fatal("a lock file that does not parse was read")
	}
}

func mustDirIdentity(t *testing.T, dir string) Identity {
	t.Helper()
	id, err := DirIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func keys(m map[string][32]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
