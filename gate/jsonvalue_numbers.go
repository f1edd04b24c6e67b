package gate

import "github.com/open-policy-agent/opa/v1/ast"

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// at reports whether the byte at p.pos is c.
func (p *valueParser) at(c byte) bool { return p.pos < len(p.buf) && p.buf[p.pos] == c }

// atDigit reports whether the byte at p.pos is a decimal digit.
func (p *valueParser) atDigit() bool { return p.pos < len(p.buf) && isDigit(p.buf[p.pos]) }

// digits moves past a run of decimal digits, possibly empty.
func (p *valueParser) digits() {
	for p.atDigit() {
		p.pos++
	}
}

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
	if p.at('-') {
		p.pos++
	}
	if err := p.integerPart(); err != nil {
		return nil, err
	}
	if err := p.fractionPart(); err != nil {
		return nil, err
	}
	if err := p.exponentPart(); err != nil {
		return nil, err
	}
	return p.buf[start:p.pos], nil
}

// integerPart reads 0|[1-9][0-9]*.
func (p *valueParser) integerPart() error {
	switch {
	case p.at('0'):
		p.pos++
	case p.atDigit():
		p.digits()
	default:
		return p.errorf("unexpected character, want a value")
	}
	return nil
}

// fractionPart reads (\.[0-9]+)?.
func (p *valueParser) fractionPart() error {
	if !p.at('.') {
		return nil
	}
	p.pos++
	if !p.atDigit() {
		return p.errorf("a number needs digits after its decimal point")
	}
	p.digits()
	return nil
}

// exponentPart reads ([eE][+-]?[0-9]+)?.
func (p *valueParser) exponentPart() error {
	if !p.at('e') && !p.at('E') {
		return nil
	}
	p.pos++
	if p.at('+') || p.at('-') {
		p.pos++
	}
	if !p.atDigit() {
		return p.errorf("a number needs digits in its exponent")
	}
	p.digits()
	return nil
}
