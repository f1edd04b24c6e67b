package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trickyKeysConfig has resources and module calls for_each over keys
// that need quoting, escaping and normalising in an address (quotes,
// backslashes, template sequences, control characters, decomposed and
// astral characters), and a moved block.
const trickyKeysConfig = `
variable "gen" {
  type    = string
  default = "1"
}
locals {
  keys = toset(["plain", "quo\"te", "back\\slash", "cafe\u0301", "emoji 🎉", "new\nline", "tab\t", "$${x}", "%%{y}", "sep\u2028", "nul\u0000", "[0]", "a.b"])
}
resource "terraform_data" "r" {
  for_each         = local.keys
  input            = each.key
  triggers_replace = [var.gen]
}
module "m" {
  source   = "./m"
  for_each = local.keys
  gen      = var.gen
}
`

const trickyKeysModule = `
variable "gen" { type = string }
resource "terraform_data" "inner" {
  for_each = toset(["x\"y", "z"])
  input    = var.gen
}
`

// A worker's honest rendering of a real plan names the very addresses the
// plan file holds (SameChanges), whatever its instance keys hold, in a module
// instance too, for a create, a replace and a move.
func TestRenderingNamesTheSameChangesForTrickyKeys(t *testing.T) {
	bin := tofuBinary(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.tf", trickyKeysConfig)
	write("m/main.tf", trickyKeysModule)
	run := func(args ...string) []byte {
		out, err := runTofu(bin, dir, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func(name string, vars ...string) {
		run(append([]string{"plan", "-input=false", "-no-color", "-out=p.tfplan"}, vars...)...)
		js := run("show", "-json", "-no-color", "p.tfplan")
		plan, err := os.ReadFile(filepath.Join(dir, "p.tfplan"))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := AnalyzePlan(js)
		if err != nil {
			t.Fatal(err)
		}
		file, err := PlanFileChanges(plan)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := SameChanges(sum, file); !ok {
			t.Errorf("%s: the honest rendering is refused: %s\nrendering %q\nplan file %q", name, why, sum.ByAction, file)
		}
		n := 0
		for _, a := range file {
			n += len(a)
		}
		if n == 0 {
			t.Errorf("%s: the plan changes nothing", name)
		}
	}
	run("init", "-input=false", "-no-color")
	check("create")
	run("apply", "-auto-approve", "-input=false", "-no-color")
	check("replace", "-var=gen=2")
	write("moved.tf", "moved {\n  from = terraform_data.r\n  to   = terraform_data.s\n}\n")
	write("main.tf", strings.Replace(trickyKeysConfig, `resource "terraform_data" "r" {`, `resource "terraform_data" "s" {`, 1))
	check("move and replace", "-var=gen=3")
}
