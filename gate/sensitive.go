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
// in the JSON; a bool is left out (one bit, and masking it would blank every
// "true" and "false" in the log). A list or object contributes its compact
// JSON form and, recursively, each of its elements. Empty strings and nulls
// are left out. The result is sorted and free of duplicates. JSON that does
// not parse returns an error wrapping ErrUnreadablePlan.
func SensitiveValues(planJSON []byte) ([]string, error) {
	c := collector{seen: map[string]bool{}}
	if err := c.scan(planJSON); err != nil {
		return nil, fmt.Errorf("%w: reading sensitive values from tofu show -json output: %v", ErrUnreadablePlan, err)
	}
	slices.Sort(c.out)
	return c.out, nil
}

// scan walks the plan document, decoding a value only where its marks say
// part of it is sensitive: on a large plan most values are not, and are
// only checked to be JSON.
func (c *collector) scan(doc []byte) error {
	p := valueParser{buf: doc}
	var variables, configuration []byte
	p.skipSpace()
	err := p.members(func(key []byte) error {
		switch string(key) {
		case "variables":
			return p.raw(&variables)
		case "configuration":
			return p.raw(&configuration)
		case "resource_changes", "resource_drift":
			return p.nullOr(func() error {
				return p.elements(func() error { return p.nullOr(func() error { return c.scanChangeHolder(&p) }) })
			})
		case "output_changes":
			return p.nullOr(func() error {
				return p.members(func([]byte) error { return p.nullOr(func() error { return c.scanChange(&p) }) })
			})
		case "planned_values":
			return p.nullOr(func() error { return c.scanValues(&p) })
		case "prior_state":
			return p.nullOr(func() error {
				return p.members(func(key []byte) error {
					if string(key) == "values" {
						return p.nullOr(func() error { return c.scanValues(&p) })
					}
					return p.skip(2)
				})
			})
		}
		return p.skip(1)
	})
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return p.errorf("data after the JSON value")
	}
	// Root module variables declared sensitive.
	return c.sensitiveVariables(configuration, variables)
}

// sensitiveVariables adds the values of the root module variables that
// configuration (the plan's configuration) declares sensitive, from
// variables (the plan's variables); either empty adds nothing.
func (c *collector) sensitiveVariables(configuration, variables []byte) error {
	if len(configuration) == 0 || len(variables) == 0 {
		return nil
	}
	var conf struct {
		RootModule struct {
			Variables map[string]struct {
				Sensitive bool `json:"sensitive"`
			} `json:"variables"`
		} `json:"root_module"`
	}
	if err := json.Unmarshal(configuration, &conf); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	var vals map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(variables, &vals); err != nil {
		return fmt.Errorf("variables: %w", err)
	}
	for name, decl := range conf.RootModule.Variables {
		if v, ok := vals[name]; ok && decl.Sensitive {
			val, err := decodeNumbers(v.Value)
			if err != nil {
				return fmt.Errorf("variable %s: %w", name, err)
			}
			c.addAll(val)
		}
	}
	return nil
}

// scanChangeHolder reads a resource_changes element: its "change".
func (c *collector) scanChangeHolder(p *valueParser) error {
	return p.members(func(key []byte) error {
		if string(key) == "change" {
			return p.nullOr(func() error { return c.scanChange(p) })
		}
		return p.skip(3)
	})
}

// scanChange reads a change object: before/after at their marks.
func (c *collector) scanChange(p *valueParser) error {
	var before, after, beforeMark, afterMark []byte
	err := p.members(func(key []byte) error {
		switch string(key) {
		case "before":
			return p.raw(&before)
		case "after":
			return p.raw(&after)
		case "before_sensitive":
			return p.raw(&beforeMark)
		case "after_sensitive":
			return p.raw(&afterMark)
		}
		return p.skip(4)
	})
	if err != nil {
		return err
	}
	if err := c.markedRaw(before, beforeMark); err != nil {
		return err
	}
	return c.markedRaw(after, afterMark)
}

// scanValues reads planned_values or prior_state.values: sensitive outputs
// and the resources of every module.
func (c *collector) scanValues(p *valueParser) error {
	return p.members(func(key []byte) error {
		switch string(key) {
		case "outputs":
			return p.nullOr(func() error {
				return p.members(func([]byte) error {
					return p.nullOr(func() error {
						var value []byte
						sensitive := false
						err := p.members(func(key []byte) error {
							switch string(key) {
							case "value":
								return p.raw(&value)
							case "sensitive":
								sensitive = p.pos < len(p.buf) && p.buf[p.pos] == 't'
							}
							return p.skip(5)
						})
						if err != nil || !sensitive || len(value) == 0 {
							return err
						}
						v, err := decodeNumbers(value)
						c.addAll(v)
						return err
					})
				})
			})
		case "root_module":
			return p.nullOr(func() error { return c.scanModule(p) })
		}
		return p.skip(3)
	})
}

// scanModule reads a module of planned_values/prior_state: its resources'
// values at their sensitive_values marks, then its child modules.
func (c *collector) scanModule(p *valueParser) error {
	return p.members(func(key []byte) error {
		switch string(key) {
		case "resources":
			return p.nullOr(func() error {
				return p.elements(func() error {
					var values, marks []byte
					err := p.members(func(key []byte) error {
						switch string(key) {
						case "values":
							return p.raw(&values)
						case "sensitive_values":
							return p.raw(&marks)
						}
						return p.skip(6)
					})
					if err != nil {
						return err
					}
					return c.markedRaw(values, marks)
				})
			})
		case "child_modules":
			return p.nullOr(func() error {
				return p.elements(func() error { return c.scanModule(p) })
			})
		}
		return p.skip(5)
	})
}

// markedRaw decodes value and mark (JSON text) and adds the parts the mark
// flags, when the mark flags anything.
func (c *collector) markedRaw(value, mark []byte) error {
	if len(mark) == 0 || !bytes.Contains(mark, []byte("true")) {
		return nil
	}
	m, err := decodeNumbers(mark)
	if err != nil {
		return err
	}
	v, err := decodeNumbers(value)
	if err != nil {
		return err
	}
	c.marked(v, m)
	return nil
}

// decodeNumbers decodes JSON text keeping numbers as written; empty text is
// nil.
func decodeNumbers(text []byte) (any, error) {
	if len(text) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
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
		// A sensitive bool is left out: it is one bit, and masking it would
		// blank every "true" and "false" in the log.
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
