package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each case is a tree scanned with no manifest: the findings it must give.
var treeCases = []struct {
	name    string
	files   map[string]string
	want    string   // "address|file|line" lines
	reasons []string // substrings of the reasons, in order
}{
	{
		name: "external two modules deep",
		files: map[string]string{
			"main.tf":     `module "a" { source = "./a" }`,
			"a/main.tf":   `module "b" { source = "./b" }`,
			"a/b/main.tf": "\n" + `data "external" "x" { program = ["sh"] }`,
		},
		want:    "module.a.module.b.data.external.x|a/b/main.tf|2",
		reasons: []string{`data "external" runs the program it names when the plan reads it`},
	},
	{
		name: "http POST with a body",
		files: map[string]string{"main.tf": `data "http" "p" {
  url          = "https://example.com"
  method       = "POST"
  request_body = "{}"
}`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{`sends a "POST" request`},
	},
	{
		name:    "http GET with a body",
		files:   map[string]string{"main.tf": `data "http" "p" { request_body = "x" }`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{"request body"},
	},
	{
		name:    "http method from a variable",
		files:   map[string]string{"main.tf": `data "http" "p" { method = var.m }`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{"not a plain string"},
	},
	{
		name:    "http method from a conditional with a fixed result",
		files:   map[string]string{"main.tf": `data "http" "p" { method = true ? "GET" : "POST" }`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{"not a plain string"},
	},
	{
		name:    "http method from a template with a literal interpolation",
		files:   map[string]string{"main.tf": `data "http" "p" { method = "${"GET"}" }`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{"not a plain string"},
	},
	{
		name:    "http method in lower case",
		files:   map[string]string{"main.tf": `data "http" "p" { method = "get" }`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{`"get"`},
	},
	{
		name:    "http method empty",
		files:   map[string]string{"main.tf": `data "http" "p" { method = "" }`},
		want:    "data.http.p|main.tf|1",
		reasons: []string{`""`},
	},
	{
		name: "http HEAD, default GET, null method and null body are reads",
		files: map[string]string{"main.tf": `
data "http" "head" { method = "HEAD" }
data "http" "get" { url = "https://example.com" }
data "http" "get2" {
  method       = "GET"
  request_body = null
}
data "http" "nullmethod" { method = null }
ephemeral "http" "e" { method = "GET" }
`},
	},
	{
		name:    "ephemeral http PUT",
		files:   map[string]string{"main.tf": `ephemeral "http" "e" { method = "PUT" }`},
		want:    "ephemeral.http.e|main.tf|1",
		reasons: []string{"when the plan opens it"},
	},
	{
		name: "x.tofu shadowing a clean x.tf",
		files: map[string]string{
			"x.tf":   `data "http" "p" {}`,
			"x.tofu": `data "external" "x" {}`,
		},
		want: "data.external.x|x.tofu|1",
	},
	{
		name: "a dirty x.tf shadowed by a clean x.tofu",
		files: map[string]string{
			"x.tf":        `data "external" "x" {}`,
			"x.tofu":      `data "http" "p" {}`,
			"y.tf.json":   `{"data": {"external": {"y": {}}}}`,
			"y.tofu.json": `{"data": {"http": {"y": {}}}}`,
		},
	},
	{
		name: "a .tf.json finding",
		files: map[string]string{"main.tf.json": `{
  "data": {"external": {"x": {"program": ["sh"]}}},
  "module": {"a": {"source": "./a"}}
}`,
			"a/main.tf.json": `{"data": {"http": {"p": {"method": "DELETE"}}}}`,
		},
		want: "data.external.x|main.tf.json|2\nmodule.a.data.http.p|a/main.tf.json|1",
	},
	{
		name: "JSON methods and bodies",
		files: map[string]string{"main.tf.json": `{"data": {"http": {
  "get": {"method": "GET", "request_body": null},
  "tmpl": {"method": "${var.m}"},
  "body": {"request_body": "x"}
}}}`},
		want: "data.http.body|main.tf.json|4\ndata.http.tmpl|main.tf.json|3",
	},
	{
		name: "a data source in a check block",
		files: map[string]string{"main.tf": `check "health" {
  data "http" "ping" {
    url    = "https://example.com"
    method = "POST"
  }
  assert {
    condition     = true
    error_message = "no"
  }
}`},
		want:    "data.http.ping|main.tf|2",
		reasons: []string{`in check "health"`},
	},
	{
		name:    "local_command data",
		files:   map[string]string{"main.tf": `data "local_command" "c" { command = "id" }`},
		want:    "data.local_command.c|main.tf|1",
		reasons: []string{"runs the command"},
	},
	{
		name:    "aws_lambda_invocation data",
		files:   map[string]string{"main.tf": `data "aws_lambda_invocation" "l" {}`},
		want:    "data.aws_lambda_invocation.l|main.tf|1",
		reasons: []string{"Lambda"},
	},
	{
		name:    "ephemeral external",
		files:   map[string]string{"main.tf": `ephemeral "external" "x" {}`},
		want:    "ephemeral.external.x|main.tf|1",
		reasons: []string{`ephemeral "external" runs the program it names when the plan opens it`},
	},
	{
		name: "encryption with an external key provider and method",
		files: map[string]string{"main.tf": `terraform {
  encryption {
    key_provider "external" "k" { command = ["./key"] }
    method "external" "m" {
      keys           = key_provider.external.k
      encrypt_command = ["./enc"]
      decrypt_command = ["./dec"]
    }
    key_provider "pbkdf2" "p" { passphrase = "correct horse battery staple" }
    method "aes_gcm" "a" { keys = key_provider.pbkdf2.p }
  }
}`},
		want:    "key_provider.external.k|main.tf|3\nmethod.external.m|main.tf|4",
		reasons: []string{`encryption key_provider "external" runs`, `encryption method "external" runs`},
	},
	{
		name: "a benign encryption block",
		files: map[string]string{"main.tf": `terraform {
  encryption {
    key_provider "pbkdf2" "p" { passphrase = "correct horse battery staple" }
  }
}`},
	},
	{
		name: "module source from a variable",
		files: map[string]string{
			"main.tf":   `module "a" { source = var.src }` + "\n" + `module "b" { source = "./${var.dir}" }`,
			"a/main.tf": `data "external" "x" {}`,
		},
		want:    "module.a|main.tf|1\nmodule.b|main.tf|2",
		reasons: []string{"evaluates it at init", "evaluates it at init"},
	},
	{
		name:    "a module block with no source",
		files:   map[string]string{"main.tf": `module "a" {}`},
		want:    "module.a|main.tf|1",
		reasons: []string{"no source"},
	},
	{
		name: "a file that does not parse",
		files: map[string]string{
			"main.tf": `module "a" { source = "./a" }`,
			"a/x.tf":  "resource \"terraform_data\" \"r\" {}\n\nresource \"x\" {\n  = broken\n}\n",
		},
		want:    "module.a|a/x.tf|4",
		reasons: []string{"does not parse"},
	},
	{
		name: "a clean configuration with a local module",
		files: map[string]string{
			"main.tf": `module "net" { source = "./modules/net" }` + "\n" + `resource "terraform_data" "r" {}`,
			"modules/net/main.tf": `data "http" "ip" { url = "https://example.com" }
module "sub" { source = "../sub" }`,
			"modules/sub/main.tf": `variable "x" { default = 1 }`,
			"unused/main.tf":      `data "external" "never" {}`,
		},
	},
	{
		name:    "a module cycle",
		files:   map[string]string{"main.tf": `module "self" { source = "./" }`},
		want:    "module.self|main.tf|1",
		reasons: []string{"cycle"},
	},
	{
		name: "hidden and editor files are ignored",
		files: map[string]string{
			".hidden.tf":   `data "external" "a" {}`,
			"x.tf~":        `data "external" "b" {}`,
			"#x.tf#":       `data "external" "c" {}`,
			".#x.tf":       `data "external" "d" {}`,
			"x.tftest.hcl": `run "t" {}`,
			"notes.txt":    `data "external" "e" {}`,
			"main.tf":      `resource "terraform_data" "r" {}`,
		},
	},
	{
		name: "an override file is read",
		files: map[string]string{
			"main.tf":     `data "http" "p" {}`,
			"override.tf": `data "http" "p" { method = "POST" }`,
		},
		want: "data.http.p|override.tf|1",
	},
	{
		name: "an override file replaces a module source",
		files: map[string]string{
			"main.tf":       `module "a" { source = "./clean" }`,
			"a_override.tf": `module "a" { source = "./dirty" }`,
			"b_override.tf": `module "a" { count = 1 }`,
			"clean/main.tf": `variable "x" {}`,
			"dirty/main.tf": `data "external" "x" {}`,
		},
		want: "module.a.data.external.x|dirty/main.tf|1",
	},
	{
		name: "a local module that does not exist",
		files: map[string]string{
			"main.tf": `module "a" { source = "./nowhere" }`,
		},
		want:    "module.a|main.tf|1",
		reasons: []string{"does not exist"},
	},
	{
		name: "a local module pointing into a committed .terraform",
		files: map[string]string{
			"main.tf":                      `module "a" { source = "./.terraform/modules/a" }`,
			".terraform/modules/a/main.tf": `variable "x" {}`,
		},
		want:    "module.a|main.tf|1",
		reasons: []string{".terraform"},
	},
}

func TestTreeCases(t *testing.T) {
	for _, c := range treeCases {
		t.Run(c.name, func(t *testing.T) {
			wantFindings(t, scanTree(t, writeTree(t, c.files)), c.want, c.reasons...)
		})
	}
}

func TestRegistryModuleNotInManifest(t *testing.T) {
	// A benign copy sits where tofu get would install it, but the manifest
	// does not list it: the committed copy is never read.
	root := writeTree(t, map[string]string{
		"main.tf":                         `module "vpc" { source = "hashicorp/vpc/aws" }`,
		".terraform/modules/vpc/main.tf":  `variable "x" {}`,
		".terraform/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"vpc","Source":"registry.opentofu.org/hashicorp/vpc/aws","Version":"1.0.0","Dir":".terraform/modules/vpc"}]}`,
		"gate/modules.json":               `{"Modules":[{"Key":"","Source":"","Dir":"."}]}`,
	})
	r := scanOpts(t, Options{Root: root, Dir: root, Manifest: filepath.Join(root, "gate/modules.json")})
	wantFindings(t, r, "module.vpc|main.tf|1", "could not be downloaded")
	if r.Modules != 1 {
		t.Errorf("read %d modules, want the root only", r.Modules)
	}
	// No manifest at all: likewise.
	r = scanTree(t, root)
	wantFindings(t, r, "module.vpc|main.tf|1", "could not be downloaded")
}

func TestRegistryModuleInManifest(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.tf": `module "vpc" { source = "hashicorp/vpc/aws" }
module "git" { source = "git::https://example.com/x.git?ref=v1" }`,
		".terraform/modules/vpc/main.tf":          `module "sub" { source = "./modules/sub" }`,
		".terraform/modules/vpc/modules/sub/x.tf": `data "external" "x" {}`,
		".terraform/modules/git/main.tf":          `data "http" "p" { method = "PATCH" }`,
		".terraform/modules/stale/main.tf":        `data "external" "stale" {}`,
		".terraform/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},
{"Key":"vpc","Source":"registry.opentofu.org/hashicorp/vpc/aws","Version":"1.0.0","Dir":".terraform/modules/vpc"},
{"Key":"vpc.sub","Source":"./modules/sub","Dir":".terraform/modules/vpc/modules/sub"},
{"Key":"git","Source":"git::https://example.com/x.git?ref=v1","Dir":".terraform/modules/git"}]}`,
	})
	r := scanOpts(t, Options{Root: root, Dir: root, Manifest: filepath.Join(root, ".terraform/modules/modules.json")})
	wantFindings(t, r, `
module.git.data.http.p|.terraform/modules/git/main.tf|1
module.vpc.module.sub.data.external.x|.terraform/modules/vpc/modules/sub/x.tf|1`)
	if r.Modules != 4 || r.Files != 4 {
		t.Errorf("read %d modules and %d files, want 4 and 4", r.Modules, r.Files)
	}
}

func TestManifestDirMissing(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.tf":      `module "vpc" { source = "hashicorp/vpc/aws" }`,
		"modules.json": `{"Modules":[{"Key":"vpc","Source":"registry.opentofu.org/hashicorp/vpc/aws","Dir":".terraform/modules/vpc"}]}`,
	})
	r := scanOpts(t, Options{Root: root, Dir: root, Manifest: filepath.Join(root, "modules.json")})
	wantFindings(t, r, "module.vpc|main.tf|1", "does not exist")
}

func TestLocalModuleEscapingRoot(t *testing.T) {
	top := writeTree(t, map[string]string{
		"repo/main.tf":    `module "out" { source = "../outside" }`,
		"outside/main.tf": `variable "x" {}`,
	})
	root := filepath.Join(top, "repo")
	wantFindings(t, scanTree(t, root), "module.out|main.tf|1", "outside the configuration's root")
	// The same path from a root module one level down stays inside.
	wantFindings(t, scanOpts(t, Options{Root: top, Dir: root}), "")
}

func TestSymlinks(t *testing.T) {
	top := writeTree(t, map[string]string{
		"repo/main.tf":      `module "in" { source = "./linked" }` + "\n" + `module "out" { source = "./away" }`,
		"repo/real/main.tf": `data "external" "in" {}`,
		"outside/evil.tf":   `data "external" "out" {}`,
		"outside/mod/x.tf":  `variable "x" {}`,
	})
	root := filepath.Join(top, "repo")
	for old, new := range map[string]string{
		filepath.Join(top, "outside/evil.tf"): filepath.Join(root, "evil.tf"),
		filepath.Join(top, "outside/mod"):     filepath.Join(root, "away"),
		filepath.Join(root, "real"):           filepath.Join(root, "linked"),
		filepath.Join(root, "real/main.tf"):   filepath.Join(root, "linked-file.tf"),
	} {
		if err := os.Symlink(old, new); err != nil {
			t.Fatal(err)
		}
	}
	wantFindings(t, scanTree(t, root), `
|evil.tf|0
data.external.in|linked-file.tf|1
module.in.data.external.in|real/main.tf|1
module.out|main.tf|2`, "symlink", "", "", "outside")
}

func TestDepthBound(t *testing.T) {
	files := map[string]string{}
	dir := ""
	for i := 0; i < MaxDepth+3; i++ {
		files[dir+"main.tf"] = `module "m" { source = "./m" }`
		dir += "m/"
	}
	r := scanTree(t, writeTree(t, files))
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Reason, "deeper than") {
		t.Fatalf("findings:\n%s", allReasons(r.Findings))
	}
	if got := strings.Count(r.Findings[0].Address, "module."); got != MaxDepth+1 {
		t.Errorf("finding at depth %d, want %d", got, MaxDepth+1)
	}
	if r.Modules != MaxDepth+1 {
		t.Errorf("read %d modules, want %d", r.Modules, MaxDepth+1)
	}
}

func TestOversizedAndOddFiles(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.tf": `resource "terraform_data" "r" {}`,
		"deep.tf": "locals { x = " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + " }",
	})
	if err := os.Mkdir(filepath.Join(root, "dir.tf"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 9<<20)
	if err := os.WriteFile(filepath.Join(root, "big.tf"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	wantFindings(t, scanTree(t, root), "|big.tf|0\n|deep.tf|0", "could not be read", "could not be read")
}

func TestCallerMistakes(t *testing.T) {
	top := writeTree(t, map[string]string{"a/main.tf": "", "b/main.tf": ""})
	for name, opts := range map[string]Options{
		"dir outside root": {Root: filepath.Join(top, "a"), Dir: filepath.Join(top, "b")},
		"dir missing":      {Root: top, Dir: filepath.Join(top, "c")},
		"manifest missing": {Root: top, Dir: top, Manifest: filepath.Join(top, "nope.json")},
	} {
		if _, err := Module(opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEncryptionEnv(t *testing.T) {
	root := writeTree(t, map[string]string{"main.tf": ""})
	for name, c := range map[string]struct{ env, want, reason string }{
		"hcl": {env: `
key_provider "external" "k" { command = ["./key"] }
method "aes_gcm" "m" { keys = key_provider.external.k }`, want: "key_provider.external.k|TF_ENCRYPTION|1", reason: "runs the command"},
		"json": {env: ` {"method": {"external": {"m": {"encrypt_command": ["x"], "decrypt_command": ["y"]}}}}`,
			want: "method.external.m|TF_ENCRYPTION|1", reason: "runs the command"},
		"benign":         {env: `key_provider "pbkdf2" "p" { passphrase = "correct horse battery staple" }`},
		"unset":          {env: "  \n"},
		"does not parse": {env: `key_provider "external" {`, want: "|TF_ENCRYPTION|1", reason: "does not parse"},
		"wrapped in terraform": {env: "terraform {\n encryption {\n key_provider \"external\" \"k\" {}\n }\n}",
			want: "|TF_ENCRYPTION|1", reason: "could not be read"},
	} {
		t.Run(name, func(t *testing.T) {
			r := scanOpts(t, Options{Root: root, Dir: root, Encryption: c.env})
			var reasons []string
			if c.reason != "" {
				reasons = []string{c.reason}
			}
			wantFindings(t, r, c.want, reasons...)
		})
	}
}

func TestConfigFiles(t *testing.T) {
	got := ConfigFiles([]string{
		"a.tf", "a.tofu", "b.tf.json", "b.tofu.json", "c.tf", "c.tofu.json",
		"override.tf", "x_override.tf.json", "t.tftest.hcl", "t.tofutest.json",
		".h.tf", "e.tf~", "#e.tf#", ".#l.tf", "readme.md", "tf", ".tf",
	})
	want := "a.tofu b.tofu.json c.tf c.tofu.json override.tf x_override.tf.json"
	if strings.Join(got, " ") != want {
		t.Errorf("ConfigFiles = %v, want %s", got, want)
	}
}

func TestAddress(t *testing.T) {
	if got := Address([]string{"a", "b"}, "data.external.x"); got != "module.a.module.b.data.external.x" {
		t.Errorf("Address = %q", got)
	}
	if got := Address(nil, "data.external.x"); got != "data.external.x" {
		t.Errorf("Address = %q", got)
	}
	if got := ModuleKey([]string{"a", "b"}); got != "a.b" {
		t.Errorf("ModuleKey = %q", got)
	}
}

func TestModuleFanOutBound(t *testing.T) {
	// Each level calls the next twice: 2^20 module instances unbounded.
	files := map[string]string{"main.tf": `module "top" { source = "./l0" }`}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("l%d/main.tf", i)] = fmt.Sprintf(`module "a" { source = "../l%[1]d" }
module "b" { source = "../l%[1]d" }`, i+1)
	}
	files["l20/main.tf"] = `variable "x" {}`
	r := scanTree(t, writeTree(t, files))
	if r.Modules != MaxModules+1 {
		t.Errorf("read %d modules, want %d", r.Modules, MaxModules+1)
	}
	if len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Reason, "more than 10000 modules") {
		t.Errorf("no finding for the bound; first of %d: %+v", len(r.Findings), r.Findings[:min(1, len(r.Findings))])
	}
}

func TestDataReason(t *testing.T) {
	for _, c := range []struct {
		kind, typ, check, method string
		literal, body            bool
		want                     string // "" for none, else a substring
	}{
		{"data", "http", "", "GET", true, false, ""},
		{"data", "http", "", "HEAD", true, false, ""},
		{"data", "http", "", "POST", true, false, `sends a "POST" request when the plan reads it`},
		{"data", "http", "", "GET", false, false, "not a plain string"},
		{"data", "http", "", "GET", true, true, "request body"},
		{"data", "http", "c", "head", true, false, `data "http" in check "c" sends a "head" request`},
		{"ephemeral", "local_command", "", "", true, false, "when the plan opens it"},
		{"data", "aws_instance", "", "", true, false, ""},
	} {
		got := DataReason(c.kind, c.typ, c.check, c.method, c.literal, c.body)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("DataReason(%q, %q, %q, %q, %v, %v) = %q, want %q", c.kind, c.typ, c.check, c.method, c.literal, c.body, got, c.want)
		}
	}
	if EncryptionReason("method", "aes_gcm") != "" || EncryptionReason("key_provider", "external") == "" {
		t.Error("EncryptionReason flags the wrong types")
	}
}

func TestInstalledPackageCannotReachAnUninstalledOne(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.tf":                          `module "vpc" { source = "hashicorp/vpc/aws" }`,
		".terraform/modules/vpc/main.tf":   `module "stale" { source = "../stale" }`,
		".terraform/modules/stale/main.tf": `variable "x" {}`,
		"modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},
{"Key":"vpc","Source":"registry.opentofu.org/hashicorp/vpc/aws","Version":"1.0.0","Dir":".terraform/modules/vpc"}]}`,
	})
	r := scanOpts(t, Options{Root: root, Dir: root, Manifest: filepath.Join(root, "modules.json")})
	wantFindings(t, r, "module.vpc.module.stale|.terraform/modules/vpc/main.tf|1", "did not install")
}
