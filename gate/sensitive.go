package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// SensitiveValues returns every string form of the values a plan marks
// sensitive, so the caller can add them to the log masker before the tool
// prints anything (spec: "The values a plan marks sensitive are added to the
// masker before the tool prints anything").
//
// It reads the output of `tofu show -json PLANFILE` and collects:
//   - the values of root module variables the configuration declares
//     sensitive (configuration.root_module.variables[NAME].sensitive, value
//     from variables[NAME].value);
//   - the parts of resource_changes[*].change and resource_drift[*].change
//     before/after values that before_sensitive/after_sensitive mark (an
//     object mirroring the value, or a plain true for the whole value);
//   - the parts of planned_values and prior_state resources that their
//     sensitive_values mark;
//   - output_changes marked sensitive (before_sensitive/after_sensitive) and
//     planned_values/prior_state outputs with "sensitive": true.
//
// A scalar is rendered as tofu prints it: a string raw, a number as written
// in the JSON, a bool as true/false. A list or object contributes its compact
// JSON form and, recursively, each of its elements. Empty strings and nulls
// are left out. The result is sorted and free of duplicates. JSON that does
// not parse returns an error wrapping ErrUnreadablePlan.
func SensitiveValues(planJSON []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: parsing tofu show -json output for sensitive values: %v", ErrUnreadablePlan, err)
	}
	c := collector{seen: map[string]bool{}}

	// Root module variables declared sensitive.
	vars, _ := dig(doc, "configuration", "root_module", "variables").(map[string]any)
	planVars, _ := doc["variables"].(map[string]any)
	for name, decl := range vars {
		if d, _ := decl.(map[string]any); d != nil && d["sensitive"] == true {
			if v, _ := planVars[name].(map[string]any); v != nil {
				c.addAll(v["value"])
			}
		}
	}

	// Resource changes and drift.
	for _, key := range []string{"resource_changes", "resource_drift"} {
		list, _ := doc[key].([]any)
		for _, rc := range list {
			change, _ := dig(rc, "change").(map[string]any)
			if change == nil {
				continue
			}
			c.marked(change["before"], change["before_sensitive"])
			c.marked(change["after"], change["after_sensitive"])
		}
	}

	// Output changes.
	if outs, _ := doc["output_changes"].(map[string]any); outs != nil {
		for _, oc := range outs {
			change, _ := oc.(map[string]any)
			if change == nil {
				continue
			}
			c.marked(change["before"], change["before_sensitive"])
			c.marked(change["after"], change["after_sensitive"])
		}
	}

	// Planned values and prior state: outputs and resources in every module.
	for _, vals := range []any{doc["planned_values"], dig(doc, "prior_state", "values")} {
		if outs, _ := dig(vals, "outputs").(map[string]any); outs != nil {
			for _, o := range outs {
				if om, _ := o.(map[string]any); om != nil && om["sensitive"] == true {
					c.addAll(om["value"])
				}
			}
		}
		c.module(dig(vals, "root_module"))
	}

	slices.Sort(c.out)
	return c.out, nil
}

type collector struct {
	seen map[string]bool
	out  []string
}

func (c *collector) add(s string) {
	if s == "" || c.seen[s] {
		return
	}
	c.seen[s] = true
	c.out = append(c.out, s)
}

// addAll adds v's string form and, for a collection, every element's.
func (c *collector) addAll(v any) {
	switch x := v.(type) {
	case nil:
	case string:
		c.add(x)
	case json.Number:
		c.add(x.String())
	case bool:
		if x {
			c.add("true")
		} else {
			c.add("false")
		}
	case []any:
		c.addJSON(x)
		for _, e := range x {
			c.addAll(e)
		}
	case map[string]any:
		c.addJSON(x)
		for _, e := range x {
			c.addAll(e)
		}
	}
}

func (c *collector) addJSON(v any) {
	// json.Marshal sorts map keys, as tofu does when it renders JSON.
	if b, err := json.Marshal(v); err == nil {
		c.add(string(b))
	}
}

// marked adds the parts of value that mark flags as sensitive: mark is true
// (the whole value), or an object/array mirroring value's shape.
func (c *collector) marked(value, mark any) {
	switch m := mark.(type) {
	case bool:
		if m {
			c.addAll(value)
		}
	case map[string]any:
		obj, _ := value.(map[string]any)
		for k, sub := range m {
			if obj != nil {
				c.marked(obj[k], sub)
			}
		}
	case []any:
		arr, _ := value.([]any)
		for i, sub := range m {
			if i < len(arr) {
				c.marked(arr[i], sub)
			}
		}
	}
}

// module walks a planned_values/prior_state module: its resources' values
// at their sensitive_values marks, then its child modules.
func (c *collector) module(mod any) {
	m, _ := mod.(map[string]any)
	if m == nil {
		return
	}
	if rs, _ := m["resources"].([]any); rs != nil {
		for _, r := range rs {
			rm, _ := r.(map[string]any)
			if rm != nil {
				c.marked(rm["values"], rm["sensitive_values"])
			}
		}
	}
	if kids, _ := m["child_modules"].([]any); kids != nil {
		for _, k := range kids {
			c.module(k)
		}
	}
}

// dig follows object keys from v, returning nil when any step is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		if m == nil {
			return nil
		}
		v = m[k]
	}
	return v
}
