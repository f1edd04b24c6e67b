package planview

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

// node is one decoded JSON value. Object members are sorted by key (the
// last of duplicate keys wins, as encoding/json decides); a change set's
// attributes come out in that order.
type node struct {
	kind kind
	// str is a string's decoded content, a number's JSON text, or "true"
	// / "false" (a piece of the parser's buffer, or decoded apart).
	str []byte
	// raw is the value's JSON text as written (a piece of the parser's
	// buffer), for a quick equality test.
	raw []byte
	// keys are an object's member names; kids its member values (parallel
	// to keys) or an array's elements.
	keys [][]byte
	kids []*node
	// marks caches whether a mark tree (after_unknown, *_sensitive) holds
	// a true anywhere: 0 not computed, 1 no, 2 yes.
	marks uint8
}

func (n *node) isNull() bool { return n == nil || n.kind == kindNull }

func (n *node) isTrue() bool { return n != nil && n.kind == kindBool && len(n.str) == 4 }

// text returns a string's content, a number's text, or "true" / "false",
// as a new string.
func (n *node) text() string { return string(n.str) }

func (n *node) container() bool { return n != nil && (n.kind == kindObject || n.kind == kindArray) }

// member returns the value of an object's member key, or nil.
func (n *node) member(key []byte) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	if len(n.keys) <= 8 {
		for i, k := range n.keys {
			if bytes.Equal(k, key) {
				return n.kids[i]
			}
		}
		return nil
	}
	if i, ok := slices.BinarySearchFunc(n.keys, key, bytes.Compare); ok {
		return n.kids[i]
	}
	return nil
}

// elem returns an array's element i, or nil.
func (n *node) elem(i int) *node {
	if n == nil || n.kind != kindArray || i >= len(n.kids) {
		return nil
	}
	return n.kids[i]
}

// anyTrue reports whether a mark tree holds true anywhere.
func (n *node) anyTrue() bool {
	if n == nil {
		return false
	}
	if n.marks == 0 {
		n.marks = 1
		if n.isTrue() || slices.ContainsFunc(n.kids, (*node).anyTrue) {
			n.marks = 2
		}
	}
	return n.marks == 2
}

// arena hands out slices from large blocks; reset lets the current block be
// reused once nothing handed out from it is live.
type arena[T any] struct {
	block []T
	off   int
}

func (a *arena[T]) alloc(n int) []T {
	if a.off+n > len(a.block) {
		a.block = make([]T, max(1024, n))
		a.off = 0
	}
	s := a.block[a.off : a.off+n : a.off+n]
	a.off += n
	return s
}

func (a *arena[T]) reset() { clear(a.block[:a.off]); a.off = 0 }

// parser reads JSON (RFC 8259) strictly, in one pass: skip checks a value
// without keeping it, value decodes it into nodes. Nodes hold pieces of buf
// (strings without escapes, numbers, raw text), so anything kept past the
// parse is copied out of them.
type parser struct {
	buf []byte
	pos int

	nodes arena[node]
	ptrs  arena[*node]
	strs  arena[[]byte]
	// kids and keys are stacks the containers being decoded share.
	kids []*node
	keys [][]byte
	// ambiguous is set once the document holds what JSON readers read
	// differently: an object that repeats a key (encoding/json keeps the
	// last, others the first or refuse it), or a \u escape of half a
	// surrogate pair (decoded as U+FFFD, so two different ones read alike).
	ambiguous bool
}

func newParser(doc []byte) *parser { return &parser{buf: doc} }

func newStringParser(doc string) *parser { return newParser([]byte(doc)) }

// reset recycles every node decoded so far.
func (p *parser) reset() {
	p.nodes.reset()
	p.ptrs.reset()
	p.strs.reset()
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\n', '\t', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.pos >= len(p.buf) {
		return 0
	}
	return p.buf[p.pos]
}

// end checks that nothing but white space follows the document's value.
func (p *parser) end() error {
	if p.space(); p.pos != len(p.buf) {
		return p.errorf("data after the JSON value")
	}
	return nil
}

func (p *parser) expect(c byte) error {
	if p.peek() != c {
		if p.pos >= len(p.buf) {
			return p.errorf("unexpected end, want %q", c)
		}
		return p.errorf("unexpected %q, want %q", p.buf[p.pos], c)
	}
	p.pos++
	return nil
}

// members reads an object, calling fn with each key (decoded; valid during
// the call only) with p at its value; fn must consume the value.
func (p *parser) members(fn func(key []byte) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	if p.peek() == '}' {
		p.pos++
		return nil
	}
	for {
		if p.peek() != '"' {
			return p.errorf("object key is not a string")
		}
		key, err := p.keyBytes()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.errorf("want ',' or '}' in an object")
		}
	}
}

// elements reads an array, calling fn with p at each element; fn must
// consume it.
func (p *parser) elements(fn func() error) error {
	if err := p.expect('['); err != nil {
		return err
	}
	if p.peek() == ']' {
		p.pos++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return nil
		default:
			return p.errorf("want ',' or ']' in an array")
		}
	}
}

// nullOr consumes a null, or calls fn for any other value.
func (p *parser) nullOr(fn func() error) error {
	if p.peek() == 'n' {
		return p.literal("null")
	}
	return fn()
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.buf[p.pos:], []byte(word)) {
		return p.errorf("invalid literal")
	}
	p.pos += len(word)
	return nil
}

// plainByte marks the bytes a string holds as they are: not a quote,
// backslash, control character or non-ASCII byte.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString moves past the string at p.pos and reports where its content
// is and whether it must be decoded (escapes or non-ASCII bytes).
func (p *parser) scanString() (start, end int, special bool, err error) {
	p.pos++
	start = p.pos
	b := p.buf
	for i := start; ; i++ {
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			p.pos = len(b)
			return 0, 0, false, p.errorf("unterminated string")
		}
		c := b[i]
		switch {
		case plainByte[c]:
		case c == '"':
			p.pos = i + 1
			return start, i, special, nil
		case c == '\\':
			special = true
			if i, err = p.escape(i + 1); err != nil {
				return 0, 0, false, err
			}
		case c < 0x20:
			p.pos = i
			return 0, 0, false, p.errorf("control character in a string")
		default:
			special = true
		}
	}
}

// plain8 reports whether none of the 8 bytes in w is a quote, a backslash,
// a control character or non-ASCII (bit tricks from "Bit Twiddling Hacks",
// "Determine if a word has a byte less than n").
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := w^('"'*ones), w^('\\'*ones)
	special := (w-0x20*ones)&^w | (q-ones)&^q | (bs-ones)&^bs | w
	return special&highs == 0
}

// escape checks the escape whose letter is at i and returns the index of
// its last byte.
func (p *parser) escape(i int) (int, error) {
	b := p.buf
	switch {
	case i >= len(b):
		p.pos = len(b)
		return 0, p.errorf("unterminated string")
	case b[i] == 'u':
		if i+4 >= len(b) || !isHex4(b[i+1:i+5]) {
			p.pos = i
			return 0, p.errorf("invalid \\u escape")
		}
		return p.surrogate(i), nil
	case strings.IndexByte(`"\/bfnrt`, b[i]) < 0:
		p.pos = i
		return 0, p.errorf("invalid escape")
	}
	return i, nil
}

// surrogate returns the index of the last byte of the \u escape whose u is
// at i: of the escape after it too when the two are a surrogate pair. Half
// a pair alone marks the document ambiguous.
func (p *parser) surrogate(i int) int {
	b := p.buf
	v := hex4(b[i+1 : i+5])
	switch {
	case v < 0xd800 || v > 0xdfff:
		return i + 4
	case v < 0xdc00 && i+10 < len(b) && b[i+5] == '\\' && b[i+6] == 'u' && isHex4(b[i+7:i+11]):
		if w := hex4(b[i+7 : i+11]); w >= 0xdc00 && w <= 0xdfff {
			return i + 10
		}
	}
	p.ambiguous = true
	return i + 4
}

// hex4 is the value of four hex digits.
func hex4(b []byte) int {
	v := 0
	for _, c := range b {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		v = v<<4 | int(c)
	}
	return v
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// keyBytes reads an object key, decoded.
func (p *parser) keyBytes() ([]byte, error) { return p.stringValue() }

// stringValue reads a string and decodes it: a piece of buf when it has no
// escapes, else a new slice.
func (p *parser) stringValue() ([]byte, error) {
	start, end, special, err := p.scanString()
	if err != nil {
		return nil, err
	}
	s := p.buf[start:end]
	if !special || (bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s)) {
		return s, nil
	}
	// Escapes or invalid UTF-8: decoded as encoding/json does (invalid
	// bytes become U+FFFD).
	var out string
	if err := json.Unmarshal(p.buf[start-1:end+1], &out); err != nil {
		return nil, fmt.Errorf("invalid JSON string at offset %d: %w", start-1, err)
	}
	return []byte(out), nil
}

// number moves past the number at p.pos, checking its grammar (RFC 8259
// section 6): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() error {
	p.accept("-")
	if !p.accept("0") && !p.digits() {
		return p.errorf("invalid number")
	}
	if p.accept(".") && !p.digits() {
		return p.errorf("invalid number")
	}
	if p.accept("eE") {
		p.accept("+-")
		if !p.digits() {
			return p.errorf("invalid number")
		}
	}
	return nil
}

// accept moves past the next byte if it is one of set.
func (p *parser) accept(set string) bool {
	if p.pos < len(p.buf) && strings.IndexByte(set, p.buf[p.pos]) >= 0 {
		p.pos++
		return true
	}
	return false
}

// digits moves past a run of digits, reporting whether there was one.
func (p *parser) digits() bool {
	start := p.pos
	for p.pos < len(p.buf) && '0' <= p.buf[p.pos] && p.buf[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

// skip checks the value at p.pos and moves past it, depth being how deep
// it is nested. It keeps a stack of the open containers rather than
// recursing: most of a plan is skipped.
func (p *parser) skip(depth int) error {
	var buf [64]byte
	open := buf[:0] // '{' or '[' for each open container
	for {
		closed, err := p.skipScalarOrOpen(&open, depth)
		if err != nil {
			return err
		}
		if !closed {
			continue // a container opened: its first member or element
		}
		if err := p.skipClosers(&open); err != nil || len(open) == 0 {
			return err
		}
	}
}

// skipScalarOrOpen moves past a scalar (closed: true) or past the opening
// of a container, pushing it on open, and its first key when it is an
// object (closed: false); an empty container is moved past whole.
func (p *parser) skipScalarOrOpen(open *[]byte, depth int) (closed bool, err error) {
	switch c := p.peek(); c {
	case '"':
		_, _, _, err := p.scanString()
		return true, err
	case '{', '[':
		if depth+len(*open) >= maxDepth {
			return false, p.errorf("nested too deeply")
		}
		p.pos++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if p.peek() == end {
			p.pos++
			return true, nil
		}
		*open = append(*open, c)
		if c == '{' {
			return false, p.skipKey()
		}
		return false, nil
	case 't':
		return true, p.literal("true")
	case 'f':
		return true, p.literal("false")
	case 'n':
		return true, p.literal("null")
	case 0:
		return false, p.errorf("unexpected end")
	}
	return true, p.number()
}

// skipKey moves past an object key and its colon.
func (p *parser) skipKey() error {
	if p.peek() != '"' {
		return p.errorf("object key is not a string")
	}
	if _, _, _, err := p.scanString(); err != nil {
		return err
	}
	return p.expect(':')
}

// skipClosers moves past the closing brackets after a value, up to the
// comma (and, in an object, the key) before the next value, or until no
// container is open.
func (p *parser) skipClosers(open *[]byte) error {
	for len(*open) > 0 {
		top := (*open)[len(*open)-1]
		switch c := p.peek(); {
		case c == ',':
			p.pos++
			if top == '{' {
				return p.skipKey()
			}
			return nil
		case c == '}' && top == '{', c == ']' && top == '[':
			p.pos++
			*open = (*open)[:len(*open)-1]
		case top == '{':
			return p.errorf("want ',' or '}' in an object")
		default:
			return p.errorf("want ',' or ']' in an array")
		}
	}
	return nil
}

var (
	trueText  = []byte("true")
	falseText = []byte("false")
)

func (p *parser) newNode(k kind, str []byte, start int) *node {
	n := &p.nodes.alloc(1)[0]
	n.kind, n.str, n.raw = k, str, p.buf[start:p.pos]
	return n
}

// value decodes the value at p.pos.
func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	c := p.peek()
	start := p.pos
	switch c {
	case '"':
		s, err := p.stringValue()
		return p.newNode(kindString, s, start), err
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case 't':
		err := p.literal("true")
		return p.newNode(kindBool, trueText, start), err
	case 'f':
		err := p.literal("false")
		return p.newNode(kindBool, falseText, start), err
	case 'n':
		err := p.literal("null")
		return p.newNode(kindNull, nil, start), err
	case 0:
		return nil, p.errorf("unexpected end")
	}
	if err := p.number(); err != nil {
		return nil, err
	}
	return p.newNode(kindNumber, p.buf[start:p.pos], start), nil
}

func (p *parser) array(depth int) (*node, error) {
	start, mark := p.pos, len(p.kids)
	err := p.elements(func() error {
		v, err := p.value(depth + 1)
		p.kids = append(p.kids, v)
		return err
	})
	if err != nil {
		p.kids = p.kids[:mark]
		return nil, err
	}
	n := p.newNode(kindArray, nil, start)
	n.kids = p.ptrs.alloc(len(p.kids) - mark)
	copy(n.kids, p.kids[mark:])
	p.kids = p.kids[:mark]
	return n, nil
}

func (p *parser) object(depth int) (*node, error) {
	start, kidsMark, keysMark := p.pos, len(p.kids), len(p.keys)
	err := p.members(func(key []byte) error {
		v, err := p.value(depth + 1)
		p.keys = append(p.keys, key)
		p.kids = append(p.kids, v)
		return err
	})
	if err != nil {
		p.kids, p.keys = p.kids[:kidsMark], p.keys[:keysMark]
		return nil, err
	}
	n := p.newNode(kindObject, nil, start)
	count := len(p.kids) - kidsMark
	n.kids = p.ptrs.alloc(count)
	n.keys = p.strs.alloc(count)
	copy(n.kids, p.kids[kidsMark:])
	copy(n.keys, p.keys[keysMark:])
	p.kids, p.keys = p.kids[:kidsMark], p.keys[:keysMark]
	if !strictlySorted(n.keys) {
		sortMembers(n)
		p.ambiguous = p.ambiguous || len(n.keys) < count
	}
	return n, nil
}

// strictlySorted reports whether keys are in increasing order, none
// repeated.
func strictlySorted(keys [][]byte) bool {
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			return false
		}
	}
	return true
}

// sortMembers sorts an object's members by key, keeping the last of
// duplicate keys.
func sortMembers(n *node) {
	idx := make([]int, len(n.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(n.keys[a], n.keys[b]) })
	keys := make([][]byte, 0, len(idx))
	kids := make([]*node, 0, len(idx))
	for j, i := range idx {
		if j+1 < len(idx) && bytes.Equal(n.keys[idx[j+1]], n.keys[i]) {
			continue
		}
		keys = append(keys, n.keys[i])
		kids = append(kids, n.kids[i])
	}
	n.keys, n.kids = keys, kids
}

// parseDocument decodes a whole JSON document held in a string, and
// reports whether JSON readers could read it differently (see
// parser.ambiguous).
func parseDocument(s string) (v *node, ambiguous bool, err error) {
	p := newStringParser(s)
	if v, err = p.value(0); err != nil {
		return nil, false, err
	}
	return v, p.ambiguous, p.end()
}
