package sshd

import (
	"encoding/json"
	"fmt"
	"io"
)

// ErrorWire is a refusal as JSON, on stderr.
type ErrorWire struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	} `json:"error"`
}

// Error codes that are not an *api.Error's: malformed words and failures whose
// detail only the operator log has.
const (
	ErrCodeUsage    = "usage"
	errCodeInternal = "internal"
)

// writeJSONError writes a refusal as one JSON object line on w.
func writeJSONError(w io.Writer, code, msg, field string) {
	var e ErrorWire
	e.Error.Code, e.Error.Message, e.Error.Field = code, msg, field
	b, err := json.Marshal(e)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":{"code":%q,"message":"internal error"}}`, errCodeInternal))
	}
	if sw, ok := w.(*safeWriter); ok {
		sw.Flush()
		w = sw.w
	}
	w.Write(append(jsonSafe(b), '\n'))
}
