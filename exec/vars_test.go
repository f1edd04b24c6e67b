package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// tricky holds what HCL templates, JSON and environment entries treat
// specially, plus non-ASCII text and an emoji.
const tricky = "${var.x} %{ if true }y%{ endif } $${ %%{ $$${ \"q\" back\\slash\\n\nnew\ttab\r\b\f\x01\x1f\x7f é 日本 🚀 $ % {} end$"

func TestEncodeVarScalars(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"plain", "plain"},
		{tricky, tricky},
		{"", ""},
		{true, "true"},
		{false, "false"},
		{42, "42"},
		{int64(-9007199254740993), "-9007199254740993"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{int8(-8), "-8"},
		{1e21, "1000000000000000000000"},
		{0.1, "0.1"},
		{-2.5e-7, "-0.00000025"},
		{float32(0.1), "0.1"},
		{json.Number("12"), "12"},
		{json.Number("-1.50"), "-1.5"},
		{json.Number("1.25e3"), "1250"},
		{json.Number("1E-3"), "0.001"},
		{json.Number("-0.0"), "0"},
		{json.Number("123456789012345678901234567890.123456789"), "123456789012345678901234567890.123456789"},
	}
	for _, c := range cases {
		got, err := EncodeVar(c.in)
		if err != nil || got != c.want {
			t.Errorf("EncodeVar(%#v) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestEncodeVarComplex(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{[]string{"a", "b"}, `["a","b"]`},
		{[]string{}, `[]`},
		{[]any(nil), `[]`},
		{map[string]string{"z": "1", "a": "2"}, `{"a":"2","z":"1"}`},
		{map[string]any{"k": []any{1, 2.5, true, nil, "s", map[string]any{}}}, `{"k":[1,2.5,true,null,"s",{}]}`},
		{[]any{"${x}", "%{y}", "$${z}", "a$", "%"}, `["$${x}","%%{y}","$$${z}","a$","%"]`},
		{[]any{"\b\f\x00\x1f\x7f\n\r\t\"\\"}, `["\u0008\u000c\u0000\u001f\u007f\n\r\t\"\\"]`},
		{map[string]any{"${k}": json.Number("1e2")}, `{"$${k}":100}`},
		{[2]int{1, 2}, `[1,2]`},
		{[]any{"é🚀<&>"}, `["é🚀<&>"]`},
	}
	for _, c := range cases {
		got, err := EncodeVar(c.in)
		if err != nil || got != c.want {
			t.Errorf("EncodeVar(%#v) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestEncodeVarRefuses(t *testing.T) {
	type point struct{ X int }
	cyc := []any{nil}
	cyc[0] = cyc
	for _, in := range []any{
		nil, "nul\x00", math.NaN(), math.Inf(1), []any{math.Inf(-1)}, point{1}, &point{}, map[int]string{1: "a"},
		[]any{"bad utf8 \xff"}, json.Number("1x"), json.Number("1e999999"), cyc, func() {},
	} {
		if got, err := EncodeVar(in); err == nil {
			t.Errorf("EncodeVar(%#v) = %q, want an error", in, got)
		} else if !strings.HasPrefix(err.Error(), "encoding variable: ") {
			t.Errorf("EncodeVar(%#v) error %q lacks context", in, err)
		}
	}
}

// TestEncodeVarReadsBackAsHCL checks, with the HCL parser, that random
// strings inside a list and as map keys read back exactly.
func TestEncodeVarReadsBackAsHCL(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"$", "%", "{", "}", "\\", "\"", "\n", "\t", "\r", "\x00", "\x01", "\b", "\f", "\x7f", "a", "é", "🚀", " ", "u", "0"}
	for range 2000 {
		var list []any
		m := map[string]any{}
		for range 3 {
			var b strings.Builder
			for range r.IntN(12) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			list = append(list, b.String())
			m[b.String()] = b.String()
		}
		for _, v := range []any{list, m} {
			enc, err := EncodeVar(v)
			if err != nil {
				t.Fatal(err)
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
			want, _ := json.Marshal(v)
			if !jsonEqual(t, got, want) {
				t.Fatalf("EncodeVar(%q) = %s reads back as %s", v, enc, got)
			}
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if err := da.Decode(&x); err != nil {
		t.Fatalf("decoding %s: %v", a, err)
	}
	if err := db.Decode(&y); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return reflect.DeepEqual(normalize(t, x), normalize(t, y))
}

// normalize writes every number in plain decimal, so 2.5e-7 equals 0.00000025.
func normalize(t *testing.T, v any) any {
	switch x := v.(type) {
	case json.Number:
		d, err := decimalString(string(x))
		if err != nil {
			t.Fatal(err)
		}
		return d
	case []any:
		for i := range x {
			x[i] = normalize(t, x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(t, x[k])
		}
	}
	return v
}

// TestEncodeVarRoundTripsThroughTofu passes values of every variable type
// through TF_VAR_ entries to the real OpenTofu, applies a configuration that
// outputs them, and checks that tofu output -json gives back exactly the
// inputs.
func TestEncodeVarRoundTripsThroughTofu(t *testing.T) {
	dir := t.TempDir()
	const cfg = `
variable "s" { type = string }
variable "n" { type = number }
variable "big" { type = number }
variable "b" { type = bool }
variable "l" { type = list(string) }
variable "m" { type = map(string) }
variable "a" { type = any }
variable "o" {
  type = object({
    name  = string
    tags  = map(string)
    items = list(object({ k = string, v = number }))
  })
}
output "s" { value = var.s }
output "n" { value = var.n }
output "big" { value = var.big }
output "b" { value = var.b }
output "l" { value = var.l }
output "m" { value = var.m }
output "a" { value = var.a }
output "o" { value = var.o }
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]any{
		"s":   tricky,
		"n":   -2.5e-7,
		"big": json.Number("123456789012345678901234567890.125"),
		"b":   true,
		"l":   []string{tricky, "", "plain", "${", "%{", "$${", "\\u0041"},
		"m":   map[string]string{tricky: tricky, "${k}": "%{v}", "a.b": "", "ünï🚀": "\x01"},
		"a": map[string]any{
			"list":   []any{"x", json.Number("0.1"), false, tricky, []any{"nested", map[string]any{"deep": "${x}"}}},
			"map":    map[string]any{"k": "v", "%{k}": []any{}},
			"number": 7,
		},
		"o": map[string]any{
			"name":  tricky,
			"tags":  map[string]string{"env": "prod", "$${": "%%{"},
			"items": []any{map[string]any{"k": "a\tb", "v": 1}, map[string]any{"k": "🚀", "v": -3.75}},
		},
	}
	vars := map[string]string{}
	for name, v := range inputs {
		enc, err := EncodeVar(v)
		if err != nil {
			t.Fatalf("EncodeVar(%s): %v", name, err)
		}
		vars[name] = enc
	}
	env := BuildEnv(EnvSpec{Base: os.Environ(), Vars: vars})
	ctx := context.Background()
	var log bytes.Buffer
	res, err := Run(ctx, Invocation{Binary: tofuBin, Dir: dir, Env: env, Args: ApplyAutoArgs(), Output: &log})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("tofu apply: %+v, %v\n%s", res, err, log.String())
	}
	stdout, res, err := Capture(ctx, Invocation{Binary: tofuBin, Dir: dir, Env: env, Args: []string{"output", "-json"}, Output: &log})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("tofu output -json: %+v, %v\n%s", res, err, log.String())
	}
	var outputs map[string]struct{ Value json.RawMessage }
	if err := json.Unmarshal(stdout, &outputs); err != nil {
		t.Fatalf("reading tofu output -json: %v\n%s", err, stdout)
	}
	for name, in := range inputs {
		want, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got := outputs[name].Value
		if !jsonEqual(t, got, want) {
			t.Errorf("variable %s: passed %s (TF_VAR_%s=%s), tofu output gives %s", name, want, name, vars[name], got)
		}
	}
}
