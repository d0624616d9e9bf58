package engine

import (
	"errors"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// asError classifies any error into an *api.Error, the one error type
// that crosses the ABI.
func asError(err error) *api.Error {
	var e *api.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, host.ErrReadOnly):
		return &api.Error{Code: api.CodeReadOnly, Message: err.Error()}
	case errors.Is(err, api.ErrInvalidPath), errors.Is(err, host.ErrInvalid), errors.Is(err, host.ErrDenied):
		return &api.Error{Code: api.CodeInvalidPath, Message: err.Error()}
	case errors.Is(err, host.ErrNotFound):
		return &api.Error{Code: api.CodeNotFound, Message: err.Error()}
	case errors.Is(err, host.ErrBusy):
		return &api.Error{Code: api.CodeBusy, Message: err.Error()}
	case errors.Is(err, host.ErrIO):
		return &api.Error{Code: api.CodeIO, Message: err.Error()}
	}
	return &api.Error{Code: api.CodeInternal, Message: err.Error()}
}
