package engine

import (
	"errors"
	"fmt"
	"strings"

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
	case errors.Is(err, host.ErrNoSpace):
		// Still the io code, which hosts branch on; the message says why
		// first, since the host's code carries no more than "no space".
		msg := err.Error()
		if !strings.Contains(msg, "the disk is full") {
			msg = "the disk is full: " + msg
		}
		return &api.Error{Code: api.CodeIO, Message: msg}
	case errors.Is(err, host.ErrIO):
		return &api.Error{Code: api.CodeIO, Message: err.Error()}
	}
	return &api.Error{Code: api.CodeInternal, Message: err.Error()}
}

// unsaved is the warning for a cache under .arbor (the index, the catalog,
// the vectors) that could not be saved. When the disk is full it says
// that what was answered stands: the tree was written, and the next open
// reads from it what the cache lacks.
func unsaved(what string, err error) string {
	if errors.Is(err, host.ErrNoSpace) {
		return fmt.Sprintf("%s not saved, the disk is full: the answers stand, and the next open reads from the tree what it lacks (%v)", what, err)
	}
	return fmt.Sprintf("%s: %v", what, err)
}
