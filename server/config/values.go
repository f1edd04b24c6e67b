package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// toGo converts a configuration value to a plain Go value: string, bool,
// json.Number (the exact decimal text of cty's big.Float, as cty's own JSON
// encoding writes it), []any for lists, tuples and sets, and map[string]any
// for maps and objects, nested. A null anywhere is an error, since it cannot
// be passed as a TF_VAR_ value. path names v in errors ("vars.tags").
func toGo(v cty.Value, path string) (any, error) {
	if v.IsNull() {
		return nil, fmt.Errorf("%s is null; give a value or remove it", path)
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("%s is not known when the configuration is read; give a literal value", path)
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Bool:
		return v.True(), nil
	case t == cty.Number:
		return numberToGo(v), nil
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		return listToGo(v, path)
	case t.IsMapType() || t.IsObjectType():
		return mapToGo(v, path)
	}
	return nil, fmt.Errorf("%s has type %s, which cannot be passed to a run; use a string, number, bool, list or object", path, t.FriendlyName())
}

// numberToGo gives a number's exact decimal text.
func numberToGo(v cty.Value) json.Number {
	f := v.AsBigFloat()
	if f.Sign() == 0 {
		return json.Number("0") // not "-0"
	}
	return json.Number(f.Text('f', -1))
}

// listToGo converts a list, tuple or set; elements are named path[i].
func listToGo(v cty.Value, path string) (any, error) {
	out := make([]any, 0, v.LengthInt())
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		g, err := toGo(ev, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// mapToGo converts a map or object; elements are named path.key.
func mapToGo(v cty.Value, path string) (any, error) {
	out := make(map[string]any, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		g, err := toGo(ev, path+"."+k.AsString())
		if err != nil {
			return nil, err
		}
		out[k.AsString()] = g
	}
	return out, nil
}

// ParseAnswer converts s, the VALUE of a `--var NAME=VALUE` answer (or a TUI
// prompt's input), to the field's type, typed like Template.Vars:
//
//   - string: s unchanged.
//   - number: a JSON number such as 3, -2.5 or 1e3 (surrounding spaces
//     ignored), returned as json.Number with its text kept exactly.
//   - bool: "true" or "false".
//   - list: a JSON array (when s starts with "["), or else a comma-separated
//     list of strings: "a, b" gives ["a" "b"] with spaces around each item
//     trimmed, and "" gives an empty list. An item containing a comma needs
//     the JSON form. JSON numbers come back as json.Number.
//   - map: a JSON object, such as {"team":"infra"}.
//   - choice: s must be one of Choices exactly.
//
// Errors name the field and the answer, e.g.
// `survey field "count" wants a number, got "three"`.
//
// For a sensitive field the errors never repeat the answer: it is a secret
// (it would reach a terminal and an SSH client's stderr).
func (f *SurveyField) ParseAnswer(s string) (any, error) {
	v, err := f.parseAnswer(s)
	if err != nil && f.Sensitive {
		return nil, fmt.Errorf("survey field %q is sensitive and its answer is not a valid %s; the answer is not repeated here", f.Name, f.Type)
	}
	return v, err
}

func (f *SurveyField) parseAnswer(s string) (any, error) {
	switch f.Type {
	case TypeString, "":
		return s, nil
	case TypeNumber:
		return f.numberAnswer(s)
	case TypeBool:
		return f.boolAnswer(s)
	case TypeList:
		return f.listAnswer(s)
	case TypeMap:
		return f.mapAnswer(s)
	case TypeChoice:
		return f.choiceAnswer(s)
	}
	return nil, fmt.Errorf("survey field %q has unknown type %q", f.Name, f.Type)
}

func (f *SurveyField) numberAnswer(s string) (any, error) {
	v, err := decodeJSON(strings.TrimSpace(s))
	if n, ok := v.(json.Number); err == nil && ok {
		return n, nil
	}
	return nil, fmt.Errorf("survey field %q wants a number, got %q; write it like 3, -2.5 or 1e3", f.Name, s)
}

func (f *SurveyField) boolAnswer(s string) (any, error) {
	switch strings.TrimSpace(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, fmt.Errorf("survey field %q wants true or false, got %q", f.Name, s)
}

// listAnswer reads a JSON array, or else comma-separated strings.
func (f *SurveyField) listAnswer(s string) (any, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") {
		v, err := decodeJSON(t)
		if l, ok := v.([]any); err == nil && ok {
			return l, nil
		}
		return nil, fmt.Errorf("survey field %q wants a list, got %q, which is not a JSON array; write it like [\"a\",\"b\"] or a,b", f.Name, s)
	}
	out := []any{}
	if t == "" {
		return out, nil
	}
	for _, item := range strings.Split(t, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("survey field %q wants a list, got %q, which has an empty item; write it like a,b or as JSON [\"a\",\"\"]", f.Name, s)
		}
		out = append(out, item)
	}
	return out, nil
}

func (f *SurveyField) mapAnswer(s string) (any, error) {
	v, err := decodeJSON(strings.TrimSpace(s))
	if m, ok := v.(map[string]any); err == nil && ok {
		return m, nil
	}
	return nil, fmt.Errorf("survey field %q wants a map, got %q, which is not a JSON object; write it like {\"team\":\"infra\"}", f.Name, s)
}

func (f *SurveyField) choiceAnswer(s string) (any, error) {
	for _, c := range f.Choices {
		if s == c {
			return s, nil
		}
	}
	return nil, fmt.Errorf("survey field %q wants one of %s, got %q", f.Name, quoteList(f.Choices), s)
}

// decodeJSON decodes exactly one JSON value, numbers as json.Number.
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}
