package scan

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzModule scans a module of one native and one JSON file of random
// contents, calling a local module of random contents too: it must never
// panic, and every finding must name a file.
func FuzzModule(f *testing.F) {
	f.Add(`data "external" "x" {}`, `{"data": {"http": {"p": {"method": "${x}"}}}}`, `module "a" { source = "./" }`)
	f.Add(`data "http" "p" { method = "GET" request_body = null }`, `{"module": {"a": {"source": "./a"}}}`, `check "c" { data "http" "p" {} }`)
	f.Add(`terraform { encryption { method "external" "m" {} } }`, `{"terraform": {"encryption": {"key_provider": {"external": {"k": {}}}}}}`, `}{`)
	f.Add(`module "a" { source = "../../../x" }`, `[1, 2`, `ephemeral "http" "e" { method = upper("get") }`)
	f.Fuzz(func(t *testing.T, native, json, child string) {
		root := t.TempDir()
		for name, src := range map[string]string{
			"main.tf":      native + "\nmodule \"fuzz\" { source = \"./a\" }\n",
			"main.tf.json": json,
			"a/main.tf":    child,
		} {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Module(Options{Root: root, Dir: root, Encryption: native})
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range r.Findings {
			if fd.File == "" || fd.Reason == "" {
				t.Errorf("finding without a file or reason: %+v", fd)
			}
		}
	})
}
