// Package llmtest is a scripted model server for tests: an HTTP server on
// 127.0.0.1 that answers OpenAI-compatible chat completions
// (…/chat/completions) and Anthropic messages (…/v1/messages) from a
// script of steps, one step per request, and records every request it
// receives. No model is involved: tests decide each answer, including the
// failures (HTTP errors, Retry-After, garbage bodies, delays) a real
// client has to survive.
//
// The script format is shared with the Node server of the JS tests
// (tests/llm/scripted-server.mjs): a JSON array of steps,
//
//	[{"reply": {"content": "…", "tool_calls": [{"id": "c1", "name": "read_entry", "arguments": {"path": "a/b/c.md"}}],
//	            "usage": {"input_tokens": 120, "output_tokens": 40}}},
//	 {"status": 429, "retry_after": "2"},
//	 {"status": 500, "message": "upstream failed"},
//	 {"raw": "<html>bad gateway</html>"},
//	 {"delay_ms": 5000, "reply": {"content": "late"}}]
//
// A step is a reply (content and/or tool calls, rendered in the shape of
// the endpoint that was called), or an HTTP status with the provider's
// error body (and a Retry-After header when retry_after is set), or a raw
// body sent as it is (status 200 unless given); delay_ms waits first. A
// tool call's arguments are a JSON string, sent as it is (malformed on
// purpose if the test wants), or any other JSON value, sent as its compact
// text. CORS preflights are answered (allowing any origin) and not recorded.
// When the script runs out the server answers 418 with a message saying
// so, which clients do not retry.
//
// It also answers OpenAI-compatible embeddings (…/embeddings) with
// deterministic vectors: each input's hashed bag of words
// (core/host.HashedWords) in 64 dimensions, model "hashed-bow" — what the
// Node server answers too, so that a fixture ranks alike in every host.
// Embedding requests take their own script (PushEmbed), whose steps are
// those above without reply,
// plus "dims" (answer the hashed vectors in that many dimensions); when it
// runs out they get the hashed vectors.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/arbormem/arbor/core/host"
)

// Step is one scripted answer.
type Step struct {
	Reply *Reply `json:"reply,omitempty"`
	// Status is the HTTP status to answer with; with neither Raw nor
	// Reply it comes with the provider's error body saying Message.
	Status     int    `json:"status,omitempty"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	// Raw is a body sent as it is.
	Raw *string `json:"raw,omitempty"`
	// DelayMs delays the answer (ended early when the client goes away).
	DelayMs int `json:"delay_ms,omitempty"`
	// Dims, in an embedding step, answers the hashed vectors in this many
	// dimensions.
	Dims int `json:"dims,omitempty"`
}

// Reply is a model's answer.
type Reply struct {
	Content   string     `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"`
	Model     string     `json:"model,omitempty"`
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments: a JSON string is sent as its text, any other value as
	// its JSON.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is a reply's token counts.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Request is one request the server received.
type Request struct {
	// Step is the index of the step that answered it (-1: none, the key
	// was refused or the script had run out).
	Step   int
	Path   string
	Header http.Header
	Body   []byte
}

// Decode unmarshals the request's JSON body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Server is a running scripted server.
type Server struct {
	// URL is the server's root, http://127.0.0.1:PORT. An OpenAI-style
	// client takes URL+"/v1" as its base, an Anthropic one URL.
	URL string

	srv *httptest.Server
	mu  sync.Mutex
	// steps are the script; next is the step the next request gets.
	steps    []Step
	next     int
	embed    []Step // the embedding requests' script, consumed from the front
	key      string
	requests []Request
}

// ParseScript reads a script: a JSON array of steps. Unknown fields are
// refused, so a misspelt step does not silently become an empty one.
func ParseScript(data []byte) ([]Step, error) {
	var steps []Step
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&steps); err != nil {
		return nil, fmt.Errorf("llmtest: script: %w", err)
	}
	for i, s := range steps {
		if s.Reply == nil && s.Status == 0 && s.Raw == nil {
			return nil, fmt.Errorf("llmtest: script step %d has no reply, status or raw body", i)
		}
	}
	return steps, nil
}

// LoadScript reads a script file.
func LoadScript(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	return ParseScript(data)
}

// New starts a server on 127.0.0.1 with a free port, answering from steps.
// Close it when done.
func New(steps []Step) *Server {
	s := &Server{steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server, ending delayed answers.
func (s *Server) Close() { s.srv.Close() }

// RequireKey makes the server refuse with 401 (without using a step) any
// request whose key (Authorization: Bearer, or x-api-key) is not key.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// PushEmbed appends steps to the script of embedding requests.
func (s *Server) PushEmbed(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embed = append(s.embed, steps...)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining counts the steps not used yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps) - s.next
}

// take records a request and picks its step (-1: none).
func (s *Server) take(r *http.Request, body []byte) (int, Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Step: -1, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	defer func() { s.requests = append(s.requests, req) }()
	if s.key != "" && requestKey(r) != s.key {
		return -1, Step{Status: http.StatusUnauthorized, Message: "invalid x-api-key or bearer token"}, true
	}
	if s.next >= len(s.steps) {
		return -1, Step{}, false
	}
	req.Step = s.next
	s.next++
	return req.Step, s.steps[req.Step], true
}

func requestKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Pages on another origin may call it, as they call the Node twin. The
	// preflight's headers are echoed rather than allowed with "*", which the
	// Fetch standard says does not cover Authorization.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		allow := r.Header.Get("Access-Control-Request-Headers")
		if allow == "" {
			allow = "*"
		}
		w.Header().Set("Access-Control-Allow-Headers", allow)
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/embeddings") {
		s.serveEmbed(w, r, body.Bytes())
		return
	}
	anthropic := strings.HasSuffix(r.URL.Path, "/messages")
	if r.Method != http.MethodPost || !(anthropic || strings.HasSuffix(r.URL.Path, "/chat/completions")) {
		http.Error(w, "llmtest: POST …/chat/completions or …/v1/messages", http.StatusNotFound)
		return
	}
	i, step, ok := s.take(r, body.Bytes())
	if !ok {
		step = Step{Status: http.StatusTeapot, Message: fmt.Sprintf("llmtest: the script has run out (request %d)", len(s.Requests()))}
	}
	status, ok := prelude(w, r, step)
	if !ok {
		return
	}
	var out []byte
	switch {
	case step.Raw != nil:
		out = []byte(*step.Raw)
	case step.Reply != nil:
		out = render(step.Reply, i, anthropic)
	default:
		out = errorBody(status, step.Message, anthropic)
	}
	w.WriteHeader(status)
	w.Write(out)
}

// arguments returns a scripted call's arguments as JSON text.
func (tc ToolCall) arguments() string {
	var s string
	if json.Unmarshal(tc.Arguments, &s) == nil {
		return s
	}
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	// Compact, as the Node server's JSON.stringify writes it.
	var b bytes.Buffer
	if json.Compact(&b, tc.Arguments) != nil {
		return string(tc.Arguments)
	}
	return b.String()
}

func (tc ToolCall) id(step, i int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", step, i)
}

func render(rep *Reply, step int, anthropic bool) []byte {
	model := rep.Model
	if model == "" {
		model = "scripted"
	}
	usage := Usage{}
	if rep.Usage != nil {
		usage = *rep.Usage
	}
	if anthropic {
		content := []map[string]any{}
		if rep.Content != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.Content})
		}
		for i, tc := range rep.ToolCalls {
			args := tc.arguments()
			var input any = json.RawMessage(args)
			if !json.Valid([]byte(args)) {
				input = args
			}
			content = append(content, map[string]any{"type": "tool_use", "id": tc.id(step, i), "name": tc.Name, "input": input})
		}
		stop := "end_turn"
		if len(rep.ToolCalls) > 0 {
			stop = "tool_use"
		}
		return mustJSON(map[string]any{
			"id": fmt.Sprintf("msg_%d", step), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop,
			"usage": map[string]int{"input_tokens": usage.InputTokens, "output_tokens": usage.OutputTokens},
		})
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if rep.Content != "" {
		msg["content"] = rep.Content
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		calls := []map[string]any{}
		for i, tc := range rep.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.id(step, i), "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.arguments()}})
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	return mustJSON(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", step), "object": "chat.completion", "model": model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]int{"prompt_tokens": usage.InputTokens, "completion_tokens": usage.OutputTokens,
			"total_tokens": usage.InputTokens + usage.OutputTokens},
	})
}

// errorBody is the provider's error body for status.
func errorBody(status int, msg string, anthropic bool) []byte {
	if msg == "" {
		msg = fmt.Sprintf("scripted HTTP %d", status)
	}
	kind := "api_error"
	switch status {
	case http.StatusUnauthorized:
		kind = "authentication_error"
	case http.StatusForbidden:
		kind = "permission_error"
	case http.StatusTooManyRequests:
		kind = "rate_limit_error"
	case 529:
		kind = "overloaded_error"
	case http.StatusBadRequest:
		kind = "invalid_request_error"
	}
	if anthropic {
		return mustJSON(map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}})
	}
	return mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": kind, "code": status}})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// serveEmbed answers an embedding request: its scripted step, or the
// hashed vectors.
func (s *Server) serveEmbed(w http.ResponseWriter, r *http.Request, body []byte) {
	s.mu.Lock()
	req := Request{Step: -1, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	step := Step{}
	if s.key != "" && requestKey(r) != s.key {
		step = Step{Status: http.StatusUnauthorized, Message: "invalid x-api-key or bearer token"}
	} else if len(s.embed) > 0 {
		step, s.embed = s.embed[0], s.embed[1:]
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	status, ok := prelude(w, r, step)
	if !ok {
		return
	}
	var out []byte
	switch {
	case step.Raw != nil:
		out = []byte(*step.Raw)
	case status != http.StatusOK:
		out = errorBody(status, step.Message, false)
	default:
		var in struct {
			Input []string `json:"input"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			status, out = http.StatusBadRequest, errorBody(http.StatusBadRequest, "llmtest: the body is not {\"input\": [strings]}", false)
			break
		}
		out = EmbedBody(in.Input, step.Dims)
	}
	w.WriteHeader(status)
	w.Write(out)
}

// EmbedBody is the server's answer to an embedding request of texts: their
// hashed bags of words in dims dimensions (64 when 0).
func EmbedBody(texts []string, dims int) []byte {
	data := make([]map[string]any, len(texts))
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": host.HashedWords(t, dims)}
	}
	return mustJSON(map[string]any{"object": "list", "model": "hashed-bow", "data": data,
		"usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0}})
}

// prelude waits out a step's delay (false when the client gave up first),
// sets its headers and returns its status.
func prelude(w http.ResponseWriter, r *http.Request, step Step) (int, bool) {
	if step.DelayMs > 0 {
		t := time.NewTimer(time.Duration(step.DelayMs) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return 0, false
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if step.RetryAfter != "" {
		w.Header().Set("Retry-After", step.RetryAfter)
	}
	if step.Status == 0 {
		return http.StatusOK, true
	}
	return step.Status, true
}
