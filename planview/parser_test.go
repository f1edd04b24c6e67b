package planview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// decodeLikeEncodingJSON is the canonical JSON of doc as encoding/json
// reads it (numbers kept as written), or false when it refuses doc.
func decodeLikeEncodingJSON(doc []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.InputOffset() != int64(len(bytes.TrimRight(doc, " \t\r\n"))) {
		return nil, false
	}
	if !json.Valid(doc) {
		return nil, false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// checkParserAgrees fails t unless the parser accepts exactly what
// encoding/json accepts, decodes it to the same value, and gives every node
// the raw text of its own value.
func checkParserAgrees(t *testing.T, doc []byte) {
	t.Helper()
	want, ok := decodeLikeEncodingJSON(doc)
	v, _, err := parseDocument(string(doc))
	if ok != (err == nil) {
		t.Fatalf("encoding/json accepts %v, parser error %v: %q", ok, err, doc)
	}
	sk := newParser(doc)
	skipErr := sk.skip(0)
	if skipErr == nil {
		skipErr = sk.end()
	}
	if ok != (skipErr == nil) {
		t.Fatalf("encoding/json accepts %v, skip error %v: %q", ok, skipErr, doc)
	}
	if !ok {
		return
	}
	if got := canonicalJSON(v); !bytes.Equal(got, want) {
		t.Fatalf("parser decodes %q as %s, encoding/json as %s", doc, got, want)
	}
	checkRaw(t, v)
}

func checkRaw(t *testing.T, v *node) {
	t.Helper()
	want, ok := decodeLikeEncodingJSON(v.raw)
	if !ok || !bytes.Equal(canonicalJSON(v), want) {
		t.Fatalf("node %s has raw text %q", canonicalJSON(v), v.raw)
	}
	for _, k := range v.kids {
		checkRaw(t, k)
	}
}

var parserSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `""`,
	` {"a" : [1, 2, {"b": null}], "c": "d"} `,
	`{"b":1,"a":2,"b":3}`,
	`{"z":{"y":[true,false,null]},"a":[[],[{}]]}`,
	`"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800"`,
	`"naïve ☃"`, "\"\xff\xfe\"", `{"é":1,"e":2}`,
	`[1,2,]`, `{"a":1,}`, `{"a" 1}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`"\x"`, `"\u12"`, "\"a\x01\"", `"abc`, `[`, `{"a":`, `tru`, `nul`, `{} {}`, `{"a":1}x`, ``, ` `,
	`{"a":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"bbbbbbbbbbbbbbbbbb\\cccccccccccccccccc"}`,
}

func TestTheParserReadsJSONAsEncodingJSONDoes(t *testing.T) {
	for _, doc := range parserSeeds {
		checkParserAgrees(t, []byte(doc))
	}
	plans, err := filepath.Glob(filepath.Join("testdata", "plans", "*.json"))
	if err != nil || len(plans) == 0 {
		t.Fatalf("no committed plans: %v", err)
	}
	for _, path := range plans {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkParserAgrees(t, doc)
	}
}

func FuzzTheParserReadsJSONAsEncodingJSONDoes(f *testing.F) {
	for _, doc := range parserSeeds {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if bytes.Count(doc, []byte("["))+bytes.Count(doc, []byte("{")) > 1000 {
			return // nesting limits differ by one
		}
		checkParserAgrees(t, doc)
	})
}
