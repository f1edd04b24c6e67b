package gate

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

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
			if err := p.escape(); err != nil {
				return nil, false, err
			}
		default: // c < 0x20
			return nil, false, p.errorf("control character in a string")
		}
	}
}

// escape moves past the escape whose backslash is at p.pos, refusing a
// malformed one.
func (p *valueParser) escape() error {
	b := p.buf
	if p.pos+1 >= len(b) {
		return p.errorf("unterminated string")
	}
	switch b[p.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.pos += 2
	case 'u':
		return p.unicodeEscape()
	default:
		return p.errorf("bad escape \\%c", b[p.pos+1])
	}
	return nil
}

// unicodeEscape moves past the \uXXXX escape at p.pos.
func (p *valueParser) unicodeEscape() error {
	b := p.buf
	if p.pos+6 > len(b) {
		return p.errorf("short \\u escape")
	}
	for _, h := range b[p.pos+2 : p.pos+6] {
		if !isDigit(h) && (h|0x20 < 'a' || h|0x20 > 'f') {
			return p.errorf("bad \\u escape")
		}
	}
	p.pos += 6
	return nil
}
