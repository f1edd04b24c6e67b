package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/switchtender/switchtender/gate"
)

var (
	backendFileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "terraform"}}}
	backendSchema     = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "backend", LabelNames: []string{"type"}},
		{Type: "cloud"},
		{Type: "encryption"},
	}}
)

// Backend returns the backend, cloud and encryption blocks the root module
// in dir declares (where its state lives and how it is read), as written: for each, in file and source order, its file name,
// its type and its source text. Two root modules with the same Backend
// store state in the same place; a different text may (the caller treats it
// as a different backend). A file that cannot be read or parsed is an
// error. It serves a pull request's plan, which must run against the state
// the checkout's runs use (issue 12).
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
	var out strings.Builder
	for _, name := range ConfigFiles(names) {
		src, err := gate.ReadConfigFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		if err := backendBlocks(&out, name, src); err != nil {
			return "", err
		}
	}
	return out.String(), nil
}

// backendBlocks writes the backend and cloud blocks of one file to out.
func backendBlocks(out *strings.Builder, name string, src []byte) error {
	f, diags := parseConfig(src, name, isJSONFile(name))
	if diags.HasErrors() {
		return fmt.Errorf("%s does not parse: %s", name, diags.Error())
	}
	content, _, diags := f.Body.PartialContent(backendFileSchema)
	if diags.HasErrors() {
		return fmt.Errorf("reading %s: %s", name, diags.Error())
	}
	for _, tb := range content.Blocks {
		inner, _, diags := tb.Body.PartialContent(backendSchema)
		if diags.HasErrors() {
			return fmt.Errorf("reading %s: %s", name, diags.Error())
		}
		for _, b := range inner.Blocks {
			text := src // JSON: the whole file stands for the block
			if body, ok := b.Body.(interface{ Range() hcl.Range }); ok && !isJSONFile(name) {
				text = hcl.RangeOver(b.DefRange, body.Range()).SliceBytes(src)
			}
			fmt.Fprintf(out, "%s %s %q\n%s\n", name, b.Type, b.Labels, text)
		}
	}
	return nil
}
