package gate

import (
	"encoding/json"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// jsonToValue converts a JSON document (RFC 8259) to a Rego value in one
// strict pass, without the intermediate map[string]any that
// ast.ValueFromReader builds: on a 19 MiB plan that intermediate more than
// doubles the work. Numbers keep their JSON text (ast.Number), as OPA's own
// conversion does. Malformed JSON returns an error naming the byte offset.
func jsonToValue(doc []byte) (ast.Value, error) {
	p := valueParser{buf: doc, keys: map[string]*ast.Term{}, strs: map[string]*ast.Term{}}
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
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *valueParser) number() (*ast.Term, error) {
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
	return ast.NumberTerm(json.Number(b[start:p.pos])), nil
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
			t := ast.ObjectTerm(p.pairs[base:]...)
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
			return ast.ArrayTerm(elems...), nil
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
	t := ast.StringTerm(string(raw))
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
		return ast.StringTerm(string(raw)), nil
	}
	if t, ok := p.strs[string(raw)]; ok {
		return t, nil
	}
	t := ast.StringTerm(string(raw))
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

// scanString moves past the string starting at p.pos (its opening quote)
// and returns its content between the quotes and whether it has escapes.
// It refuses control characters and malformed escapes.
func (p *valueParser) scanString() ([]byte, bool, error) {
	p.pos++ // "
	start := p.pos
	escaped := false
	b := p.buf
	for p.pos < len(b) {
		c := b[p.pos]
		switch {
		case c == '"':
			raw := b[start:p.pos]
			p.pos++
			return raw, escaped, nil
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
		case c < 0x20:
			return nil, false, p.errorf("control character in a string")
		default:
			p.pos++
		}
	}
	return nil, false, p.errorf("unterminated string")
}
