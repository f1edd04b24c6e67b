package server

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// escapeRune reports whether a character must not reach a person's terminal
// as it is: C0 controls other than newline and tab, DEL, C1 controls (an
// 8-bit CSI can drive some terminals), and the bidirectional formatting
// characters that can make text read otherwise than it is (U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F, U+061C).
func escapeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// printable makes text from runs (log bytes, plan text, values, messages)
// safe to print on a person's terminal: the characters escapeRune names are
// written as \xNN (below U+0100) or \u{NNNN}, so a value cannot clear the
// screen, move the cursor, overwrite a line or reorder what it shows.
// Invalid UTF-8 bytes are written as \xNN too.
func printable(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		bad := (r == utf8.RuneError && n == 1) || escapeRune(r)
		if bad && out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, b[i])
		case bad && r < 0x100:
			out = fmt.Appendf(out, `\x%02x`, r)
		case bad:
			out = fmt.Appendf(out, `\u{%04x}`, r)
		case out != nil:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

// oneLine renders a value on one line: quoted (with Go escapes) when it
// holds anything but printable characters and spaces.
func oneLine(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) || escapeRune(r) {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// safeWriter passes a stream through printable, holding back an incomplete
// UTF-8 sequence at the end of a write until the next one completes it.
type safeWriter struct {
	w     io.Writer
	carry []byte
}

func newSafeWriter(w io.Writer) *safeWriter { return &safeWriter{w: w} }

func (s *safeWriter) Write(p []byte) (int, error) {
	buf := append(s.carry, p...)
	cut := len(buf)
	// Keep back at most 3 bytes that start a sequence not yet complete.
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-3; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	s.carry = append([]byte(nil), buf[cut:]...)
	if _, err := s.w.Write(printable(buf[:cut])); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what was held back (escaped, being incomplete).
func (s *safeWriter) Flush() error {
	if len(s.carry) == 0 {
		return nil
	}
	_, err := s.w.Write(printable(s.carry))
	s.carry = nil
	return err
}

// jsonSafe escapes, inside encoding/json's output, the characters it leaves
// as they are but a terminal would act on (DEL, C1 controls, bidirectional
// formatting): as \uNNNN, which keeps the JSON valid and the value the same.
func jsonSafe(b []byte) []byte {
	if !bytes.ContainsFunc(b, escapeRune) {
		return b
	}
	var out []byte
	for _, r := range string(b) {
		if escapeRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}
