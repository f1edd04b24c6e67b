package scan

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

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
// which must run against the state the checkout's runs use (issue 12).
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
	r := &rootInputs{vars: map[string]string{}, locals: map[string]localDef{}}
	for _, name := range ConfigFiles(names) {
		src, err := gate.ReadConfigFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		if err := r.file(name, src); err != nil {
			return "", err
		}
	}
	if len(r.refs) == 0 && !r.all {
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
	refs   []hcl.Traversal     // what the blocks reference
	all    bool                // a JSON block: taken to reference everything
	calls  []string            // the blocks' own text, for file functions
	vars   map[string]string   // variable name -> its declaration's text
	locals map[string]localDef // local name -> its definition
}

// localDef is one local value: its text and what it references.
type localDef struct {
	text string
	refs []hcl.Traversal
}

// file reads one configuration file's backend, cloud and encryption blocks
// and its variable and locals declarations.
func (r *rootInputs) file(name string, src []byte) error {
	json := isJSONFile(name)
	f, diags := parseConfig(src, name, json)
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
			attrs, diags := tb.Body.JustAttributes()
			if diags.HasErrors() {
				return fmt.Errorf("reading %s: %s", name, diags.Error())
			}
			for n, a := range attrs {
				r.locals[n] = localDef{text: fmt.Sprintf("%s %s", name, a.Range.SliceBytes(src)), refs: a.Expr.Variables()}
			}
			continue
		}
		inner, _, diags := tb.Body.PartialContent(backendSchema)
		if diags.HasErrors() {
			return fmt.Errorf("reading %s: %s", name, diags.Error())
		}
		for _, b := range inner.Blocks {
			text := blockText(b, name, src)
			fmt.Fprintf(&r.blocks, "%s %s %q\n%s\n", name, b.Type, b.Labels, text)
			r.calls = append(r.calls, string(text))
			body, ok := b.Body.(*hclsyntax.Body)
			switch {
			case json || !ok:
				r.all = r.all || strings.Contains(string(src), "${")
			default:
				r.refs = append(r.refs, bodyRefs(body)...)
			}
		}
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
	for _, a := range body.Attributes {
		out = append(out, a.Expr.Variables()...)
	}
	for _, b := range body.Blocks {
		out = append(out, bodyRefs(b.Body)...)
	}
	return out
}

// fileFunction matches a call of a function that reads a file.
var fileFunction = regexp.MustCompile(`\b(file|fileexists|fileset|filebase64|filebase64sha256|filebase64sha512|filemd5|filesha1|filesha256|filesha512|templatefile)\s*\(`)

// inputs is the text of every variable and local the blocks reference
// (all of them for a JSON block with a template), locals followed to what
// they reference, and the values the auto-loaded .tfvars files give those
// variables; a file function among them is an error.
func (r *rootInputs) inputs(dir string, names []string) (string, error) {
	vars, locals := map[string]bool{}, map[string]bool{}
	if r.all {
		for n := range r.vars {
			vars[n] = true
		}
		for n := range r.locals {
			locals[n] = true
		}
	}
	work := slices.Clone(r.refs)
	for n := range locals {
		work = append(work, r.locals[n].refs...)
	}
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		root, attr := t.RootName(), traversalAttr(t)
		switch {
		case root == "var" && attr != "":
			vars[attr] = true
		case root == "local" && attr != "" && !locals[attr]:
			locals[attr] = true
			work = append(work, r.locals[attr].refs...)
		}
	}
	var out strings.Builder
	texts := slices.Clone(r.calls)
	for _, n := range slices.Sorted(maps.Keys(locals)) {
		fmt.Fprintf(&out, "local %s: %s\n", n, r.locals[n].text)
		texts = append(texts, r.locals[n].text)
	}
	if m := fileFunction.FindString(strings.Join(texts, "\n")); m != "" {
		return "", fmt.Errorf("its backend, cloud or encryption block takes a value through %s), which reads a file no comparison can pin; write those settings as literals or from variables", strings.TrimSpace(m))
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
