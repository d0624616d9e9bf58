package engine

import (
	"errors"
	"fmt"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/tree"
)

// Error codes that cross the ABI (docs/ABI.md §3).
const (
	CodeInvalidJSON    = "invalid_json"
	CodeInvalidRequest = "invalid_request"
	CodeUnknownMethod  = "unknown_method"
	CodeInvalidParams  = "invalid_params"
	CodeNotOpen        = "not_open"
	CodeInvalidPath    = "invalid_path"
	CodeNotFound       = "not_found"
	CodeMalformed      = "malformed"
	CodeIO             = "io"
	CodeInternal       = "internal"
)

// Error is the one error type that crosses the ABI: a stable code to
// branch on and a message for people.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// asError classifies any error into an *Error.
func asError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, tree.ErrInvalidPath), errors.Is(err, host.ErrInvalid), errors.Is(err, host.ErrDenied):
		return &Error{Code: CodeInvalidPath, Message: err.Error()}
	case errors.Is(err, host.ErrNotFound):
		return &Error{Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, host.ErrIO):
		return &Error{Code: CodeIO, Message: err.Error()}
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}
