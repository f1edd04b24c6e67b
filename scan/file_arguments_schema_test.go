package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchtender/switchtender/exec/tofubin"
)

// schemaArgument is one argument of an OpenTofu backend or key provider's
// schema, as its Go source declares it.
type schemaArgument struct {
	kind        string // "backend" or "key_provider"
	typ         string // the type OpenTofu registers it as: "s3", "aws_kms"
	name        string
	description string // its schema Description when a string literal, else ""
	deprecated  bool   // its schema says Deprecated
}

// openTofuModuleDir is the directory of the pinned OpenTofu Go module (the
// one exec/tofubin builds the tests' tofu from), found with go mod
// download -json outside any module, as tofubin does.
func openTofuModuleDir(t *testing.T) string {
	t.Helper()
	goBin, err := osexec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read OpenTofu's schemas from its module: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := osexec.CommandContext(ctx, goBin, "mod", "download", "-json", tofubin.Module+"@"+tofubin.Version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("go mod download %s@%s: %v: %s%s", tofubin.Module, tofubin.Version, err, errOut.String(), out.String())
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil || mod.Error != "" || mod.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s", tofubin.Module, tofubin.Version, err, mod.Error)
	}
	return mod.Dir
}

// parsePackage parses the non-test Go files of the package in dir.
func parsePackage(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("parsing %s: %v", n, err)
		}
		files = append(files, f)
	}
	return files
}

// importDirs maps a file's import names (alias or last element) to the
// directories, relative to the OpenTofu module, of OpenTofu's own packages.
func importDirs(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		rel, ok := strings.CutPrefix(p, tofubin.Module+"/")
		if !ok {
			continue
		}
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = rel
	}
	return out
}

// registeredBackends reads internal/backend/init/init.go: the backend types
// OpenTofu registers (the backends map Init fills), each with its
// package's directory.
func registeredBackends(t *testing.T, mod string) map[string]string {
	t.Helper()
	f := parsePackage(t, filepath.Join(mod, "internal/backend/init"))[0]
	imports := importDirs(f)
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || exprName(as.Lhs[0]) != "backends" {
			return true
		}
		lit, ok := as.Rhs[0].(*ast.CompositeLit)
		if !ok {
			return true
		}
		for _, el := range lit.Elts {
			kv := el.(*ast.KeyValueExpr)
			name, _ := strconv.Unquote(kv.Key.(*ast.BasicLit).Value)
			ast.Inspect(kv.Value, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
					out[name] = imports[exprName(sel.X)]
				}
				return true
			})
		}
		return false
	})
	if len(out) < 10 {
		t.Fatalf("read only %d backends from internal/backend/init/init.go (%v); has its form changed?", len(out), out)
	}
	return out
}

// registeredKeyProviders reads internal/encryption/default_registry.go:
// the packages of the key providers OpenTofu registers, each with the ID
// its descriptor returns.
func registeredKeyProviders(t *testing.T, mod string) map[string]string {
	t.Helper()
	var reg *ast.File
	for _, f := range parsePackage(t, filepath.Join(mod, "internal/encryption")) {
		if f.Name.Name == "encryption" && importDirs(f)["pbkdf2"] != "" {
			reg = f
		}
	}
	if reg == nil {
		t.Fatal("no default registry in internal/encryption; has its form changed?")
	}
	imports := importDirs(reg)
	out := map[string]string{}
	ast.Inspect(reg, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !strings.HasSuffix(exprName(call.Fun), "RegisterKeyProvider") || len(call.Args) != 1 {
			return true
		}
		if inner, ok := call.Args[0].(*ast.CallExpr); ok {
			if sel, ok := inner.Fun.(*ast.SelectorExpr); ok {
				dir := imports[exprName(sel.X)]
				out[descriptorID(t, filepath.Join(mod, dir))] = dir
			}
		}
		return true
	})
	if len(out) < 5 {
		t.Fatalf("read only %d key providers from the default registry (%v); has its form changed?", len(out), out)
	}
	return out
}

// descriptorID is the string literal a package's ID() method returns.
func descriptorID(t *testing.T, dir string) string {
	for _, f := range parsePackage(t, dir) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "ID" || len(fn.Body.List) != 1 {
				continue
			}
			if ret, ok := fn.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
				if s := stringLit(ret.Results[0]); s != "" {
					return s
				}
			}
		}
	}
	t.Fatalf("no ID() returning a string literal in %s", dir)
	return ""
}

// exprName is an identifier's name, or X.Sel for a selector.
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprName(e.X) + "." + e.Sel.Name
	}
	return ""
}

// stringLit is the value of a string literal, or of a + of them; "" for
// anything else.
func stringLit(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, _ := strconv.Unquote(e.Value)
			return s
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return stringLit(e.X) + stringLit(e.Y)
		}
	case *ast.ParenExpr:
		return stringLit(e.X)
	}
	return ""
}

// schemaMapTypes are the value types of the maps a backend's schema names
// its arguments in: configschema.Block's Attributes and BlockTypes, and
// the legacy helper/schema's Schema.
var schemaMapTypes = []string{"configschema.Attribute", "configschema.NestedBlock", "schema.Schema"}

// backendArguments reads every argument a backend package's schemas
// declare, nested blocks' included: the keys of each map literal whose
// values are schemaMapTypes.
func backendArguments(t *testing.T, typ, dir string) []schemaArgument {
	var out []schemaArgument
	for _, f := range parsePackage(t, dir) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			mt, ok := lit.Type.(*ast.MapType)
			if !ok {
				return true
			}
			star, ok := mt.Value.(*ast.StarExpr)
			if !ok || !slices.Contains(schemaMapTypes, exprName(star.X)) {
				return true
			}
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				a := schemaArgument{kind: "backend", typ: typ, name: stringLit(kv.Key)}
				if a.name == "" {
					t.Fatalf("backend %s: a schema key that is not a string literal in %s", typ, dir)
				}
				a.description, a.deprecated = schemaFields(kv.Value)
				out = append(out, a)
			}
			return true
		})
	}
	return out
}

// schemaFields reads Description and Deprecated from a schema entry's
// composite literal (a Deprecated of true or of a message both count).
func schemaFields(e ast.Expr) (string, bool) {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 0 {
		return "", false // a function returning the schema: its body's maps are read on their own
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	desc, dep := "", false
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		switch exprName(kv.Key) {
		case "Description":
			desc = stringLit(kv.Value)
		case "Deprecated":
			dep = exprName(kv.Value) == "true" || stringLit(kv.Value) != ""
		}
	}
	return desc, dep
}

// keyProviderArguments reads every argument a key provider package's
// configuration structs declare: the names in their hcl struct tags
// (gohcl decodes the key_provider block into them).
func keyProviderArguments(t *testing.T, typ, dir string) []schemaArgument {
	tag := regexp.MustCompile(`hcl:"([^",]+)`)
	var out []schemaArgument
	for _, f := range parsePackage(t, dir) {
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			if m := tag.FindStringSubmatch(field.Tag.Value); m != nil {
				out = append(out, schemaArgument{kind: "key_provider", typ: typ, name: m[1]})
			}
			return true
		})
		out = append(out, hclSchemaNames(f, typ)...)
	}
	return out
}

// hclSchemaNames reads the arguments a key provider that decodes its own
// body (pbkdf2) declares: the Name of each hcl.AttributeSchema and the
// Type of each hcl.BlockHeaderSchema in a slice literal.
func hclSchemaNames(f *ast.File, typ string) []schemaArgument {
	var out []schemaArgument
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		at, ok := lit.Type.(*ast.ArrayType)
		if !ok {
			return true
		}
		field := map[string]string{"hcl.AttributeSchema": "Name", "hcl.BlockHeaderSchema": "Type"}[exprName(at.Elt)]
		if field == "" {
			return true
		}
		for _, el := range lit.Elts {
			c, ok := el.(*ast.CompositeLit)
			if !ok {
				continue
			}
			for _, e := range c.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok && exprName(kv.Key) == field {
					out = append(out, schemaArgument{kind: "key_provider", typ: typ, name: stringLit(kv.Value)})
				}
			}
		}
		return true
	})
	return out
}

// openTofuArguments is every argument of every backend and key provider
// the pinned OpenTofu registers, read from its source, sorted; it fails t
// when the types registered are not knownTypes.
func openTofuArguments(t *testing.T) []schemaArgument {
	mod := openTofuModuleDir(t)
	var out []schemaArgument
	backends, keyProviders := registeredBackends(t, mod), registeredKeyProviders(t, mod)
	for kind, reg := range map[string]map[string]string{"backend": backends, "key_provider": keyProviders} {
		var types []string
		for typ := range reg {
			types = append(types, typ)
		}
		sort.Strings(types)
		if got, want := strings.Join(types, " "), strings.Join(knownTypes[kind], " "); got != want {
			t.Errorf("OpenTofu %s registers the %s types %s; knownTypes in scan/fileargs.go has %s", tofubin.Version, kind, got, want)
		}
	}
	for typ, dir := range backends {
		out = append(out, backendArguments(t, typ, filepath.Join(mod, dir))...)
	}
	for typ, dir := range keyProviders {
		out = append(out, keyProviderArguments(t, typ, filepath.Join(mod, dir))...)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.kind+" "+a.typ+" "+a.name < b.kind+" "+b.typ+" "+b.name
	})
	return out
}

// fileNameRE and fileDescriptionRE are the test's heuristic for an
// argument that names a file: its name ends in _file(s), _path(s),
// _dir(s), _directory or _bundle, or is path or credentials (both name a
// file in some backend), or its schema description speaks of a path to
// something, a file containing something, or a kubeconfig. It errs
// towards too many: an argument it takes for a file that is not one (a
// key in a bucket) is listed in fileArguments as what it is.
var (
	fileNameRE        = regexp.MustCompile(`^(.*_)?(file|files|path|paths|dir|dirs|directory|bundle|credentials)$`)
	fileDescriptionRE = regexp.MustCompile(`(?i)\bpaths? to\b|\bfiles? (containing|which contains?)\b|\bkube ?config\b`)
)

func namesAFile(a schemaArgument) bool {
	return fileNameRE.MatchString(a.name) || fileDescriptionRE.MatchString(a.description)
}

// TestScanKnowsEveryFileArgumentOfOpenTofu reads the schemas of every
// backend and key provider the pinned OpenTofu registers from its Go
// source (the module exec/tofubin builds the tests' tofu from) and fails
// when an argument that names a file (namesAFile) is not in fileArguments,
// the table the scan and docs/scan-file-arguments.md are made from, or
// when the table lists an argument OpenTofu does not have. The break it
// guards: the s3 backend's singular shared_credentials_file was not among
// the names the scan looked for, so a terraform_remote_state spelled that
// way passed the scan and its credential_process ran at plan.
func TestScanKnowsEveryFileArgumentOfOpenTofu(t *testing.T) {
	args := openTofuArguments(t)
	has := map[string]bool{}
	for _, a := range args {
		has[a.kind+" "+a.typ] = true
		has[a.kind+" "+a.typ+" "+a.name] = true
	}
	known := map[string]bool{}
	for _, f := range fileArguments {
		key := f.kind + " " + f.typ + " " + f.name
		known[key] = true
		if !has[key] {
			t.Errorf("fileArguments lists %s, which OpenTofu %s does not have (or no longer has): drop it", key, tofubin.Version)
		}
		if f.what == "" {
			t.Errorf("fileArguments: %s says nothing of what its file is", key)
		}
	}
	for _, k := range []string{"backend s3", "backend kubernetes", "backend gcs", "backend azurerm", "backend local",
		"key_provider aws_kms", "key_provider gcp_kms", "key_provider external", "key_provider pbkdf2"} {
		if !has[k] {
			t.Errorf("read no arguments of %s from OpenTofu's source; has its form changed?", k)
		}
	}
	for _, a := range args {
		key := a.kind + " " + a.typ + " " + a.name
		if namesAFile(a) && !known[key] {
			t.Errorf("OpenTofu %s's %s names a file (%q) that the scan does not know: add it to fileArguments in scan/fileargs.go, with runs true if the file can run a program, and to docs/scan-file-arguments.md",
				tofubin.Version, key, a.description)
			known[key] = true // once for an argument declared in several places
		}
	}
}
