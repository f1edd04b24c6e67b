package server

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// printable makes text from runs (log bytes, plan text, values, messages)
// safe to print on a person's terminal: control characters other than
// newline and tab are written as \xNN, so a value cannot clear the screen,
// move the cursor or overwrite a line. Each byte is judged on its own, so
// chunks of a stream can be passed one by one.
func printable(b []byte) []byte {
	clean := true
	for _, c := range b {
		if isControl(c) {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for _, c := range b {
		if isControl(c) {
			out = fmt.Appendf(out, `\x%02x`, c)
			continue
		}
		out = append(out, c)
	}
	return out
}

func isControl(c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f
}

// oneLine renders a value on one line: quoted (with Go escapes) when it
// holds anything but printable characters and spaces.
func oneLine(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// safeWriter passes writes through printable.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(printable(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// printableString is printable for strings.
func printableString(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x80 && isControl(byte(r)) }) {
		return s
	}
	return string(printable([]byte(s)))
}
