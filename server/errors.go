package server

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchtender/switchtender/store"
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
	Code  string
	Msg   string
	Field string // the survey field a launch refusal is about, or ""
}

func (e *Error) Error() string { return e.Msg }

func errorf(code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// fieldErrorf is an ErrInvalid refusal about one survey field.
func fieldErrorf(field, format string, args ...any) error {
	return &Error{Code: ErrInvalid, Msg: fmt.Sprintf(format, args...), Field: field}
}

// ErrorCode returns err's code: an *Error's own, ErrConflict for a
// *store.TransitionError, or "internal" for anything else.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.As(err, new(*store.TransitionError)) {
		return ErrConflict
	}
	return "internal"
}

// UserMessage is what a person is told about err: an *Error's or a
// *store.TransitionError's sentence, or that the operator log has the detail.
func UserMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	var te *store.TransitionError
	if errors.As(err, &te) {
		return te.Error()
	}
	return "internal error (the operator log has the detail)"
}

func encodeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// coded gives a store error its code at the source: a missing run is
// ErrNotFound with the sentence every door shows; other errors pass as
// they are (an *Error keeps its code, anything else is internal).
func (s *Server) coded(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		var e *Error
		if !errors.As(err, &e) {
			return errorf(ErrNotFound, "no run %q; `runs` lists them", id)
		}
	}
	return err
}

// getRun is the store's GetRun with a coded not-found error.
func (s *Server) getRun(id string) (store.Run, error) {
	r, err := s.db.GetRun(id)
	return r, s.coded(id, err)
}
