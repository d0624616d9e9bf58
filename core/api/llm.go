package api

import (
	"encoding/json"
	"time"
)

// The LLM protocol (docs/ABI.md §6): the engine never calls a model
// itself. A call that needs one (query with "llm", curateFrom) answers
// Pending with the request to make; the host makes it and sends the answer
// back with "resume". The shapes are provider-neutral: every host maps
// OpenAI's and Anthropic's formats onto them.

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

// LLMRequest is the "llm" object of a pending result: one model call the host
// is asked to make.
type LLMRequest struct {
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

// LLMResponse is the model's answer, as the host hands it to "resume".
type LLMResponse struct {
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	// Model is the model that answered, when the provider says.
	Model string `json:"model,omitempty"`
	// LatencyMs is how long the host waited for the answer.
	LatencyMs float64 `json:"latency_ms"`
}

// Error codes a host reports in place of an LLMResponse (LLMError.Code).
const (
	LLMTimeout   = "timeout"    // the provider did not answer in time
	LLMRateLimit = "rate_limit" // 429 after the host's retries
	LLMAuth      = "auth"       // a missing or refused key
	LLMHTTP      = "http"       // another HTTP failure after retries
	LLMInvalid   = "invalid"    // an answer that could not be decoded
	LLMCancelled = "cancelled"  // the host or user gave up
)

// LLMError is a failed model call, as the host hands it to "resume".
type LLMError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Pending is the result of a call that needs the model (status "pending").
// The host makes the LLMRequest and answers with ResumeParams; until then the
// engine keeps serving other calls.
type Pending struct {
	Status       string     `json:"status"` // always "pending"
	Continuation string     `json:"continuation"`
	Step         int        `json:"step"`
	LLM          LLMRequest `json:"llm"`
}

// Error makes a failed call an error, so that a host's model client can
// return one and the host's driver pass its code on to "resume" as it is.
func (e *LLMError) Error() string { return "llm: " + e.Code + ": " + e.Message }

// ResumeParams are the parameters of "resume": exactly one of Response and
// Error is set.
type ResumeParams struct {
	Continuation string       `json:"continuation"`
	Response     *LLMResponse `json:"response,omitempty"`
	Error        *LLMError    `json:"error,omitempty"`
}

// CancelParams are the parameters of "cancel".
type CancelParams struct {
	Continuation string `json:"continuation"`
}

// CancelResult is the answer of "cancel".
type CancelResult struct {
	Cancelled bool `json:"cancelled"`
	// Steps is how many model calls the call had asked for.
	Steps int `json:"steps"`
}

// Defaults of the LLM protocol (docs/ABI.md §6.5); LLMOptions changes them.
const (
	// DefaultContinuationTTL is how long a continuation waits for its
	// resume: long enough for a slow local model, short enough that a host
	// that crashed or forgot does not pin memory for long.
	DefaultContinuationTTL = 10 * time.Minute
	// DefaultMaxContinuations bounds the calls that may wait on a model at
	// once (each holds a conversation in memory).
	DefaultMaxContinuations = 16
	// DefaultQueryTokenBudget bounds the tokens (in + out, all steps) of one
	// query: a tier-3 call costs a few thousand, a long tier-4 loop tens of
	// thousands.
	DefaultQueryTokenBudget = 60000
	// DefaultCurateTokenBudget bounds one curateFrom: the material (up to
	// 200,000 characters) may be read twice by pre-compaction.
	DefaultCurateTokenBudget = 250000
	// DefaultMaxIterations bounds the model calls of one query or
	// curateFrom; MaxIterations is the most a call may ask for.
	DefaultMaxIterations = 50
	MaxIterations        = 50
	// DefaultTier3MinScore is θ_med of the paper's Algorithm 1: below this
	// top ŝ (a raw BM25 score of 1, "weak") the prefetched entries are
	// unlikely to hold the answer, so the query goes to the agentic loop
	// directly instead of spending a tier-3 call first.
	DefaultTier3MinScore = 0.5
)

// LLMOptions are the "llm" open parameters (docs/ABI.md §6.5). Zero fields
// keep their defaults, given after each.
type LLMOptions struct {
	// ContinuationSeconds is how long a continuation waits for "resume"
	// (DefaultContinuationTTL).
	ContinuationSeconds float64 `json:"continuationSeconds,omitempty"`
	// MaxContinuations bounds the continuations alive at once
	// (DefaultMaxContinuations).
	MaxContinuations int `json:"maxContinuations,omitempty"`
	// TokenBudget is the default token budget of a query
	// (DefaultQueryTokenBudget); CurateTokenBudget that of a curateFrom
	// (DefaultCurateTokenBudget).
	TokenBudget       int `json:"tokenBudget,omitempty"`
	CurateTokenBudget int `json:"curateTokenBudget,omitempty"`
	// MaxIterations bounds the model calls of an agentic loop, at most
	// MaxIterations (DefaultMaxIterations).
	MaxIterations int `json:"maxIterations,omitempty"`
	// Tier3MinScore is the top ŝ from which a query tries tier 3 before
	// tier 4 (DefaultTier3MinScore).
	Tier3MinScore float64 `json:"tier3MinScore,omitempty"`
}

// Validate reports the first option out of range, as an *Error with
// CodeInvalidParams.
func (o LLMOptions) Validate() error {
	switch {
	case o.ContinuationSeconds < 0 || o.MaxContinuations < 0 || o.TokenBudget < 0 || o.CurateTokenBudget < 0 || o.MaxIterations < 0:
		return Errorf(CodeInvalidParams, "llm: values must not be negative")
	case o.MaxIterations > MaxIterations:
		return Errorf(CodeInvalidParams, "llm: maxIterations %d: at most %d", o.MaxIterations, MaxIterations)
	case o.Tier3MinScore < 0 || o.Tier3MinScore >= 1:
		return Errorf(CodeInvalidParams, "llm: tier3MinScore %v: want 0 to 1", o.Tier3MinScore)
	}
	return nil
}

// WithDefaults returns o with every zero field set to its default.
func (o LLMOptions) WithDefaults() LLMOptions {
	if o.ContinuationSeconds == 0 {
		o.ContinuationSeconds = DefaultContinuationTTL.Seconds()
	}
	if o.MaxContinuations == 0 {
		o.MaxContinuations = DefaultMaxContinuations
	}
	if o.TokenBudget == 0 {
		o.TokenBudget = DefaultQueryTokenBudget
	}
	if o.CurateTokenBudget == 0 {
		o.CurateTokenBudget = DefaultCurateTokenBudget
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	if o.Tier3MinScore == 0 {
		o.Tier3MinScore = DefaultTier3MinScore
	}
	return o
}

// LLMTrace is the "llm" object of a final result: every model call the
// result took, and the tokens spent.
type LLMTrace struct {
	Steps        []LLMStep `json:"steps"`
	InputTokens  int       `json:"inputTokens"`
	OutputTokens int       `json:"outputTokens"`
	// Estimated is set when a host reported no usage for some step and
	// the engine counted ~4 characters a token instead.
	Estimated bool `json:"estimated,omitempty"`
}

// LLMStep is one model call.
type LLMStep struct {
	Step int `json:"step"`
	// Purpose is what the call was for: tier3, tier4, compact1, compact2,
	// curate.
	Purpose      string  `json:"purpose"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	LatencyMs    float64 `json:"latencyMs"`
	Model        string  `json:"model,omitempty"`
	// ToolCalls names the tools the model called in this step.
	ToolCalls []string `json:"toolCalls,omitempty"`
	// Error is the host's error code and message when the call failed.
	Error string `json:"error,omitempty"`
}
