package scan

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/switchtender/switchtender/gate"
)

var (
	backendFileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "terraform"},
		{Type: "variable", LabelNames: []string{"name"}}, {Type: "locals"}}}
	backendSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "backend", LabelNames: []string{"type"}},
		{Type: "cloud"},
		{Type: "encryption"},
	}}
)

// Backend returns the backend, cloud and encryption blocks the root module
// in dir declares (where its state lives and how it is read), as written:
// for each, in file and source order, its file name, its type and its
// source text. OpenTofu evaluates variables and locals in these blocks
// (OpenTofu 1.8 "Variables and locals in backend configuration"), so what
// they reference follows: each variable's declaration and the value the
// .tfvars files OpenTofu loads by itself give it (terraform.tfvars[.json],
// *.auto.tfvars[.json]), and each local's definition, with what that
// references in turn. Two root modules with the same Backend store state in
// the same place; a different text may (the caller treats it as a different
// backend). A file that cannot be read or parsed is an error, and so is a
// value read through a function that reads a file (file, templatefile,
// ...), which no text here could pin. It serves a pull request's plan,
// which must run against the state the checkout's runs use (docs/pull-requests.md).
func Backend(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	r := &rootInputs{vars: map[string]string{}, locals: map[string]*localDef{}}
	for _, name := range ConfigFiles(names) {
		src, err := gate.ReadConfigFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		if err := r.file(name, src); err != nil {
			return "", err
		}
	}
	if len(r.refs) == 0 && !slices.ContainsFunc(r.exprs, func(e hcl.Expression) bool { return readsFile(e) != "" }) {
		return r.blocks.String(), nil
	}
	inputs, err := r.inputs(dir, names)
	if err != nil {
		return "", err
	}
	return r.blocks.String() + "\n# what their values come from\n" + inputs, nil
}

// rootInputs is what Backend reads of a root module: the blocks, the
// variables and locals they reference, and every declaration.
type rootInputs struct {
	blocks strings.Builder
	refs   []hcl.Traversal      // what the blocks reference
	exprs  []hcl.Expression     // the blocks' expressions, for function calls
	vars   map[string]string    // variable name -> its declarations' text
	locals map[string]*localDef // local name -> its definitions
}

// localDef is one local value, as every file that defines it (override
// files included, in any order) writes it: their text, what they
// reference, their expressions.
type localDef struct {
	text  string
	refs  []hcl.Traversal
	exprs []hcl.Expression
}

// file reads one configuration file's backend, cloud and encryption blocks
// and its variable and locals declarations.
func (r *rootInputs) file(name string, src []byte) error {
	f, diags := parseConfig(src, name, isJSONFile(name))
	if diags.HasErrors() {
		return fmt.Errorf("%s does not parse: %s", name, diags.Error())
	}
	content, _, diags := f.Body.PartialContent(backendFileSchema)
	if diags.HasErrors() {
		return fmt.Errorf("reading %s: %s", name, diags.Error())
	}
	for _, tb := range content.Blocks {
		switch tb.Type {
		case "variable":
			r.vars[tb.Labels[0]] += fmt.Sprintf("%s %s\n", name, blockText(tb, name, src))
			continue
		case "locals":
			if err := r.localsBlock(tb, name, src); err != nil {
				return err
			}
			continue
		}
		inner, _, diags := tb.Body.PartialContent(backendSchema)
		if diags.HasErrors() {
			return fmt.Errorf("reading %s: %s", name, diags.Error())
		}
		for _, b := range inner.Blocks {
			if err := r.block(b, name, src); err != nil {
				return err
			}
		}
	}
	return nil
}

// localsBlock adds a locals block's definitions.
func (r *rootInputs) localsBlock(b *hcl.Block, name string, src []byte) error {
	attrs, diags := b.Body.JustAttributes()
	if diags.HasErrors() {
		return fmt.Errorf("reading %s: %s", name, diags.Error())
	}
	for n, a := range attrs {
		d := r.locals[n]
		if d == nil {
			d = &localDef{}
			r.locals[n] = d
		}
		d.text += fmt.Sprintf("%s %s\n", name, a.Range.SliceBytes(src))
		d.refs = append(d.refs, a.Expr.Variables()...)
		d.exprs = append(d.exprs, a.Expr)
	}
	return nil
}

// block adds one backend, cloud or encryption block: its text, its
// references and its expressions. A native block is its source text; a
// JSON one its arguments, by name, with their source text (the rest of
// the file is not the block's).
func (r *rootInputs) block(b *hcl.Block, name string, src []byte) error {
	fmt.Fprintf(&r.blocks, "%s %s %q\n", name, b.Type, b.Labels)
	if body, ok := b.Body.(*hclsyntax.Body); ok {
		fmt.Fprintf(&r.blocks, "%s\n", hcl.RangeOver(b.DefRange, body.Range()).SliceBytes(src))
		r.refs = append(r.refs, bodyRefs(body)...)
		r.exprs = append(r.exprs, bodyExprs(body)...)
		return nil
	}
	attrs, diags := b.Body.JustAttributes()
	if diags.HasErrors() {
		return fmt.Errorf("reading %s: %s", name, diags.Error())
	}
	for _, n := range slices.Sorted(maps.Keys(attrs)) {
		a := attrs[n]
		fmt.Fprintf(&r.blocks, "%s = %s\n", n, a.Expr.Range().SliceBytes(src))
		r.refs = append(r.refs, a.Expr.Variables()...)
		r.exprs = append(r.exprs, a.Expr)
	}
	return nil
}

// blockText is b's source text; in JSON the whole file stands for it.
func blockText(b *hcl.Block, name string, src []byte) []byte {
	if body, ok := b.Body.(interface{ Range() hcl.Range }); ok && !isJSONFile(name) {
		return hcl.RangeOver(b.DefRange, body.Range()).SliceBytes(src)
	}
	return src
}

// bodyRefs is every reference in body's attributes and nested blocks.
func bodyRefs(body *hclsyntax.Body) []hcl.Traversal {
	var out []hcl.Traversal
	for _, e := range bodyExprs(body) {
		out = append(out, e.Variables()...)
	}
	return out
}

// bodyExprs is every attribute expression in body and its nested blocks.
func bodyExprs(body *hclsyntax.Body) []hcl.Expression {
	var out []hcl.Expression
	for _, a := range body.Attributes {
		out = append(out, a.Expr)
	}
	for _, b := range body.Blocks {
		out = append(out, bodyExprs(b.Body)...)
	}
	return out
}

// fileFunctions are the functions that read a file; a provider-defined
// function (provider::NAME::FUNCTION) may too.
var fileFunctions = []string{"file", "fileexists", "fileset", "filebase64", "filebase64sha256", "filebase64sha512",
	"filemd5", "filesha1", "filesha256", "filesha512", "templatefile"}

// readsFile names a function expr calls that reads a file (or a
// provider-defined one), or "". A JSON string is read as the template
// OpenTofu evaluates it as.
func readsFile(expr hcl.Expression) string {
	if e, ok := expr.(hclsyntax.Expression); ok {
		return callIn(e)
	}
	v, diags := expr.Value(nil) // JSON: strings verbatim, as their templates' source
	if diags.HasErrors() {
		return ""
	}
	found := ""
	_ = cty.Walk(v, func(_ cty.Path, v cty.Value) (bool, error) {
		if found == "" && v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
			t, diags := hclsyntax.ParseTemplate([]byte(v.AsString()), "", hcl.InitialPos)
			if diags.HasErrors() {
				found = "a template that does not parse"
			} else {
				found = callIn(t)
			}
		}
		return found == "", nil
	})
	return found
}

// callIn names a file-reading or provider-defined function e calls, or "".
func callIn(e hclsyntax.Expression) string {
	found := ""
	_ = hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		if c, ok := n.(*hclsyntax.FunctionCallExpr); ok && found == "" &&
			(slices.Contains(fileFunctions, c.Name) || strings.Contains(c.Name, "::")) {
			found = c.Name
		}
		return nil
	})
	return found
}

// inputs is the text of every variable and local the blocks reference,
// locals followed to what they reference, and the values the auto-loaded
// .tfvars files give those variables; a file-reading function among them
// is an error.
func (r *rootInputs) inputs(dir string, names []string) (string, error) {
	vars, locals := map[string]bool{}, map[string]bool{}
	work := slices.Clone(r.refs)
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		root, attr := t.RootName(), traversalAttr(t)
		switch {
		case root == "var" && attr != "":
			vars[attr] = true
		case root == "local" && attr != "" && !locals[attr]:
			locals[attr] = true
			if d := r.locals[attr]; d != nil {
				work = append(work, d.refs...)
			}
		}
	}
	var out strings.Builder
	exprs := slices.Clone(r.exprs)
	for _, n := range slices.Sorted(maps.Keys(locals)) {
		d := r.locals[n]
		if d == nil {
			fmt.Fprintf(&out, "local %s: (not defined)\n", n)
			continue
		}
		fmt.Fprintf(&out, "local %s: %s", n, d.text)
		exprs = append(exprs, d.exprs...)
	}
	for _, e := range exprs {
		if fn := readsFile(e); fn != "" {
			return "", fmt.Errorf("its backend, cloud or encryption block takes a value through %s(), which reads a file no comparison can pin; write those settings as literals or from variables", fn)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(&out, "variable %s: %s", n, r.vars[n])
	}
	if err := tfvarsValues(&out, dir, names, vars); err != nil {
		return "", err
	}
	return out.String(), nil
}

// traversalAttr is the attribute a var.X or local.X traversal names.
func traversalAttr(t hcl.Traversal) string {
	if len(t) < 2 {
		return ""
	}
	if a, ok := t[1].(hcl.TraverseAttr); ok {
		return a.Name
	}
	return ""
}

// tfvarsValues writes the values the variable definitions files OpenTofu
// loads without being asked give the variables in vars, in OpenTofu's
// order, to out.
func tfvarsValues(out *strings.Builder, dir string, names []string, vars map[string]bool) error {
	var auto []string
	for _, n := range names {
		if strings.HasSuffix(n, ".auto.tfvars") || strings.HasSuffix(n, ".auto.tfvars.json") {
			auto = append(auto, n)
		}
	}
	sort.Strings(auto)
	for _, n := range append([]string{"terraform.tfvars", "terraform.tfvars.json"}, auto...) {
		src, err := os.ReadFile(filepath.Join(dir, n))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("reading %s: %w", n, err)
		}
		f, diags := parseConfig(src, n, strings.HasSuffix(n, ".json"))
		if diags.HasErrors() {
			return fmt.Errorf("%s does not parse: %s", n, diags.Error())
		}
		attrs, diags := f.Body.JustAttributes()
		if diags.HasErrors() {
			return fmt.Errorf("reading %s: %s", n, diags.Error())
		}
		for _, v := range slices.Sorted(maps.Keys(attrs)) {
			if vars[v] {
				fmt.Fprintf(out, "%s: %s\n", n, attrs[v].Range.SliceBytes(src))
			}
		}
	}
	return nil
}
