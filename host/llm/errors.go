package llm

import (
	"fmt"

	"github.com/arbormem/arbor/core/api"
)

// Error is a failed model call. Code is one of core/llm's error codes
// (api.LLMTimeout, api.LLMRateLimit, api.LLMAuth, api.LLMHTTP,
// api.LLMInvalid, api.LLMCancelled), what a driver passes on to "resume":
// errors.As finds it as a *api.LLMError too (see As), which is how
// host/runtime's driver reads it.
type Error struct {
	Code string
	// Provider names the provider ("openai", "anthropic", …).
	Provider string
	// Status is the last HTTP status, 0 when there was no answer.
	Status int
	// Attempts counts the HTTP requests made, retries included.
	Attempts int
	// Message says what went wrong, in words a user can act on. It never
	// holds a key.
	Message string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Provider, e.Message)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Wire returns the error as "resume" takes it.
func (e *Error) Wire() api.LLMError {
	return api.LLMError{Code: e.Code, Message: e.Error()}
}

// As lets errors.As find the wire error in an *Error: a driver that looks
// for a *api.LLMError (core/llm) gets this error's code and message.
func (e *Error) As(target any) bool {
	t, ok := target.(**api.LLMError)
	if ok {
		w := e.Wire()
		*t = &w
	}
	return ok
}
