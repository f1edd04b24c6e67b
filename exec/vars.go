package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EncodeVar returns the value of the TF_VAR_ environment entry that carries
// v to the configuration (spec "How values reach the configuration": extra
// vars, survey answers and template vars arrive as TF_VAR_ entries; scalars
// pass through as strings, lists and maps pass as JSON).
//
//   - string: as is. It must not contain a NUL byte, which no environment
//     entry can carry.
//   - bool: "true" or "false".
//   - numbers (int and uint kinds, float32, float64, json.Number): decimal,
//     without an exponent ("1e21" is written "1000000000000000000000");
//     NaN and infinities are refused.
//   - lists and maps ([]any, map[string]any, []string, map[string]string and
//     any other slice, array or string-keyed map, nested, with nil as null):
//     JSON with sorted keys, written so that OpenTofu, which reads a complex
//     TF_VAR_ value as an HCL expression, reads back exactly the same values:
//     inside strings "${" is written "$${" and "%{" is written "%%{" (HCL
//     template escapes), and control characters are written \n, \r, \t or
//     \u00XX (JSON's \b and \f are not HCL). Strings inside must be valid
//     UTF-8.
//
// OpenTofu itself normalises every string to Unicode NFC (go-cty), whatever
// the source, so a string that is not in NFC arrives normalised.
//
// Other types (structs, pointers, functions, channels, non-string map keys)
// are refused with an error naming the type. A top-level nil is refused: an
// environment entry cannot carry null; leave the variable unset instead.
func EncodeVar(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", errors.New("encoding variable: null cannot be passed as a TF_VAR_ value; leave the variable unset to use its default")
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return "", errors.New("encoding variable: the string contains a NUL byte, which an environment variable cannot carry")
		}
		return x, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		var b strings.Builder
		if err := encodeHCL(&b, rv, 0); err != nil {
			return "", fmt.Errorf("encoding variable: %w", err)
		}
		return b.String(), nil
	}
	s, err := scalar(rv)
	if err != nil {
		return "", fmt.Errorf("encoding variable: %w", err)
	}
	return s, nil
}

// maxDepth bounds nesting, so a cyclic value is refused instead of looping.
const maxDepth = 100

var jsonNumber = reflect.TypeFor[json.Number]()

// scalar encodes a bool or number.
func scalar(rv reflect.Value) (string, error) {
	if rv.Type() == jsonNumber {
		return decimalString(rv.String())
	}
	switch rv.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("number %v cannot be passed to the configuration; use a finite number", f)
		}
		bits := 64
		if rv.Kind() == reflect.Float32 {
			bits = 32
		}
		return strconv.FormatFloat(f, 'f', -1, bits), nil
	}
	return "", fmt.Errorf("a value of type %s cannot be passed to the configuration; use a string, number, bool, list or map", rv.Type())
}

var jsonNumberRE = regexp.MustCompile(`^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// decimalString rewrites a JSON number in plain decimal notation, exactly
// (no rounding through float64).
func decimalString(n string) (string, error) {
	m := jsonNumberRE.FindStringSubmatch(n)
	if m == nil {
		return "", fmt.Errorf("%q is not a number", n)
	}
	sign, digits, exp := m[1], m[2]+m[3], 0
	point := len(m[2]) // position of the decimal point within digits
	if m[4] != "" {
		e, err := strconv.Atoi(m[4])
		if err != nil || e > 10000 || e < -10000 {
			return "", fmt.Errorf("number %q has an exponent too large to write out; use a smaller number", n)
		}
		exp = e
	}
	point += exp
	if point < 0 {
		digits = strings.Repeat("0", -point) + digits
		point = 0
	}
	if point > len(digits) {
		digits += strings.Repeat("0", point-len(digits))
	}
	intPart := strings.TrimLeft(digits[:point], "0")
	frac := strings.TrimRight(digits[point:], "0")
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if out == "0" {
		sign = ""
	}
	return sign + out, nil
}

// encodeHCL writes rv as JSON that is also an HCL expression of the same value.
func encodeHCL(b *strings.Builder, rv reflect.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested more than %d levels deep (a cycle?)", maxDepth)
	}
	if rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			b.WriteString("null")
			return nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.String:
		return encodeHCLString(b, rv)
	case reflect.Slice, reflect.Array:
		return encodeHCLList(b, rv, depth)
	case reflect.Map:
		return encodeHCLMap(b, rv, depth)
	case reflect.Invalid:
		b.WriteString("null")
		return nil
	}
	s, err := scalar(rv)
	if err != nil {
		return err
	}
	b.WriteString(s)
	return nil
}

// encodeHCLString writes a string, or a json.Number as its decimal text.
func encodeHCLString(b *strings.Builder, rv reflect.Value) error {
	if rv.Type() == jsonNumber {
		s, err := decimalString(rv.String())
		if err != nil {
			return err
		}
		b.WriteString(s)
		return nil
	}
	return writeHCLString(b, rv.String())
}

// encodeHCLList writes a slice or array as a list; a nil slice is [].
func encodeHCLList(b *strings.Builder, rv reflect.Value, depth int) error {
	if rv.Kind() == reflect.Slice && rv.IsNil() {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i := range rv.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeHCL(b, rv.Index(i), depth+1); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// encodeHCLMap writes a map with string keys as an object, keys sorted.
func encodeHCLMap(b *strings.Builder, rv reflect.Value, depth int) error {
	if rv.Type().Key().Kind() != reflect.String {
		return fmt.Errorf("a map with %s keys cannot be passed to the configuration; use string keys", rv.Type().Key())
	}
	keys := rv.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeHCLString(b, k.String()); err != nil {
			return fmt.Errorf("map key: %w", err)
		}
		b.WriteByte(':')
		if err := encodeHCL(b, rv.MapIndex(k), depth+1); err != nil {
			return fmt.Errorf("map key %q: %w", k.String(), err)
		}
	}
	b.WriteByte('}')
	return nil
}

// writeHCLString writes s as a quoted string that JSON and HCL read the same.
func writeHCLString(b *strings.Builder, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("string %q is not valid UTF-8", s)
	}
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(b, `\u%04x`, c)
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte(c)
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return nil
}
