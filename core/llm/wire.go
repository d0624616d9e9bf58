// Package llm holds the wire types of the pending/resume protocol (DESIGN §6,
// docs/ABI.md §6): what the engine asks of a model when a call needs one, and
// what a host sends back. The engine never calls a model itself; every host
// (the Go host's providers, the JS adapters) speaks these shapes, so they are
// kept provider-neutral: OpenAI's and Anthropic's formats are both mapped
// onto them by the host.
package llm

import "encoding/json"

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of a conversation with the model.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant turn made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a tool turn to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is a model's request to run one tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the model's JSON text, kept as the model wrote it: it
	// may be malformed, and the engine answers that to the model rather
	// than failing the call.
	Arguments string `json:"arguments"`
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments object.
	Parameters json.RawMessage `json:"parameters"`
}

// Request is the "llm" object of a pending result: one model call the host
// is asked to make.
type Request struct {
	Messages    []Message `json:"messages"`
	Tools       []Tool    `json:"tools,omitempty"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature float64   `json:"temperature"`
}

// Usage counts the tokens of one model call, as the provider reported them.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is the model's answer, as the host hands it to "resume".
type Response struct {
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	// Model is the model that answered, when the provider says.
	Model string `json:"model,omitempty"`
	// LatencyMs is how long the host waited for the answer.
	LatencyMs float64 `json:"latency_ms"`
}

// Error codes a host reports in place of a Response.
const (
	ErrTimeout   = "timeout"    // the provider did not answer in time
	ErrRateLimit = "rate_limit" // 429 after the host's retries
	ErrAuth      = "auth"       // a missing or refused key
	ErrHTTP      = "http"       // another HTTP failure after retries
	ErrInvalid   = "invalid"    // an answer that could not be decoded
	ErrCancelled = "cancelled"  // the host or user gave up
)

// Error is a failed model call, as the host hands it to "resume".
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Pending is the result of a call that needs the model (status "pending").
// The host makes Request and answers with ResumeParams; until then the
// engine keeps serving other calls.
type Pending struct {
	Status       string  `json:"status"` // always "pending"
	Continuation string  `json:"continuation"`
	Step         int     `json:"step"`
	LLM          Request `json:"llm"`
}

// Error makes a failed call an error, so that a host's model client can
// return one and the host's driver pass its code on to "resume" as it is.
func (e *Error) Error() string { return "llm: " + e.Code + ": " + e.Message }

// ResumeParams are the parameters of "resume": exactly one of Response and
// Error is set.
type ResumeParams struct {
	Continuation string    `json:"continuation"`
	Response     *Response `json:"response,omitempty"`
	Error        *Error    `json:"error,omitempty"`
}

// CancelParams are the parameters of "cancel".
type CancelParams struct {
	Continuation string `json:"continuation"`
}
