// Package api is the vocabulary the control-node service (package server)
// and its front door (package server/sshd) share: who asks (Identity),
// coded refusals (Error), a launch as asked for, a run as commands show it
// (RunView and its JSON contract), the sentences both print, the SSH
// limits and the exit codes of SSH commands. It imports no project package
// but store, config and screentext.
package api

import (
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

// Errorf is a refusal with code and the formatted sentence.
func Errorf(code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// FieldErrorf is an ErrInvalid refusal about one survey field.
func FieldErrorf(field, format string, args ...any) error {
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

// Coded gives a store error about run id its code at the source: a
// missing run is ErrNotFound with the sentence every door shows; other
// errors pass as they are (an *Error keeps its code, anything else is
// internal).
func Coded(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		var e *Error
		if !errors.As(err, &e) {
			return Errorf(ErrNotFound, "no run %q; `runs` lists them", id)
		}
	}
	return err
}
