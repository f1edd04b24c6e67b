package scan

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

var (
	tofuOnce sync.Once
	tofuPath string
	tofuErr  error
)

// tofuBinary returns the pinned OpenTofu (tofubin.Ensure builds it on
// first use), or the error that kept it.
func tofuBinary() (string, error) {
	tofuOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		tofuPath, tofuErr = tofubin.Ensure(ctx, os.Stderr)
	})
	return tofuPath, tofuErr
}

// tofuEnv is the environment tofu runs with in tests: no CLI configuration
// file, variables or encryption from the machine, no checkpoint.
func tofuEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") || strings.HasPrefix(kv, "TF_VAR_") || strings.HasPrefix(kv, "TF_ENCRYPTION=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
}

func runTofu(bin, dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = tofuEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("tofu %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// planTree is a configuration with local modules three deep, a module
// tofu get installs under .terraform/modules (an absolute path inside the
// tree, which it links there), an override file, a .tofu file shadowing a
// .tf, JSON, and files OpenTofu does not load.
func planTree(t *testing.T) string {
	root := writeTree(t, map[string]string{
		"main.tf": `resource "terraform_data" "r" { input = "main" }
module "a" { source = "./modules/a" }`,
		"override.tf":           `resource "terraform_data" "r" { input = "override" }`,
		"x.tf":                  `resource "terraform_data" "shadowed" {}`,
		"x.tofu":                `resource "terraform_data" "x" {}`,
		"vars.tf.json":          `{"variable": {"v": {"default": "j"}}}`,
		"t.tftest.hcl":          `run "t" {}`,
		".hidden.tf":            `this does not parse`,
		"notes.tf~":             `nor this`,
		"modules/a/main.tf":     `module "b" { source = "./b" }` + "\n" + `module "c" { source = "../c" }`,
		"modules/a/b/main.tofu": `module "d" { source = "../../d" }`,
		"modules/c/main.tf":     `resource "terraform_data" "c" {}`,
		"modules/d/main.tf":     `resource "terraform_data" "d" {}`,
		"vendored/e/e.tf":       `resource "terraform_data" "e" {}`,
	})
	main := filepath.Join(root, "main.tf")
	src, _ := os.ReadFile(main)
	src = append(src, fmt.Sprintf("\nmodule \"e\" { source = %q }\n", filepath.Join(root, "vendored/e"))...)
	if err := os.WriteFile(main, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// makePlan runs tofu init and plan -out in dir and returns the plan file.
func makePlan(t *testing.T, dir string) string {
	t.Helper()
	bin, err := tofuBinary()
	if err != nil {
		t.Fatalf("these tests need OpenTofu: %v", err)
	}
	if err := runTofu(bin, dir, "init", "-input=false"); err != nil {
		t.Fatal(err)
	}
	if err := runTofu(bin, dir, "plan", "-input=false", "-out=p.tfplan"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "p.tfplan")
}

func TestPlanDigestMatchesModule(t *testing.T) {
	root := planTree(t)
	plan := makePlan(t, root)
	opts := Options{Root: root, Dir: root, Manifest: filepath.Join(root, ".terraform/modules/modules.json")}
	r := scanOpts(t, opts)
	wantFindings(t, r, "")
	if r.Modules != 6 || r.Files != 9 {
		t.Errorf("read %d modules and %d files, want 6 and 9", r.Modules, r.Files)
	}
	// What the snapshot holds: primary and override files, .tofu in place
	// of the .tf it shadows, no test, hidden or editor files; module
	// directories by key, "" for the root.
	want := "m-/main.tf m-/override.tf m-/vars.tf.json m-/x.tofu m-a.b.d/main.tf m-a.b/main.tofu m-a.c/main.tf m-a/main.tf m-e/e.tf modules.json"
	if got := snapshotEntries(t, plan); got != want {
		t.Errorf("the snapshot holds %s\nwant %s", got, want)
	}
	d, err := PlanDigest(plan)
	if err != nil {
		t.Fatal(err)
	}
	if d != r.Digest {
		t.Errorf("PlanDigest = %s, Module's Digest = %s", d, r.Digest)
	}
	// The same tree scanned again gives the same digest.
	if again := scanOpts(t, opts); again.Digest != r.Digest {
		t.Errorf("a second scan gave %s, the first %s", again.Digest, r.Digest)
	}
	// One byte changed in a module three deep changes it.
	d3 := filepath.Join(root, "modules/d/main.tf")
	src, _ := os.ReadFile(d3)
	src[len(src)-1] = ' '
	if err := os.WriteFile(d3, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed := scanOpts(t, opts); changed.Digest == d {
		t.Errorf("a changed module kept the digest %s", d)
	}
}

// snapshotEntries lists the tfconfig/ entries of a plan, sorted, without
// the prefix.
func snapshotEntries(t *testing.T, plan string) string {
	t.Helper()
	z, err := zip.OpenReader(plan)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		if n, ok := strings.CutPrefix(f.Name, "tfconfig/"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// writeZip writes a zip of entries (name to content) and returns its path.
func writeZip(t *testing.T, entries [][2]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for _, e := range entries {
		w, err := z.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestPlanDigestSnapshot(t *testing.T) {
	manifest := [2]string{snapshotManifest, `[{"Key": "", "Dir": "."}, {"Key": "a", "Source": "./a", "Dir": "a"}]`}
	main := [2]string{"tfconfig/m-/main.tf", `module "a" { source = "./a" }`}
	a := [2]string{"tfconfig/m-a/main.tf", `variable "x" {}`}
	root := writeTree(t, map[string]string{"main.tf": main[1], "a/main.tf": a[1]})
	want := scanTree(t, root).Digest

	// Files OpenTofu would not load from the snapshot, and entries outside
	// a module, leave the digest alone.
	got, err := PlanDigest(writeZip(t, [][2]string{main, a, manifest,
		{"tfconfig/m-a/x.tf~", "junk"}, {"tfconfig/m-a/.h.tf", "junk"}, {"tfconfig/m-stray", "junk"}, {"tfplan", "x"}}))
	if err != nil || got != want {
		t.Errorf("PlanDigest = %s, %v; want %s", got, err, want)
	}
	// A module with no files still counts: the tree without module a's
	// file does not match a snapshot listing a.
	if got, _ := PlanDigest(writeZip(t, [][2]string{main, manifest})); got == want {
		t.Error("a snapshot missing a module's file matched")
	}
	for name, entries := range map[string][][2]string{
		"no manifest":       {main, a},
		"unlisted module":   {main, a, {"tfconfig/m-b/main.tf", ""}, manifest},
		"manifest not JSON": {main, {snapshotManifest, "{"}},
		"oversized file":    {main, manifest, {"tfconfig/m-a/big.tf", strings.Repeat(" ", 9<<20)}},
	} {
		if _, err := PlanDigest(writeZip(t, entries)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := PlanDigest(filepath.Join(root, "main.tf")); err == nil {
		t.Error("a file that is not a zip: no error")
	}
}

// TestTofuGetModules runs the real tofu get, as the gate does in its
// private copy, and scans with the manifest it wrote: a module it links in
// from outside the tree is left unread, and so is one whose source tofu
// evaluated from a variable; a module it links in from inside is read.
func TestTofuGetModules(t *testing.T) {
	bin, err := tofuBinary()
	if err != nil {
		t.Fatalf("these tests need OpenTofu: %v", err)
	}
	top := writeTree(t, map[string]string{
		"outside/main.tf":       `data "external" "x" { program = ["sh"] }`,
		"repo/vendored/main.tf": `data "http" "p" { method = "POST" }`,
		"repo/local/main.tf":    `variable "x" { default = 1 }`,
		"repo/vars.tf": `variable "src" {
  type    = string
  default = "./local"
}`,
	})
	root := filepath.Join(top, "repo")
	main := fmt.Sprintf(`module "out" { source = %q }
module "in" { source = %q }
module "byvar" { source = var.src }
`, filepath.Join(top, "outside"), filepath.Join(root, "vendored"))
	if err := os.WriteFile(filepath.Join(root, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runTofu(bin, root, "get"); err != nil {
		t.Fatal(err)
	}
	r := scanOpts(t, Options{Root: root, Dir: root, Manifest: filepath.Join(root, ".terraform/modules/modules.json")})
	wantFindings(t, r, `
module.byvar|main.tf|3
module.in.data.http.p|vendored/main.tf|1
module.out|main.tf|1`, "evaluates it at init", `"POST"`, "outside the configuration's root")
}
