package screentext

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Stream escapes text that arrives in pieces (a run log as its chunks
// come) as Text does, holding back an incomplete UTF-8 sequence at the end
// of a piece until the next one completes it. The zero Stream is ready.
type Stream struct {
	carry []byte
}

// Write returns Text of p after what was held back, minus an incomplete
// UTF-8 sequence at its end, which it holds back.
func (s *Stream) Write(p []byte) string {
	buf := p
	if len(s.carry) > 0 {
		buf = append(s.carry, p...)
	}
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	s.carry = append(s.carry[:0:0], buf[cut:]...)
	return Text(string(buf[:cut]))
}

// Flush returns what was held back, escaped (being incomplete, as bytes
// that are not UTF-8), and forgets it.
func (s *Stream) Flush() string {
	out := Text(string(s.carry))
	s.carry = nil
	return out
}

// JSON escapes, in encoding/json's output, the hidden characters it leaves
// as they are (DEL, C1 controls, bidirectional controls, default-ignorable
// code points) as \uNNNN (a surrogate pair above U+FFFF), which keeps the
// JSON valid and every value the same. The JSON's own whitespace (newline,
// tab, carriage return) stays; encoding/json escapes those inside strings.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf && b[i] != 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	out := append(make([]byte, 0, len(b)+16), b[:i]...)
	for _, r := range string(b[i:]) {
		if !Hidden(r) || r == '\n' || r == '\t' || r == '\r' {
			out = utf8.AppendRune(out, r)
			continue
		}
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			out = appendU(appendU(out, hi), lo)
			continue
		}
		out = appendU(out, r)
	}
	return out
}

func appendU(out []byte, r rune) []byte {
	out = append(out, `\u`...)
	h := strconv.FormatInt(int64(r), 16)
	for range 4 - len(h) {
		out = append(out, '0')
	}
	return append(out, h...)
}
