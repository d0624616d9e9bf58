package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// anthropicVersion is the Messages API version the client speaks.
const anthropicVersion = "2023-06-01"

// anthropicFormat speaks Anthropic's Messages API: the system prompt is a
// field of its own, turns alternate between user and assistant, and tool
// calls and their results are content blocks.
type anthropicFormat struct{}

type anRequest struct {
	Model       string      `json:"model"`
	System      string      `json:"system,omitempty"`
	Messages    []anMessage `json:"messages"`
	Tools       []anTool    `json:"tools,omitempty"`
	MaxTokens   int         `json:"max_tokens"`
	Temperature float64     `json:"temperature"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anResponse struct {
	Type       string    `json:"type"`
	Model      string    `json:"model"`
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (anthropicFormat) endpoint(base string) string { return base + "/v1/messages" }

func (anthropicFormat) header(h http.Header, key string) {
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	h.Set("Anthropic-Version", anthropicVersion)
}

// emptySchema stands in for a tool without parameters: Anthropic requires
// an input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (anthropicFormat) encode(model string, req api.LLMRequest) ([]byte, error) {
	r := anRequest{Model: model, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	var system []string
	for _, m := range req.Messages {
		var role string
		var blocks []anBlock
		switch m.Role {
		case api.RoleSystem:
			system = append(system, m.Content)
			continue
		case api.RoleTool:
			role = "user"
			blocks = []anBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
		case api.RoleAssistant:
			role = "assistant"
			if m.Content != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
			}
		case api.RoleUser:
			role = "user"
			blocks = []anBlock{{Type: "text", Text: m.Content}}
		default:
			return nil, fmt.Errorf("message role %q is not one of system, user, assistant, tool", m.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		// Turns must alternate: a tool's results and the user's next words
		// are one user turn.
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
			continue
		}
		r.Messages = append(r.Messages, anMessage{Role: role, Content: blocks})
	}
	r.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = emptySchema
		}
		r.Tools = append(r.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return json.Marshal(r)
}

// toolInput is a tool call's arguments as Anthropic takes them: a JSON
// object. Arguments that are not one (a malformed call the engine already
// answered with an error) are replayed as an empty object, since the API
// refuses anything else and the error message in the next turn tells the
// model what went wrong.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

func (anthropicFormat) decode(body []byte) (api.LLMResponse, error) {
	var r anResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return api.LLMResponse{}, err
	}
	if r.Error != nil {
		return api.LLMResponse{}, &Error{Code: api.LLMHTTP, Message: r.Error.Type + ": " + r.Error.Message}
	}
	if r.Type != "message" {
		return api.LLMResponse{}, &Error{Code: api.LLMInvalid, Message: "the answer is not a message: " + snippet(body)}
	}
	resp := api.LLMResponse{
		Model: r.Model,
		Usage: api.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens},
	}
	var text []string
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, api.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	resp.Content = strings.Join(text, "")
	if resp.Content == "" && len(resp.ToolCalls) == 0 {
		return api.LLMResponse{}, &Error{Code: api.LLMInvalid, Message: fmt.Sprintf("the answer has neither text nor tool calls (stop reason %q)", r.StopReason)}
	}
	return resp, nil
}

func (anthropicFormat) errorMessage(body []byte) string {
	var r anResponse
	if json.Unmarshal(body, &r) != nil || r.Error == nil {
		return ""
	}
	return r.Error.Type + ": " + r.Error.Message
}
