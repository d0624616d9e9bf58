package api

import "fmt"

// Error codes of a response's error (docs/ABI.md §3 and §6). They are
// stable: hosts and users branch on them.
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
	// CodeBusy: another process held the memory root's lock for the
	// host's whole wait; the call changed nothing and may be retried.
	CodeBusy = "busy"
	// CodeReadOnly refuses a method that writes (curate, ingest,
	// curateFrom) on an engine opened with OpenParams.ReadOnly.
	CodeReadOnly = "read_only"

	// The LLM protocol's (docs/ABI.md §6).
	CodeUnknownContinuation = "unknown_continuation"
	CodeExpired             = "continuation_expired"
	CodeTooManyPending      = "too_many_pending"
)

// Error is the one error type that crosses the ABI: a stable code to
// branch on and a message for people.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
