package gate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

var jsonSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `12`, `-1.5e+10`, `3E-2`, `1.0`,
	`""`, `"plain"`, `"esc \"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00"`, `"utf-8 é 😀"`,
	`{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}`,
	` { "sp" : [ 1 , 2 ] , "x\u0041" : "k" } `,
	`{"a":1,"a":2}`,
	`[[[[[]]]]]`,
	`{"format_version":"1.2","resource_changes":[{"address":"a.b","change":{"actions":["delete","create"],"before":{"n":1e3}}}]}`,
}

var badJSON = []string{
	``, ` `, `{`, `}`, `[`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1}x`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`tru`, `nul`, `"unterminated`, `"bad \x escape"`, "\"ctl \x01\"", `"\u12"`, `[1 2]`, `{"a":1 "b":2}`, `[}`, `NaN`,
}

func TestJSONToValueMatchesOPA(t *testing.T) {
	for _, doc := range jsonSamples {
		got, err := jsonToValue([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		want, err := ast.ValueFromReader(bytes.NewReader([]byte(doc)))
		if err != nil {
			t.Fatalf("%s: OPA: %v", doc, err)
		}
		if got.Compare(want) != 0 {
			t.Errorf("%s:\n got %v\nwant %v", doc, got, want)
		}
	}
}

func TestJSONToValueMatchesOPAOnRealPlans(t *testing.T) {
	pl := plans(t)
	for i, doc := range [][]byte{pl.shrink, pl.replace, pl.forget} {
		got, err := jsonToValue(doc)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ast.ValueFromReader(bytes.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got.Compare(want) != 0 {
			t.Errorf("plan %d converts differently from OPA's own conversion", i)
		}
	}
}

func TestJSONToValueRefusesMalformed(t *testing.T) {
	for _, doc := range badJSON {
		if json.Valid([]byte(doc)) {
			t.Fatalf("sample %q is valid JSON", doc)
		}
		if v, err := jsonToValue([]byte(doc)); err == nil {
			t.Errorf("%q: accepted as %v", doc, v)
		}
		p := valueParser{buf: []byte(doc)}
		p.skipSpace()
		if err := p.skip(0); err == nil {
			p.skipSpace()
			if p.pos == len(p.buf) {
				t.Errorf("%q: skip accepted it", doc)
			}
		}
	}
}

func FuzzJSONToValue(f *testing.F) {
	for _, s := range append(append([]string{}, jsonSamples...), badJSON...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := jsonToValue(doc)
		valid := json.Valid(doc)
		if valid != (err == nil) {
			t.Fatalf("%q: json.Valid %v, jsonToValue error %v", doc, valid, err)
		}
		// The skipping scanner (AnalyzePlan, pruned policy input) agrees.
		sp := valueParser{buf: doc}
		sp.skipSpace()
		serr := sp.skip(0)
		sp.skipSpace()
		if skipOK := serr == nil && sp.pos == len(doc); skipOK != valid {
			t.Fatalf("%q: json.Valid %v, skip error %v at %d", doc, valid, serr, sp.pos)
		}
		if _, oerr := jsonObjectToValue(doc, func(string) bool { return false }); oerr == nil && !valid {
			t.Fatalf("%q: jsonObjectToValue accepted invalid JSON", doc)
		}
		if err != nil {
			return
		}
		want, err := ast.ValueFromReader(bytes.NewReader(doc))
		if err != nil {
			return // OPA refuses some valid JSON (e.g. huge numbers); nothing to compare
		}
		if v.Compare(want) != 0 {
			t.Fatalf("%q: got %v, want %v", doc, v, want)
		}
	})
}

// jsonToValue converts a JSON document (RFC 8259) to a Rego value in one
// strict pass, without the intermediate map[string]any that
// ast.ValueFromReader builds: on a 19 MiB plan that intermediate more than
// doubles the work. Numbers keep their JSON text (ast.Number), as OPA's own
// conversion does. Malformed JSON returns an error naming the byte offset.
func jsonToValue(doc []byte) (ast.Value, error) {
	p := valueParser{buf: doc, keys: map[string]*ast.Term{}, strs: map[string]*ast.Term{}}
	// Strings and numbers are cut from one copy of the document rather than
	// copied one by one: a plan has hundreds of thousands of them.
	p.text = string(doc)
	p.skipSpace()
	t, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return nil, p.errorf("data after the JSON value")
	}
	return t.Value, nil
}
