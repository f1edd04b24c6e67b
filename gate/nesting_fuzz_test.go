package gate

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// FuzzNestingDepth: the scanner never panics, and what it lets through
// parses without the parser going deeper than the stack allows.
func FuzzNestingDepth(f *testing.F) {
	for _, s := range []string{"x = <<EOT\n${a}\nEOT\n", "x = \"%{if a}${b}%{endif}\"", "# (\n/* [ */ y = !-!a ? b : c", "<<", "\"${", "%{", "{\"a\": [\"]\"]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if NestingDepth([]byte(src), 64) == nil {
			_, _ = hclsyntax.ParseConfig([]byte(src), "f.tf", hcl.InitialPos)
		}
	})
}
