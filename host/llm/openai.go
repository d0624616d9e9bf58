package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// openAIFormat speaks chat completions, as OpenAI and the servers that
// copy its API (OpenRouter, Groq, Ollama, LM Studio, vLLM) do.
type openAIFormat struct {
	// maxCompletionTokens sends max_completion_tokens, which OpenAI's own
	// API wants (newer models refuse max_tokens); other servers know only
	// max_tokens.
	maxCompletionTokens bool
}

type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	Tools               []oaTool    `json:"tools,omitempty"`
	MaxTokens           int         `json:"max_tokens,omitempty"`
	MaxCompletionTokens int         `json:"max_completion_tokens,omitempty"`
	Temperature         float64     `json:"temperature"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is null on an assistant turn that only calls tools.
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is JSON text in a string; some servers send the
		// object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			// Content is a string, null, or (from some proxies) a list of
			// parts.
			Content   json.RawMessage `json:"content"`
			ToolCalls []oaToolCall    `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *oaError `json:"error"`
}

type oaError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (openAIFormat) endpoint(base string) string { return base + "/chat/completions" }

func (openAIFormat) header(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

func (f openAIFormat) encode(model string, req api.LLMRequest) ([]byte, error) {
	r := oaRequest{Model: model, Temperature: req.Temperature}
	if f.maxCompletionTokens {
		r.MaxCompletionTokens = req.MaxTokens
	} else {
		r.MaxTokens = req.MaxTokens
	}
	for _, m := range req.Messages {
		om := oaMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			om.Content = &m.Content
		}
		for _, tc := range m.ToolCalls {
			var oc oaToolCall
			oc.ID, oc.Type = tc.ID, "function"
			oc.Function.Name = tc.Name
			// Arguments travel as a JSON string, malformed or not.
			oc.Function.Arguments, _ = json.Marshal(tc.Arguments)
			om.ToolCalls = append(om.ToolCalls, oc)
		}
		r.Messages = append(r.Messages, om)
	}
	for _, t := range req.Tools {
		var ot oaTool
		ot.Type = "function"
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, t.Parameters
		r.Tools = append(r.Tools, ot)
	}
	return json.Marshal(r)
}

func (openAIFormat) decode(body []byte) (api.LLMResponse, error) {
	var r oaResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return api.LLMResponse{}, err
	}
	if r.Error != nil {
		// OpenRouter reports some failures with status 200.
		return api.LLMResponse{}, r.Error.asError()
	}
	if len(r.Choices) == 0 {
		return api.LLMResponse{}, &Error{Code: api.LLMInvalid, Message: "the answer has no choices: " + snippet(body)}
	}
	msg := r.Choices[0].Message
	text, err := contentText(msg.Content)
	if err != nil {
		return api.LLMResponse{}, err
	}
	resp := api.LLMResponse{Model: r.Model, Content: text}
	if r.Usage != nil {
		resp.Usage = api.Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
	}
	for i, tc := range msg.ToolCalls {
		id := tc.ID
		if id == "" {
			// Some local servers leave it out; the engine needs one to
			// pair the answer with the call.
			id = fmt.Sprintf("call_%d", i)
		}
		resp.ToolCalls = append(resp.ToolCalls, api.ToolCall{ID: id, Name: tc.Function.Name, Arguments: argumentsText(tc.Function.Arguments)})
	}
	if resp.Content == "" && len(resp.ToolCalls) == 0 {
		return api.LLMResponse{}, &Error{Code: api.LLMInvalid, Message: fmt.Sprintf("the answer has neither content nor tool calls (finish reason %q)", r.Choices[0].FinishReason)}
	}
	return resp, nil
}

// contentText reads a message's content: a string, null, or a list of
// parts whose text parts are joined.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct{ Type, Text string }
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor a list of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// argumentsText returns a tool call's arguments as the model wrote them: the
// string's text, or the raw JSON when a server sent an object.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func (e *oaError) asError() *Error {
	code := strings.Trim(string(e.Code), `"`)
	out := &Error{Code: api.LLMHTTP, Message: e.Message}
	switch {
	case code == "401" || code == "403" || e.Type == "invalid_api_key" || code == "invalid_api_key":
		out.Code = api.LLMAuth
	case code == "429" || code == "rate_limit_exceeded":
		out.Code = api.LLMRateLimit
	}
	if out.Message == "" {
		out.Message = "the provider reported an error without a message"
	}
	return out
}

func (openAIFormat) errorMessage(body []byte) string {
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Error) == 0 {
		return ""
	}
	var e oaError
	if json.Unmarshal(r.Error, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(r.Error, &s) == nil {
		return s // Ollama: {"error": "model not found"}
	}
	return ""
}
