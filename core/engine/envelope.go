package engine

import (
	"encoding/json"

	"github.com/arbormem/arbor/core/api"
)

// request and response are the envelope of docs/ABI.md §3.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *api.Error      `json:"error,omitempty"`
}
