package sshd

import (
	"io"

	"github.com/switchtender/switchtender/screentext"
)

// safeWriter passes a stream through screentext (as Text), holding back an
// incomplete UTF-8 sequence at the end of a write until the next one
// completes it. It is the net under every plain command's output: the
// values in a sentence are escaped as units (screentext.Field) before it.
type safeWriter struct {
	w  io.Writer
	st screentext.Stream
}

func newSafeWriter(w io.Writer) *safeWriter { return &safeWriter{w: w} }

func (s *safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, s.st.Write(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what was held back (escaped, being incomplete).
func (s *safeWriter) Flush() error {
	_, err := io.WriteString(s.w, s.st.Flush())
	return err
}

// jsonSafe escapes, inside encoding/json's output, the hidden characters it
// leaves as they are (screentext.JSON): as \uNNNN, which keeps the JSON
// valid and the value the same.
func jsonSafe(b []byte) []byte { return screentext.JSON(b) }
