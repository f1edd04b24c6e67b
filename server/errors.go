package server

import (
	"github.com/switchtender/switchtender/server/api"
	"github.com/switchtender/switchtender/store"
)

// Coded refusals are package api's ([api.Error]); these names keep
// package server's code as it reads.

// Error is a refusal with a sentence for the person who asked ([api.Error]).
type Error = api.Error

// Error codes a user sees ([api.ErrInvalid] and the others).
const (
	ErrInvalid   = api.ErrInvalid
	ErrForbidden = api.ErrForbidden
	ErrNotFound  = api.ErrNotFound
	ErrConflict  = api.ErrConflict
)

func errorf(code, format string, args ...any) error { return api.Errorf(code, format, args...) }

// fieldErrorf is an ErrInvalid refusal about one survey field.
func fieldErrorf(field, format string, args ...any) error {
	return api.FieldErrorf(field, format, args...)
}

// ErrorCode returns err's code ([api.ErrorCode]).
func ErrorCode(err error) string { return api.ErrorCode(err) }

// UserMessage is what a person is told about err ([api.UserMessage]).
func UserMessage(err error) string { return api.UserMessage(err) }

// coded gives a store error its code at the source ([api.Coded]).
func (s *Server) coded(id string, err error) error { return api.Coded(id, err) }

// getRun is the store's GetRun with a coded not-found error.
func (s *Server) getRun(id string) (store.Run, error) {
	r, err := s.db.GetRun(id)
	return r, s.coded(id, err)
}
