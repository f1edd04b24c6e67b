package gate

import "github.com/open-policy-agent/opa/v1/ast"

// eachMember moves past the object whose '{' is at p.pos, calling member
// once per member with p.pos at the member's key; member must consume the
// key, the ':' (see colon) and the value.
func (p *valueParser) eachMember(member func() error) error {
	p.pos++ // {
	p.skipSpace()
	if p.at('}') {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if !p.at('"') {
			return p.errorf("want an object key")
		}
		if err := member(); err != nil {
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

// colon moves past the ':' after an object key and the space around it.
func (p *valueParser) colon() error {
	p.skipSpace()
	if !p.at(':') {
		return p.errorf("want ':' after an object key")
	}
	p.pos++
	p.skipSpace()
	return nil
}

// eachElement moves past the array whose '[' is at p.pos, calling elem at
// each element; elem must consume it.
func (p *valueParser) eachElement(elem func() error) error {
	p.pos++ // [
	p.skipSpace()
	if p.at(']') {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if err := elem(); err != nil {
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

func (p *valueParser) object(depth int) (*ast.Term, error) {
	base := len(p.pairs)
	err := p.eachMember(func() error {
		key, err := p.key()
		if err != nil {
			return err
		}
		if err := p.colon(); err != nil {
			return err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		p.pairs = append(p.pairs, [2]*ast.Term{key, v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.pairs) == base { // {}
		return ast.ObjectTerm(), nil
	}
	t := p.term(objectValue(p.pairs[base:]))
	clear(p.pairs[base:])
	p.pairs = p.pairs[:base]
	return t, nil
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
	base := len(p.elems)
	err := p.eachElement(func() error {
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		p.elems = append(p.elems, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.elems) == base { // []
		return ast.ArrayTerm(), nil
	}
	elems := make([]*ast.Term, len(p.elems)-base)
	copy(elems, p.elems[base:])
	clear(p.elems[base:])
	p.elems = p.elems[:base]
	return p.term(ast.NewArray(elems...)), nil
}
