package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// StateSensitiveValues returns every string form of the values a state
// document (terraform.tfstate, or `tofu state pull` output, format version
// 4) marks sensitive, so a run's masker knows them before the tool prints a
// diff whose "before" side holds them:
//   - resources[*].instances[*].attributes at each path that the instance's
//     sensitive_attributes lists (steps {"type":"get_attr","value":NAME} and
//     {"type":"index","value":{"value":N|KEY}}); a value of dynamic type, as
//     terraform_data's input is stored ({"value":…,"type":…}), is entered
//     through its "value";
//   - outputs[*].value where "sensitive" is true.
//
// Values are rendered as SensitiveValues renders them (strings raw, numbers
// as written, bools left out, collections as compact JSON and element by
// element). Empty input (no state yet) gives nothing. A document that does
// not parse is an error: the caller cannot know what to mask.
func StateSensitiveValues(state []byte) ([]string, error) {
	if len(bytes.TrimSpace(state)) == 0 {
		return nil, nil
	}
	var doc struct {
		Outputs map[string]struct {
			Value     any  `json:"value"`
			Sensitive bool `json:"sensitive"`
		} `json:"outputs"`
		Resources []struct {
			Instances []struct {
				Attributes map[string]any `json:"attributes"`
				Sensitive  [][]pathStep   `json:"sensitive_attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	d := json.NewDecoder(bytes.NewReader(state))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading sensitive values from the state: %w", err)
	}
	c := collector{seen: map[string]bool{}}
	for _, o := range doc.Outputs {
		if o.Sensitive {
			c.addAll(o.Value)
		}
	}
	for _, r := range doc.Resources {
		for _, inst := range r.Instances {
			for _, path := range inst.Sensitive {
				c.addAll(walkPath(inst.Attributes, path))
			}
		}
	}
	slices.Sort(c.out)
	return c.out, nil
}

// pathStep is one step of a state's sensitive attribute path.
type pathStep struct {
	Type  string          `json:"type"` // "get_attr" | "index"
	Value json.RawMessage `json:"value"`
}

// walkPath follows path from an instance's attributes. Only an attribute's
// own value can be of dynamic type as the state stores it (terraform_data's
// input: {"value":…,"type":…}), so only there is the wrapper entered; an
// object deeper down that happens to have just those two keys is data.
// Where a step does not resolve, the value reached so far is returned
// whole, so more is masked rather than less.
func walkPath(attrs map[string]any, path []pathStep) any {
	var v any = attrs
	for i, st := range path {
		next, ok := step(v, st)
		if !ok {
			return v
		}
		v = next
		if i == 0 {
			v = unwrapDynamic(v)
		}
	}
	return v
}

func step(v any, st pathStep) (any, bool) {
	switch st.Type {
	case "get_attr":
		var name string
		obj, isObj := v.(map[string]any)
		if json.Unmarshal(st.Value, &name) != nil || !isObj {
			return nil, false
		}
		x, ok := obj[name]
		return x, ok
	case "index":
		var idx struct {
			Value json.Number `json:"value"`
		}
		var key struct {
			Value string `json:"value"`
		}
		if arr, ok := v.([]any); ok && json.Unmarshal(st.Value, &idx) == nil {
			i, err := idx.Value.Int64()
			if err == nil && i >= 0 && int(i) < len(arr) {
				return arr[i], true
			}
		}
		if obj, ok := v.(map[string]any); ok && json.Unmarshal(st.Value, &key) == nil {
			x, ok := obj[key.Value]
			return x, ok
		}
	}
	return nil, false
}

// unwrapDynamic enters a value of dynamic type, which state stores as an
// object of exactly "value" and "type".
func unwrapDynamic(v any) any {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 2 {
		return v
	}
	val, hasValue := obj["value"]
	_, hasType := obj["type"]
	if hasValue && hasType {
		return val
	}
	return v
}

// ValueStrings returns the string forms of a secret JSON value (a sensitive
// answer) as the masker should know them: the document itself, each element
// of a list or object (recursively) as SensitiveValues renders it, and the
// keys of its objects, which OpenTofu prints as they are beside a masked
// value. A document that is not JSON gives just itself.
func ValueStrings(doc string) []string {
	c := collector{seen: map[string]bool{}}
	c.add(doc)
	d := json.NewDecoder(bytes.NewReader([]byte(doc)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err == nil {
		c.addAll(v)
		addKeys(&c, v)
	}
	return c.out
}

// addKeys adds the keys of every object in v.
func addKeys(c *collector, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			c.add(k)
			addKeys(c, e)
		}
	case []any:
		for _, e := range x {
			addKeys(c, e)
		}
	}
}
