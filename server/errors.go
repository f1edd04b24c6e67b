package server

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error codes a user sees. Anything that is not an *Error reaches a user as
// "internal error" and the operator log with its detail (WTF Dial's habit).
const (
	ErrInvalid   = "invalid"   // the request is malformed: a bad answer, an unknown template
	ErrForbidden = "forbidden" // the identity may not do this
	ErrNotFound  = "not_found" // no such run or template
	ErrConflict  = "conflict"  // the run is not in a state that allows this
)

// Error is a refusal with a sentence for the person who asked: what was
// wrong and what to do.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func errorf(code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// ErrorCode returns err's code, or "internal" when it is not an *Error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return "internal"
}

// UserMessage is what a person is told about err.
func UserMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return "internal error (the operator log has the detail)"
}

func encodeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
