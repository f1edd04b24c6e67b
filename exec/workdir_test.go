package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEngineFor(t *testing.T) {
	for tool, want := range map[string]Engine{"": OpenTofu, "opentofu": OpenTofu, "terraform": Terraform} {
		got, err := EngineFor(tool)
		if err != nil || got != want {
			t.Errorf("EngineFor(%q) = %+v, %v; want %+v", tool, got, err, want)
		}
	}
	if OpenTofu.Binary != "tofu" || Terraform.Binary != "terraform" {
		t.Fatalf("binaries: %q %q", OpenTofu.Binary, Terraform.Binary)
	}
	_, err := EngineFor("pulumi")
	if err == nil || !strings.Contains(err.Error(), `"pulumi"`) || !strings.Contains(err.Error(), "terraform") {
		t.Fatalf("EngineFor(pulumi) error = %v, want one naming the value and the accepted ones", err)
	}
}

func TestFind(t *testing.T) {
	empty, withTofu, notExec := t.TempDir(), t.TempDir(), t.TempDir()
	bin := filepath.Join(withTofu, "tofu")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(notExec, "tofu"), []byte("#!/bin/sh\n"), 0o644)
	os.Mkdir(filepath.Join(empty, "tofu"), 0o755) // a directory named tofu is not the binary
	path := strings.Join([]string{"", "relative/dir", empty, notExec, withTofu}, string(os.PathListSeparator))
	got, err := OpenTofu.Find(path)
	if err != nil || got != bin {
		t.Fatalf("Find = %q, %v; want %q", got, err, bin)
	}
	_, err = Terraform.Find(path)
	if err == nil {
		t.Fatal("Find(terraform) succeeded with no terraform on the PATH")
	}
	for _, want := range []string{"terraform", `"terraform"`, "PATH", withTofu, "install"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// A relative PATH entry is never used, even when it holds the binary.
	cwd, _ := os.Getwd()
	rel := t.TempDir()
	os.WriteFile(filepath.Join(rel, "tofu"), []byte("#!/bin/sh\n"), 0o755)
	os.Chdir(rel)
	defer os.Chdir(cwd)
	if got, err := OpenTofu.Find("."); err == nil {
		t.Fatalf("Find used the relative PATH entry: %q", got)
	}
}

// checkout builds:
//
//	root/infra/network/          a working directory
//	root/infra/file.tf           a file
//	root/inlink -> infra         a symlink that stays inside
//	root/outlink -> outside      a symlink to outside
//	root/infra/up -> ../..       a symlink to the checkout's parent
//	root/sneaky -> outside/back  through outside, back in (outside/back -> root/infra)
//	root/dangling -> missing
func checkout(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "checkout")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "infra", "network"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "infra", "file.tf"), nil, 0o644))
	must(os.Symlink("infra", filepath.Join(root, "inlink")))
	must(os.Symlink(outside, filepath.Join(root, "outlink")))
	must(os.Symlink("../..", filepath.Join(root, "infra", "up")))
	must(os.Symlink(filepath.Join(root, "infra"), filepath.Join(outside, "back")))
	must(os.Symlink(filepath.Join(outside, "back"), filepath.Join(root, "sneaky")))
	must(os.Symlink("missing", filepath.Join(root, "dangling")))
	return root, outside
}

func TestResolveWorkingDir(t *testing.T) {
	root, _ := checkout(t)
	ok := map[string]string{
		"infra/network":    "infra/network",
		"./infra/network/": "infra/network",
		"infra//network":   "infra/network",
		"inlink/network":   "infra/network", // a symlink that stays inside is followed
		"inlink":           "infra",
		".":                "",
	}
	for cmd, want := range ok {
		got, err := ResolveWorkingDir(root, cmd)
		if err != nil {
			t.Errorf("ResolveWorkingDir(%q): %v", cmd, err)
			continue
		}
		if w := filepath.Join(root, want); got != w {
			t.Errorf("ResolveWorkingDir(%q) = %s, want %s", cmd, got, w)
		}
	}
	refused := map[string]string{
		"":                  "empty",
		"/etc":              "absolute",
		root + "/infra":     "absolute",
		"..":                `".."`,
		"infra/../infra":    `".."`,
		"infra/network/..":  `".."`,
		"outlink":           "outside the project checkout",
		"outlink/x":         "outside the project checkout",
		"infra/up":          "outside the project checkout",
		"infra/up/checkout": "outside the project checkout", // leaves and comes back in: still refused
		"sneaky":            "outside the project checkout",
		"missing":           "does not exist",
		"infra/missing":     "does not exist",
		"dangling":          "does not exist",
		"infra/file.tf":     "not a directory",
	}
	for cmd, want := range refused {
		got, err := ResolveWorkingDir(root, cmd)
		if err == nil {
			t.Errorf("ResolveWorkingDir(%q) = %s, want an error (%s)", cmd, got, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveWorkingDir(%q) error %q does not say %q", cmd, err, want)
		}
	}
}

func TestResolveWorkingDirThroughSymlinkedCheckout(t *testing.T) {
	root, _ := checkout(t)
	link := filepath.Join(t.TempDir(), "co")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	got, err := ResolveWorkingDir(link, "inlink/network")
	if err != nil || got != filepath.Join(root, "infra", "network") {
		t.Fatalf("ResolveWorkingDir via a symlinked checkout = %q, %v", got, err)
	}
	if _, err := ResolveWorkingDir(filepath.Join(root, "nope"), "x"); err == nil {
		t.Fatal("a missing checkout was accepted")
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		got, want []string
	}{
		{InitArgs(true), []string{"init", "-input=false", "-no-color"}},
		{InitArgs(false), []string{"init", "-input=false", "-no-color", "-get=false"}},
		{PlanArgs("/d/plan"), []string{"plan", "-input=false", "-no-color", "-out=/d/plan"}},
		{ApplyAutoArgs(), []string{"apply", "-auto-approve", "-input=false", "-no-color"}},
		{ApplyPlanArgs("/d/plan"), []string{"apply", "-input=false", "-no-color", "/d/plan"}},
		{ShowJSONArgs("/d/plan"), []string{"show", "-json", "-no-color", "/d/plan"}},
		{StatePullArgs(), []string{"state", "pull", "-no-color"}},
	}
	for _, c := range cases {
		if strings.Join(c.got, " ") != strings.Join(c.want, " ") {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
