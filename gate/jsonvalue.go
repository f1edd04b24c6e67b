package gate

import (
	"fmt"

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
