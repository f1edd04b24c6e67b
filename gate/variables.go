package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
)

// variableSchema reads only what SensitiveVariables needs from a
// configuration file: variable blocks and their sensitive argument.
var (
	fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}}}
	varSchema  = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "sensitive"}}}
)

// configFileKind says whether OpenTofu reads file name of a root module,
// and whether as JSON: *.tf, *.tf.json, *.tofu and *.tofu.json, where x.tofu
// shadows x.tf (and x.tofu.json shadows x.tf.json).
func configFileKind(name string, present map[string]bool) (json, read bool) {
	switch {
	case strings.HasSuffix(name, ".tf.json"):
		return true, !present[strings.TrimSuffix(name, ".tf.json")+".tofu.json"]
	case strings.HasSuffix(name, ".tofu.json"):
		return true, true
	case strings.HasSuffix(name, ".tf"):
		return false, !present[strings.TrimSuffix(name, ".tf")+".tofu"]
	case strings.HasSuffix(name, ".tofu"):
		return false, true
	}
	return false, false
}

// SensitiveVariables returns the sorted names of the variables that the root
// module in dir declares with sensitive = true. It reads the files OpenTofu
// reads for a root module: *.tf, *.tf.json, *.tofu and *.tofu.json, where
// x.tofu shadows x.tf (and x.tofu.json shadows x.tf.json). A file that does
// not parse, or a sensitive argument that is not a literal bool, is an
// error: the caller then treats every answer as a secret (it fails closed).
func SensitiveVariables(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the working directory: %w", err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		present[e.Name()] = true
	}
	names := map[string]bool{}
	var errs []error
	total := 0
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			continue
		}
		json, read := configFileKind(n, present)
		if !read {
			continue
		}
		src, err := ReadConfigFile(filepath.Join(dir, n))
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", n, err))
			continue
		}
		if total += len(src); total > MaxConfigFileSize*4 {
			return nil, fmt.Errorf("the configuration files of %s hold more than %d bytes; not read", dir, MaxConfigFileSize*4)
		}
		errs = append(errs, sensitiveDeclared(src, n, json, names)...)
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// sensitiveDeclared adds to names the variables that the configuration file
// src (named n, JSON when json) declares sensitive, returning what it could
// not read.
func sensitiveDeclared(src []byte, n string, json bool, names map[string]bool) []error {
	// A parser per file: hclparse.Parser would keep every file parsed.
	var f *hcl.File
	var diags hcl.Diagnostics
	if json {
		f, diags = hcljson.Parse(src, n)
	} else {
		f, diags = hclsyntax.ParseConfig(src, n, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return []error{fmt.Errorf("reading %s: %s", n, diags.Error())}
	}
	content, _, diags := f.Body.PartialContent(fileSchema)
	if diags.HasErrors() {
		return []error{fmt.Errorf("reading %s: %s", n, diags.Error())}
	}
	var errs []error
	for _, b := range content.Blocks {
		sensitive, err := sensitiveArgument(b, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sensitive {
			names[b.Labels[0]] = true
		}
	}
	return errs
}

// sensitiveArgument reads the sensitive argument of variable block b in
// file n: false when absent, an error unless it is a literal bool.
func sensitiveArgument(b *hcl.Block, n string) (bool, error) {
	vc, _, diags := b.Body.PartialContent(varSchema)
	if diags.HasErrors() {
		return false, fmt.Errorf("reading variable %q in %s: %s", b.Labels[0], n, diags.Error())
	}
	a, ok := vc.Attributes["sensitive"]
	if !ok {
		return false, nil
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type().FriendlyName() != "bool" {
		return false, fmt.Errorf("variable %q in %s: sensitive is not a literal true or false", b.Labels[0], n)
	}
	return v.True(), nil
}
