package gate

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// jsonObjectToValue converts a JSON object (RFC 8259) to a Rego object in
// one strict pass, without the intermediate map[string]any that
// ast.ValueFromReader builds (on a 19 MiB plan that intermediate more than
// doubles the work), keeping only the top-level keys keep accepts; the
// values of the others are checked to be JSON but not converted. Numbers
// keep their JSON text (ast.Number), as OPA's own conversion does.
// Malformed JSON returns an error naming the byte offset.
func jsonObjectToValue(doc []byte, keep func(key string) bool) (ast.Object, error) {
	p := valueParser{buf: doc, keys: map[string]*ast.Term{}, strs: map[string]*ast.Term{}, text: string(doc)}
	p.skipSpace()
	var pairs [][2]*ast.Term
	err := p.members(func(key []byte) error {
		if !keep(string(key)) {
			return p.skip(1)
		}
		v, err := p.value(1)
		if err != nil {
			return err
		}
		pairs = append(pairs, [2]*ast.Term{ast.StringTerm(string(key)), v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return nil, p.errorf("data after the JSON value")
	}
	return objectValue(pairs), nil
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// internMax is the longest string value interned; longer ones are mostly
// unique (ids, payloads). internCap bounds the intern table.
const (
	internMax = 40
	internCap = 1 << 16
)

var (
	trueTerm  = ast.BooleanTerm(true)
	falseTerm = ast.BooleanTerm(false)
	nullTerm  = ast.NullTerm()
)

type valueParser struct {
	buf []byte
	pos int
	// keys interns object keys and strs short string values: a plan repeats
	// a few dozen keys and values ("managed", "delete", a provider name)
	// hundreds of thousands of times. Input terms are never modified by
	// evaluation, so sharing them is safe.
	keys, strs map[string]*ast.Term
	// elems and pairs are stacks reused across arrays and objects; ast
	// copies what it keeps.
	elems []*ast.Term
	pairs [][2]*ast.Term
	// text is doc as a string, when substrings of it may be kept; slab is
	// where terms are allocated from, a block at a time.
	text string
	slab []ast.Term
	// small maps the text of small containers to their terms.
	small map[string]*ast.Term
}

// term returns a new term holding v, from the slab.
func (p *valueParser) term(v ast.Value) *ast.Term {
	if len(p.slab) == 0 {
		p.slab = make([]ast.Term, 1024)
	}
	t := &p.slab[0]
	p.slab = p.slab[1:]
	t.Value = v
	return t
}

// sub returns buf[start:end] as a string, cut from text when there is one.
func (p *valueParser) sub(start, end int) string {
	if p.text != "" {
		return p.text[start:end]
	}
	return string(p.buf[start:end])
}

func (p *valueParser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *valueParser) skipSpace() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *valueParser) literal(word string, t *ast.Term) (*ast.Term, error) {
	if len(p.buf)-p.pos < len(word) || string(p.buf[p.pos:p.pos+len(word)]) != word {
		return nil, p.errorf("unexpected %q", p.buf[p.pos])
	}
	p.pos += len(word)
	return t, nil
}

func (p *valueParser) value(depth int) (*ast.Term, error) {
	if p.pos >= len(p.buf) {
		return nil, p.errorf("unexpected end of input")
	}
	if depth > maxDepth {
		return nil, p.errorf("nested deeper than %d", maxDepth)
	}
	switch c := p.buf[p.pos]; c {
	case '{', '[':
		return p.container(depth)
	case '"':
		return p.stringValue()
	case 't':
		return p.literal("true", trueTerm)
	case 'f':
		return p.literal("false", falseTerm)
	case 'n':
		return p.literal("null", nullTerm)
	default:
		return p.number()
	}
}

// container reads an object or array. A small one whose exact text was
// seen before gets the term built then: a plan repeats small values
// (action lists, sensitivity and unknown-value marks, empty objects) for
// every resource. Identical text parses to an identical value, and
// evaluation never modifies input terms, so sharing them is safe.
func (p *valueParser) container(depth int) (*ast.Term, error) {
	start := p.pos
	end := p.smallEnd()
	if end > 0 {
		if t, ok := p.small[string(p.buf[start:end])]; ok {
			p.pos = end
			return t, nil
		}
	}
	var t *ast.Term
	var err error
	if p.buf[p.pos] == '{' {
		t, err = p.object(depth)
	} else {
		t, err = p.array(depth)
	}
	if err == nil && end > 0 && p.pos == end && len(p.small) < internCap {
		if p.small == nil {
			p.small = map[string]*ast.Term{}
		}
		p.small[p.sub(start, end)] = t
	}
	return t, err
}

// smallMax is the longest container text smallEnd looks for.
const smallMax = 96

// smallEnd returns where the container at p.pos ends if it is at most
// smallMax bytes long, else -1. It only matches brackets outside strings;
// the caller parses what it has not seen before.
func (p *valueParser) smallEnd() int {
	b := p.buf
	limit := min(len(b), p.pos+smallMax)
	depth := 0
	for i := p.pos; i < limit; i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			for i++; i < limit && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *valueParser) number() (*ast.Term, error) {
	start := p.pos
	if _, err := p.numberText(); err != nil {
		return nil, err
	}
	return p.term(ast.Number(p.sub(start, p.pos))), nil
}

// numberText reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *valueParser) numberText() ([]byte, error) {
	start := p.pos
	b := p.buf
	if p.pos < len(b) && b[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(b) && b[p.pos] == '0':
		p.pos++
	case p.pos < len(b) && isDigit(b[p.pos]):
		for p.pos < len(b) && isDigit(b[p.pos]) {
			p.pos++
		}
	default:
		return nil, p.errorf("unexpected character, want a value")
	}
	if p.pos < len(b) && b[p.pos] == '.' {
		p.pos++
		if p.pos >= len(b) || !isDigit(b[p.pos]) {
			return nil, p.errorf("a number needs digits after its decimal point")
		}
		for p.pos < len(b) && isDigit(b[p.pos]) {
			p.pos++
		}
	}
	if p.pos < len(b) && (b[p.pos] == 'e' || b[p.pos] == 'E') {
		p.pos++
		if p.pos < len(b) && (b[p.pos] == '+' || b[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(b) || !isDigit(b[p.pos]) {
			return nil, p.errorf("a number needs digits in its exponent")
		}
		for p.pos < len(b) && isDigit(b[p.pos]) {
			p.pos++
		}
	}
	return b[start:p.pos], nil
}

func (p *valueParser) object(depth int) (*ast.Term, error) {
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
		return ast.ObjectTerm(), nil
	}
	base := len(p.pairs)
	for {
		p.skipSpace()
		if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
			return nil, p.errorf("want an object key")
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
			return nil, p.errorf("want ':' after an object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.pairs = append(p.pairs, [2]*ast.Term{key, v})
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.buf[p.pos] {
		case '}':
			p.pos++
			t := p.term(objectValue(p.pairs[base:]))
			clear(p.pairs[base:])
			p.pairs = p.pairs[:base]
			return t, nil
		case ',':
			p.pos++
		default:
			return nil, p.errorf("want ',' or '}' in an object")
		}
	}
}

// objectTerm builds an object from pairs; a repeated key keeps its last
// value, as encoding/json does (ast.NewObject assumes distinct keys).
func objectValue(pairs [][2]*ast.Term) ast.Object {
	dup := false
	if len(pairs) <= 16 {
		for i := 1; i < len(pairs) && !dup; i++ {
			for j := range i {
				if pairs[i][0] == pairs[j][0] || pairs[i][0].Value.Compare(pairs[j][0].Value) == 0 {
					dup = true
					break
				}
			}
		}
	} else {
		seen := make(map[ast.String]bool, len(pairs))
		for _, kv := range pairs {
			k := kv[0].Value.(ast.String)
			if seen[k] {
				dup = true
				break
			}
			seen[k] = true
		}
	}
	if !dup {
		return ast.NewObject(pairs...)
	}
	obj := ast.NewObjectWithCapacity(len(pairs))
	for _, kv := range pairs {
		obj.Insert(kv[0], kv[1])
	}
	return obj
}

func (p *valueParser) array(depth int) (*ast.Term, error) {
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
		p.pos++
		return ast.ArrayTerm(), nil
	}
	base := len(p.elems)
	for {
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.buf[p.pos] {
		case ']':
			p.pos++
			elems := make([]*ast.Term, len(p.elems)-base)
			copy(elems, p.elems[base:])
			clear(p.elems[base:])
			p.elems = p.elems[:base]
			return p.term(ast.NewArray(elems...)), nil
		case ',':
			p.pos++
		default:
			return nil, p.errorf("want ',' or ']' in an array")
		}
	}
}

// key reads an object key, interned.
func (p *valueParser) key() (*ast.Term, error) {
	start := p.pos
	raw, escaped, err := p.scanString()
	if err != nil {
		return nil, err
	}
	if escaped {
		return p.unescape(start)
	}
	if t, ok := p.keys[string(raw)]; ok {
		return t, nil
	}
	t := ast.StringTerm(p.sub(start+1, p.pos-1))
	p.keys[string(raw)] = t
	return t, nil
}

// stringValue reads a string value, interning short ones.
func (p *valueParser) stringValue() (*ast.Term, error) {
	start := p.pos
	raw, escaped, err := p.scanString()
	if err != nil {
		return nil, err
	}
	if escaped {
		return p.unescape(start)
	}
	if len(raw) > internMax {
		return p.term(ast.String(p.sub(start+1, p.pos-1))), nil
	}
	if t, ok := p.strs[string(raw)]; ok {
		return t, nil
	}
	t := ast.StringTerm(p.sub(start+1, p.pos-1))
	if len(p.strs) < internCap {
		p.strs[string(raw)] = t
	}
	return t, nil
}

// unescape decodes the string with escapes that starts at start and ends
// before p.pos.
func (p *valueParser) unescape(start int) (*ast.Term, error) {
	var s string
	if err := json.Unmarshal(p.buf[start:p.pos], &s); err != nil {
		return nil, fmt.Errorf("invalid JSON string at offset %d: %w", start, err)
	}
	return ast.StringTerm(s), nil
}

// plainByte marks the bytes a string can hold without a closer look: not a
// quote, backslash, control character or non-ASCII byte.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString moves past the string starting at p.pos (its opening quote)
// and returns its content between the quotes and whether it needs decoding
// (escapes, or invalid UTF-8). It refuses control characters and malformed
// escapes.
func (p *valueParser) scanString() ([]byte, bool, error) {
	p.pos++ // "
	start := p.pos
	escaped, nonASCII := false, false
	b := p.buf
	for {
		for p.pos < len(b) && plainByte[b[p.pos]] {
			p.pos++
		}
		if p.pos >= len(b) {
			return nil, false, p.errorf("unterminated string")
		}
		c := b[p.pos]
		switch {
		case c == '"':
			raw := b[start:p.pos]
			p.pos++
			if nonASCII && !escaped && !utf8.Valid(raw) {
				// encoding/json replaces invalid UTF-8 with U+FFFD;
				// decoding through it does the same here.
				escaped = true
			}
			return raw, escaped, nil
		case c >= 0x80:
			nonASCII = true
			p.pos++
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(b) {
				return nil, false, p.errorf("unterminated string")
			}
			switch b[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(b) {
					return nil, false, p.errorf("short \\u escape")
				}
				for _, h := range b[p.pos+2 : p.pos+6] {
					if !isDigit(h) && (h|0x20 < 'a' || h|0x20 > 'f') {
						return nil, false, p.errorf("bad \\u escape")
					}
				}
				p.pos += 6
			default:
				return nil, false, p.errorf("bad escape \\%c", b[p.pos+1])
			}
		default: // c < 0x20
			return nil, false, p.errorf("control character in a string")
		}
	}
}

// skip moves past one JSON value, checking it as value does but building
// nothing.
func (p *valueParser) skip(depth int) error {
	if p.pos >= len(p.buf) {
		return p.errorf("unexpected end of input")
	}
	if depth > maxDepth {
		return p.errorf("nested deeper than %d", maxDepth)
	}
	switch p.buf[p.pos] {
	case '{':
		p.pos++
		p.skipSpace()
		if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
			p.pos++
			return nil
		}
		for {
			p.skipSpace()
			if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
				return p.errorf("want an object key")
			}
			if _, _, err := p.scanString(); err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
				return p.errorf("want ':' after an object key")
			}
			p.pos++
			p.skipSpace()
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.buf) {
				return p.errorf("unexpected end of input in an object")
			}
			switch p.buf[p.pos] {
			case '}':
				p.pos++
				return nil
			case ',':
				p.pos++
			default:
				return p.errorf("want ',' or '}' in an object")
			}
		}
	case '[':
		p.pos++
		p.skipSpace()
		if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
			p.pos++
			return nil
		}
		for {
			p.skipSpace()
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.buf) {
				return p.errorf("unexpected end of input in an array")
			}
			switch p.buf[p.pos] {
			case ']':
				p.pos++
				return nil
			case ',':
				p.pos++
			default:
				return p.errorf("want ',' or ']' in an array")
			}
		}
	case '"':
		_, _, err := p.scanString()
		return err
	case 't':
		_, err := p.literal("true", nil)
		return err
	case 'f':
		_, err := p.literal("false", nil)
		return err
	case 'n':
		_, err := p.literal("null", nil)
		return err
	default:
		_, err := p.numberText()
		return err
	}
}

// members reads the object at p.pos, calling f with each key once p.pos is
// at the key's value; f must consume the value. The key is only valid during
// the call.
func (p *valueParser) members(f func(key []byte) error) error {
	if p.pos >= len(p.buf) || p.buf[p.pos] != '{' {
		return p.errorf("want an object")
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
			return p.errorf("want an object key")
		}
		start := p.pos
		key, escaped, err := p.scanString()
		if err != nil {
			return err
		}
		if escaped {
			t, err := p.unescape(start)
			if err != nil {
				return err
			}
			key = []byte(t.Value.(ast.String))
		}
		p.skipSpace()
		if p.pos >= len(p.buf) || p.buf[p.pos] != ':' {
			return p.errorf("want ':' after an object key")
		}
		p.pos++
		p.skipSpace()
		if err := f(key); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return p.errorf("unexpected end of input in an object")
		}
		switch p.buf[p.pos] {
		case '}':
			p.pos++
			return nil
		case ',':
			p.pos++
		default:
			return p.errorf("want ',' or '}' in an object")
		}
	}
}

// elements reads the array at p.pos, calling f at each element; f must
// consume it.
func (p *valueParser) elements(f func() error) error {
	if p.pos >= len(p.buf) || p.buf[p.pos] != '[' {
		return p.errorf("want an array")
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if err := f(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return p.errorf("unexpected end of input in an array")
		}
		switch p.buf[p.pos] {
		case ']':
			p.pos++
			return nil
		case ',':
			p.pos++
		default:
			return p.errorf("want ',' or ']' in an array")
		}
	}
}

// stringOrNull reads a string (or null, as "").
func (p *valueParser) stringOrNull() (string, error) {
	if p.pos < len(p.buf) && p.buf[p.pos] == 'n' {
		_, err := p.literal("null", nil)
		return "", err
	}
	if p.pos >= len(p.buf) || p.buf[p.pos] != '"' {
		return "", p.errorf("want a string")
	}
	t, err := p.stringValue()
	if err != nil {
		return "", err
	}
	return string(t.Value.(ast.String)), nil
}

// raw moves past one value and stores its text in *dst.
func (p *valueParser) raw(dst *[]byte) error {
	start := p.pos
	if err := p.skip(1); err != nil {
		return err
	}
	*dst = p.buf[start:p.pos]
	return nil
}

// nullOr skips a null, or else calls f to read the value.
func (p *valueParser) nullOr(f func() error) error {
	if p.pos < len(p.buf) && p.buf[p.pos] == 'n' {
		_, err := p.literal("null", nil)
		return err
	}
	return f()
}
