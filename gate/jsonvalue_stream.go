package gate

import "github.com/open-policy-agent/opa/v1/ast"

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
		return p.eachMember(func() error {
			if _, _, err := p.scanString(); err != nil {
				return err
			}
			if err := p.colon(); err != nil {
				return err
			}
			return p.skip(depth + 1)
		})
	case '[':
		return p.eachElement(func() error { return p.skip(depth + 1) })
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
	if !p.at('{') {
		return p.errorf("want an object")
	}
	return p.eachMember(func() error {
		key, err := p.memberKey()
		if err != nil {
			return err
		}
		if err := p.colon(); err != nil {
			return err
		}
		return f(key)
	})
}

// memberKey reads the object key at p.pos, decoded; a key without escapes
// is a slice of the document.
func (p *valueParser) memberKey() ([]byte, error) {
	start := p.pos
	key, escaped, err := p.scanString()
	if err != nil || !escaped {
		return key, err
	}
	t, err := p.unescape(start)
	if err != nil {
		return nil, err
	}
	return []byte(t.Value.(ast.String)), nil
}

// elements reads the array at p.pos, calling f at each element; f must
// consume it.
func (p *valueParser) elements(f func() error) error {
	if !p.at('[') {
		return p.errorf("want an array")
	}
	return p.eachElement(f)
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
