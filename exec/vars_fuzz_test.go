package exec

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// FuzzEncodeVar: a list and a map built from arbitrary strings never panic
// the encoder, and what it writes reads back through HCL — as OpenTofu
// reads a complex TF_VAR_ value — as exactly the values given (NFC-normal
// as cty makes every string).
func FuzzEncodeVar(f *testing.F) {
	for _, s := range []string{"", "${x}", "%{if}", "a\"b\\c", "\x00\b\f\x7f", "e\u0301", "$${", "🚀\n\t"} {
		f.Add(s, "k")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			if _, err := EncodeVar([]any{a, b}); err == nil {
				t.Fatalf("invalid UTF-8 accepted: %q %q", a, b)
			}
			return
		}
		for _, v := range []any{[]any{a, b}, map[string]any{b: a, "x": b}} {
			enc, err := EncodeVar(v)
			if err != nil {
				t.Fatalf("EncodeVar(%q): %v", v, err)
			}
			expr, diags := hclsyntax.ParseExpression([]byte(enc), "TF_VAR", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatalf("EncodeVar(%q) = %s does not parse as HCL: %s", v, enc, diags)
			}
			val, diags := expr.Value(nil)
			if diags.HasErrors() {
				t.Fatalf("EncodeVar(%q) = %s does not evaluate: %s", v, enc, diags)
			}
			got, _ := ctyjson.Marshal(val, val.Type())
			want, _ := json.Marshal(nfc(v))
			if !jsonEqual(t, got, want) {
				t.Fatalf("EncodeVar(%q) = %s reads back as %s", v, enc, got)
			}
		}
	})
}

// nfc is v with every string as cty holds it: NFC-normalised.
func nfc(v any) any {
	switch x := v.(type) {
	case string:
		return cty.StringVal(x).AsString()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nfc(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[cty.StringVal(k).AsString()] = nfc(e)
		}
		return out
	}
	return v
}
