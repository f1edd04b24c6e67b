package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func scanRoot(t *testing.T, root string) *Result {
	t.Helper()
	done := make(chan *Result, 1)
	go func() {
		res, err := Module(Options{Root: root, Dir: root})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if res == nil {
			t.FailNow()
		}
		return res
	case <-time.After(20 * time.Second):
		t.Fatal("the scan hangs")
		return nil
	}
}

// The second input: ways OpenTofu accepts of writing a data source that acts
// at plan time. Each must be a finding.
func TestScanFindsEverySpellingOfAPlanTimeDataSource(t *testing.T) {
	cases := map[string]map[string]string{
		"lower get":         {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = \"get\"\n}\n"},
		"GET space":         {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = \"GET \"\n}\n"},
		"upper call":        {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = upper(\"post\")\n}\n"},
		"list":              {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = [\"POST\"]\n}\n"},
		"heredoc":           {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = <<EOT\nPOST\nEOT\n}\n"},
		"template":          {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = \"%{if true}POST%{endif}\"\n}\n"},
		"escape":            {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = \"\\u0050OST\"\n}\n"},
		"paren":             {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  method = (\"POST\")\n}\n"},
		"body":              {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n  request_body = \"\"\n}\n"},
		"ephemeral":         {"main.tf": "ephemeral \"http\" \"x\" {\n  url = \"u\"\n  method = \"POST\"\n}\n"},
		"bare labels":       {"main.tf": "data external x {\n  program = [\"sh\"]\n}\n"},
		"label escape":      {"main.tf": "data \"\\u0065xternal\" \"x\" {\n  program = [\"sh\"]\n}\n"},
		"tofu.json":         {"main.tofu.json": `{"data": {"external": {"x": {"program": ["sh"]}}}}`},
		"json array":        {"main.tf.json": `{"data": [{"external": [{"x": [{"program": ["sh"]}]}]}]}`},
		"json escape":       {"main.tf.json": `{"data": {"\u0065xternal": {"x": {"program": ["sh"]}}}}`},
		"json method":       {"main.tf.json": `{"data": {"http": {"x": {"url": "u", "method": "${\"POST\"}"}}}}`},
		"json dup":          {"main.tf.json": `{"data": {"http": {"x": {"url": "u", "method": "GET", "method": "POST"}}}}`},
		"json check":        {"main.tf.json": `{"check": {"c": {"data": {"external": {"x": {"program": ["sh"]}}}}}}`},
		"override":          {"main.tf": "data \"http\" \"x\" {\n  url = \"u\"\n}\n", "x_override.tf": "data \"http\" \"x\" {\n  method = \"POST\"\n}\n"},
		"tofu.json shadows": {"x.tf.json": `{"data": {"http": {"x": {"url": "u"}}}}`, "x.tofu.json": `{"data": {"external": {"x": {"program": ["sh"]}}}}`},
		"enc json":          {"main.tf.json": `{"terraform": {"encryption": {"key_provider": {"external": {"k": {"command": ["sh"]}}}}}}`},
		"enc method":        {"main.tf": "terraform {\n  encryption {\n    method \"external\" \"m\" {\n      encrypt_command = [\"sh\"]\n    }\n  }\n}\n"},
		"override src":      {"main.tf": "module \"m\" {\n  source = \"./clean\"\n}\n", "o_override.tf": "module \"m\" {\n  source = \"./evil\"\n}\n", "clean/main.tf": "", "evil/main.tf": "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n"},
		"bom":               {"main.tf": "\ufeffdata \"external\" \"x\" {\n  program = [\"sh\"]\n}\n"},
		"crlf":              {"main.tf": "data \"external\" \"x\" {\r\n  program = [\"sh\"]\r\n}\r\n"},
		"backslash src":     {"main.tf": "module \"m\" {\n  source = \".\\\\evil\"\n}\n", "evil/main.tf": "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n"},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			res := scanRoot(t, writeTree(t, files))
			if len(res.Findings) == 0 {
				t.Fatalf("no finding for %v", files)
			}
		})
	}
}

// OpenTofu's file choice: x.tofu.json shadows x.tf.json, hidden files are
// ignored. What OpenTofu does not load need not be a finding (the scan
// chooses as OpenTofu does).
func TestScanReadsOnlyTheFilesOpenTofuLoads(t *testing.T) {
	res := scanRoot(t, writeTree(t, map[string]string{
		"x.tf.json":   `{"data": {"external": {"x": {"program": ["sh"]}}}}`,
		"x.tofu.json": `{"data": {"http": {"x": {"url": "u"}}}}`,
		".hidden.tf":  "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n",
	}))
	if len(res.Findings) != 0 {
		t.Fatalf("findings %+v", res.Findings)
	}
}

// Crash and hang inputs: a symbolic-link loop for a file, a module cycle
// through ../, a module that is its own directory, a link loop for a module
// directory, a tree deeper than MaxDepth, a file over the size limit, deep
// nesting. Each ends with a finding.
func TestScanEndsEveryHostileShapeWithAFinding(t *testing.T) {
	t.Run("file link loop", func(t *testing.T) {
		root := writeTree(t, map[string]string{"ok.tf": ""})
		os.Symlink("b.tf", filepath.Join(root, "a.tf"))
		os.Symlink("a.tf", filepath.Join(root, "b.tf"))
		if res := scanRoot(t, root); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("module cycle", func(t *testing.T) {
		root := writeTree(t, map[string]string{
			"main.tf":   "module \"a\" {\n  source = \"./a\"\n}\n",
			"a/main.tf": "module \"b\" {\n  source = \"../b\"\n}\n",
			"b/main.tf": "module \"a\" {\n  source = \"../a\"\n}\n",
		})
		if res := scanRoot(t, root); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("self", func(t *testing.T) {
		root := writeTree(t, map[string]string{"main.tf": "module \"me\" {\n  source = \"./\"\n}\n"})
		if res := scanRoot(t, root); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("dir link loop", func(t *testing.T) {
		root := writeTree(t, map[string]string{"main.tf": "module \"l\" {\n  source = \"./l\"\n}\n"})
		os.Symlink("l", filepath.Join(root, "l"))
		if res := scanRoot(t, root); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("deep", func(t *testing.T) {
		files := map[string]string{}
		p := ""
		for i := 0; i < MaxDepth+3; i++ {
			files[p+"main.tf"] = "module \"d\" {\n  source = \"./d\"\n}\n"
			p += "d/"
		}
		files[p+"main.tf"] = "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n"
		if res := scanRoot(t, writeTree(t, files)); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("huge", func(t *testing.T) {
		body := strings.Repeat("# pad\n", (9<<20)/6) + "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n"
		if res := scanRoot(t, writeTree(t, map[string]string{"main.tf": body})); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("nesting", func(t *testing.T) {
		body := "locals {\n  x = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n}\n"
		if res := scanRoot(t, writeTree(t, map[string]string{"main.tf": body})); len(res.Findings) == 0 {
			t.Fatal("no finding")
		}
	})
	t.Run("up and out", func(t *testing.T) {
		outer := writeTree(t, map[string]string{"evil/main.tf": "data \"external\" \"x\" {\n  program = [\"sh\"]\n}\n", "repo/main.tf": "module \"o\" {\n  source = \"../evil\"\n}\n"})
		res, err := Module(Options{Root: filepath.Join(outer, "repo"), Dir: filepath.Join(outer, "repo")})
		if err != nil || len(res.Findings) == 0 {
			t.Fatalf("err %v, findings %+v", err, res)
		}
	})
	t.Run("committed .terraform", func(t *testing.T) {
		root := writeTree(t, map[string]string{
			"main.tf":                         "module \"v\" {\n  source = \"./vendor\"\n}\nmodule \"r\" {\n  source = \"terraform-aws-modules/vpc/aws\"\n}\n",
			".terraform/modules/modules.json": `{"Modules":[{"Key":"r","Source":"registry.opentofu.org/terraform-aws-modules/vpc/aws","Dir":".terraform/modules/r"}]}`,
			".terraform/modules/r/main.tf":    "",
		})
		os.Symlink(".terraform/modules/r", filepath.Join(root, "vendor"))
		res := scanRoot(t, root)
		if len(res.Findings) < 2 {
			t.Fatalf("findings %+v", res.Findings)
		}
	})
}

// Promise (crash and hang inputs end in a finding): the scan is
// bounded by the tree it reads. A "diamond" of D directories, each calling
// the next one twice, is 2^D module instances for OpenTofu as for the scan
// (both follow every call path, and the digest must match the plan's
// snapshot), so MaxModules bounds it: past 10,000 modules the rest is left
// unread, a finding that holds the run, in about a second.
func TestScanBoundsADiamondOfModules(t *testing.T) {
	const depth = 20
	files := map[string]string{}
	for i := 0; i < depth; i++ {
		files[fmt.Sprintf("l%d/main.tf", i)] = fmt.Sprintf("module \"a\" {\n  source = \"../l%d\"\n}\nmodule \"b\" {\n  source = \"../l%d\"\n}\n", i+1, i+1)
	}
	files[fmt.Sprintf("l%d/main.tf", depth)] = ""
	root := writeTree(t, files)
	start := time.Now()
	res, err := Module(Options{Root: root, Dir: filepath.Join(root, "l0")})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took > 20*time.Second || res.Modules > MaxModules+1 {
		t.Fatalf("a tree of %d files took %v to scan, reading %d modules (%d findings)", depth+1, took, res.Modules, len(res.Findings))
	}
	if !strings.Contains(fmt.Sprint(res.Findings), fmt.Sprintf("more than %d modules", MaxModules)) {
		t.Fatalf("the bound left no finding: %d findings", len(res.Findings))
	}
}
