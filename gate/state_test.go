package gate

import (
	"slices"
	"testing"
)

// A state written by OpenTofu 1.12 for terraform_data with a sensitive
// object member, a sensitive list element, a sensitive whole input, and a
// sensitive output.
const stateDoc = `{"version":4,"serial":1,"lineage":"l",
 "outputs":{"o":{"value":"Hunter2Secret","type":"string","sensitive":true},"p":{"value":"public","type":"string"}},
 "resources":[
  {"mode":"managed","type":"terraform_data","name":"x","instances":[{"attributes":{
    "id":"943a","input":{"value":{"a":"InnerSecret","b":"plain","l":["ListSecret","zzzz"]},"type":["object",{}]},
    "output":{"value":{"a":"InnerSecret","b":"plain","l":["ListSecret","zzzz"]},"type":["object",{}]}},
   "sensitive_attributes":[[{"type":"get_attr","value":"input"},{"type":"get_attr","value":"a"}],
     [{"type":"get_attr","value":"input"},{"type":"get_attr","value":"l"},{"type":"index","value":{"value":0,"type":"number"}}]]}]},
  {"mode":"managed","type":"terraform_data","name":"y","instances":[{"attributes":{"input":{"value":"WholeSecret","type":"string"}},
   "sensitive_attributes":[[{"type":"get_attr","value":"input"}]]}]},
  {"mode":"managed","type":"x","name":"m","instances":[{"attributes":{"tags":{"k1":"MapSecret","k2":"open"},"n":12345678},
   "sensitive_attributes":[[{"type":"get_attr","value":"tags"},{"type":"index","value":{"value":"k1","type":"string"}}],[{"type":"get_attr","value":"n"}]]}]}
 ]}`

func TestStateSensitiveValues(t *testing.T) {
	got, err := StateSensitiveValues([]byte(stateDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Hunter2Secret", "InnerSecret", "ListSecret", "WholeSecret", "MapSecret", "12345678"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	for _, not := range []string{"public", "plain", "zzzz", "open", "943a", "string", "object"} {
		if slices.Contains(got, not) {
			t.Errorf("%q is not sensitive but was returned: %q", not, got)
		}
	}
}

// A path that does not resolve masks the whole value reached, not nothing;
// empty state gives nothing; broken JSON is an error.
func TestStateSensitiveValuesHostile(t *testing.T) {
	doc := `{"resources":[{"instances":[{"attributes":{"blob":{"deep":"DeepSecret"}},
	  "sensitive_attributes":[[{"type":"get_attr","value":"blob"},{"type":"get_attr","value":"gone"}]]}]}]}`
	got, err := StateSensitiveValues([]byte(doc))
	if err != nil || !slices.Contains(got, "DeepSecret") {
		t.Errorf("unresolved path: %q %v", got, err)
	}
	if got, err := StateSensitiveValues([]byte("  \n")); err != nil || len(got) != 0 {
		t.Errorf("empty state: %q %v", got, err)
	}
	if _, err := StateSensitiveValues([]byte(`{"resources":[`)); err == nil {
		t.Error("broken state read without error")
	}
}

func TestValueStrings(t *testing.T) {
	got := ValueStrings(`{"k":["ListElem1",{"m":"MapElem2"}],"n":42}`)
	for _, want := range []string{"ListElem1", "MapElem2", `{"k":["ListElem1",{"m":"MapElem2"}],"n":42}`} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	if got := ValueStrings("plain-text"); !slices.Equal(got, []string{"plain-text"}) {
		t.Errorf("non-JSON: %q", got)
	}
}

// An object deeper than the attribute that happens to have just the keys
// "value" and "type" is data, not the dynamic wrapper: its "type" can be
// the sensitive part.
func TestStateSensitiveValueInAValueTypeObject(t *testing.T) {
	doc := `{"resources":[{"instances":[{"attributes":{"input":{"value":{"cred":{"value":"public-part","type":"nested-canary-5a5a"}},"type":["object",{}]}},
	  "sensitive_attributes":[[{"type":"get_attr","value":"input"},{"type":"get_attr","value":"cred"},{"type":"get_attr","value":"type"}]]}]}]}`
	got, err := StateSensitiveValues([]byte(doc))
	if err != nil || !slices.Contains(got, "nested-canary-5a5a") || slices.Contains(got, "public-part") {
		t.Errorf("got %q, %v", got, err)
	}
}
