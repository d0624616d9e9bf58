package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/llm/llmtest"
)

const testKey = "sk-test-0123456789"

// sleeps records the client's waits instead of waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// client starts a scripted server and a client of the given provider on it.
func client(t *testing.T, provider string, steps []llmtest.Step, cfg hostllm.Config, opts ...hostllm.Option) (*hostllm.Client, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(steps)
	t.Cleanup(srv.Close)
	cfg.Provider = provider
	cfg.BaseURL = srv.URL + "/v1"
	if provider == "anthropic" {
		cfg.BaseURL = srv.URL
	}
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	if cfg.APIKey == "" {
		cfg.APIKey, cfg.KeySource = testKey, "TEST_KEY"
	}
	c, err := hostllm.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func script(t *testing.T, s string) []llmtest.Step {
	t.Helper()
	steps, err := llmtest.ParseScript([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// conversation is a tier-4 style request: a system prompt, the question, a
// turn that called a tool, the tool's answer, and the tools on offer.
var conversation = api.LLMRequest{
	Messages: []api.Message{
		{Role: api.RoleSystem, Content: "Answer only from the tree."},
		{Role: api.RoleUser, Content: "How often are invoices retried?"},
		{Role: api.RoleAssistant, ToolCalls: []api.ToolCall{{ID: "call_1", Name: "search_knowledge", Arguments: `{"query":"invoice retry"}`}}},
		{Role: api.RoleTool, ToolCallID: "call_1", Content: "engineering/billing/invoice_retry_policy.md: retried three times"},
	},
	Tools: []api.Tool{
		{Name: "read_entry", Description: "Read one entry", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	},
	MaxTokens:   2048,
	Temperature: 0.5,
}

const toolReply = `[{"reply": {"tool_calls": [{"id": "call_2", "name": "read_entry",
  "arguments": {"path": "engineering/billing/invoice_retry_policy.md"}}],
  "usage": {"input_tokens": 321, "output_tokens": 17}, "model": "scripted-1"}}]`

func TestOpenAIToolRoundTrip(t *testing.T) {
	c, srv := client(t, "openrouter", script(t, toolReply), hostllm.Config{Headers: map[string]string{"X-Title": "arbor"}})
	resp, err := c.Complete(context.Background(), conversation)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.ToolCall{{ID: "call_2", Name: "read_entry", Arguments: `{"path":"engineering/billing/invoice_retry_policy.md"}`}}
	if !equalCalls(resp.ToolCalls, want) || resp.Content != "" {
		t.Errorf("tool calls = %+v, content %q; want %+v", resp.ToolCalls, resp.Content, want)
	}
	if resp.Usage != (api.Usage{InputTokens: 321, OutputTokens: 17}) || resp.Model != "scripted-1" || resp.LatencyMs <= 0 {
		t.Errorf("usage %+v, model %q, latency %v", resp.Usage, resp.Model, resp.LatencyMs)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("X-Title") != "arbor" {
		t.Errorf("path %q, headers %v", r.Path, r.Header)
	}
	var body struct {
		Model     string  `json:"model"`
		MaxTokens int     `json:"max_tokens"`
		Temp      float64 `json:"temperature"`
		Messages  []struct {
			Role       string  `json:"role"`
			Content    *string `json:"content"`
			ToolCallID string  `json:"tool_call_id"`
			ToolCalls  []struct {
				ID, Type string
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string
			Function struct {
				Name       string
				Parameters json.RawMessage
			}
		} `json:"tools"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "test-model" || body.MaxTokens != 2048 || body.Temp != 0.5 {
		t.Errorf("model %q, max_tokens %d, temperature %v", body.Model, body.MaxTokens, body.Temp)
	}
	if len(body.Messages) != 4 {
		t.Fatalf("%d messages, want 4", len(body.Messages))
	}
	call := body.Messages[2]
	if call.Role != "assistant" || call.Content != nil || len(call.ToolCalls) != 1 ||
		call.ToolCalls[0].Type != "function" || call.ToolCalls[0].Function.Name != "search_knowledge" ||
		call.ToolCalls[0].Function.Arguments != `{"query":"invoice retry"}` {
		t.Errorf("assistant turn = %+v", call)
	}
	if tool := body.Messages[3]; tool.Role != "tool" || tool.ToolCallID != "call_1" || *tool.Content == "" {
		t.Errorf("tool turn = %+v", tool)
	}
	if len(body.Tools) != 1 || body.Tools[0].Type != "function" || body.Tools[0].Function.Name != "read_entry" ||
		!strings.Contains(string(body.Tools[0].Function.Parameters), `"required":["path"]`) {
		t.Errorf("tools = %+v", body.Tools)
	}
}

func TestOpenAISendsMaxCompletionTokensToOpenAI(t *testing.T) {
	c, srv := client(t, "openai", script(t, `[{"reply":{"content":"ok"}}]`), hostllm.Config{})
	if _, err := c.Complete(context.Background(), api.LLMRequest{Messages: []api.Message{{Role: "user", Content: "hi"}}, MaxTokens: 1024}); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	srv.Requests()[0].Decode(&body)
	if body["max_completion_tokens"] != 1024.0 || body["max_tokens"] != nil {
		t.Errorf("body = %v", body)
	}
}

func TestAnthropicToolRoundTrip(t *testing.T) {
	c, srv := client(t, "anthropic", script(t, toolReply), hostllm.Config{})
	req := conversation
	// A follow-up from the user right after the tool's answer: Anthropic
	// wants it in the same user turn as the tool result.
	req.Messages = append(append([]api.Message(nil), req.Messages...), api.Message{Role: api.RoleUser, Content: "Be brief."})
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.ToolCall{{ID: "call_2", Name: "read_entry", Arguments: `{"path":"engineering/billing/invoice_retry_policy.md"}`}}
	if !equalCalls(resp.ToolCalls, want) || resp.Usage.InputTokens != 321 || resp.Usage.OutputTokens != 17 {
		t.Errorf("response = %+v", resp)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != testKey || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
		t.Errorf("path %q, headers %v", r.Path, r.Header)
	}
	var body struct {
		Model, System string
		MaxTokens     int     `json:"max_tokens"`
		Temperature   float64 `json:"temperature"`
		Messages      []struct {
			Role    string
			Content []struct {
				Type, Text, ID, Name string
				Input                json.RawMessage
				ToolUseID            string `json:"tool_use_id"`
				Content              string
			}
		}
		Tools []struct {
			Name        string
			InputSchema json.RawMessage `json:"input_schema"`
		}
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.System != "Answer only from the tree." || body.MaxTokens != 2048 || body.Temperature != 0.5 {
		t.Errorf("system %q, max_tokens %d, temperature %v", body.System, body.MaxTokens, body.Temperature)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Fatalf("roles = %v, want user,assistant,user", roles)
	}
	use := body.Messages[1].Content
	if len(use) != 1 || use[0].Type != "tool_use" || use[0].ID != "call_1" || use[0].Name != "search_knowledge" || string(use[0].Input) != `{"query":"invoice retry"}` {
		t.Errorf("assistant turn = %+v", use)
	}
	res := body.Messages[2].Content
	if len(res) != 2 || res[0].Type != "tool_result" || res[0].ToolUseID != "call_1" || !strings.Contains(res[0].Content, "three times") ||
		res[1].Type != "text" || res[1].Text != "Be brief." {
		t.Errorf("last user turn = %+v", res)
	}
	if len(body.Tools) != 1 || body.Tools[0].Name != "read_entry" || !strings.Contains(string(body.Tools[0].InputSchema), `"required":["path"]`) {
		t.Errorf("tools = %+v", body.Tools)
	}
}

// TestAnthropicReplaysMalformedArguments: a call whose arguments were not
// a JSON object is replayed as {} (the API refuses anything else).
func TestAnthropicReplaysMalformedArguments(t *testing.T) {
	c, srv := client(t, "anthropic", script(t, `[{"reply":{"content":"done"}}]`), hostllm.Config{})
	req := api.LLMRequest{Messages: []api.Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", ToolCalls: []api.ToolCall{{ID: "c1", Name: "read_entry", Arguments: `{"path": `}}},
		{Role: "tool", ToolCallID: "c1", Content: "error: arguments are not valid JSON"},
	}, MaxTokens: 100}
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.Content != "done" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if b := string(srv.Requests()[0].Body); !strings.Contains(b, `"input":{}`) {
		t.Errorf("body = %s", b)
	}
}

func equalCalls(a, b []api.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var hello = api.LLMRequest{Messages: []api.Message{{Role: api.RoleUser, Content: "hello"}}, MaxTokens: 64, Temperature: 0.3}

// bothFormats runs f once per wire format.
func bothFormats(t *testing.T, f func(t *testing.T, provider string)) {
	for _, p := range []string{"openai-compatible", "anthropic"} {
		t.Run(p, func(t *testing.T) { f(t, p) })
	}
}

func TestRetryServerErrorThenSuccess(t *testing.T) {
	bothFormats(t, func(t *testing.T, provider string) {
		var sl sleeps
		var retries []hostllm.Retry
		c, srv := client(t, provider, script(t, `[{"status":500,"message":"upstream exploded"},{"status":529},{"reply":{"content":"fine"}}]`),
			hostllm.Config{}, hostllm.WithSleep(sl.sleep), hostllm.WithBackoff(time.Second, 8*time.Second),
			hostllm.WithRetryHook(func(r hostllm.Retry) { retries = append(retries, r) }))
		resp, err := c.Complete(context.Background(), hello)
		if err != nil || resp.Content != "fine" {
			t.Fatalf("resp %+v, err %v", resp, err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Fatalf("%d requests, want 3", n)
		}
		if len(retries) != 2 || retries[0].Status != 500 || retries[1].Status != 529 || retries[0].RetryAfter {
			t.Fatalf("retries = %+v", retries)
		}
		if !strings.Contains(retries[0].Reason, "upstream exploded") {
			t.Errorf("reason %q does not carry the server's message", retries[0].Reason)
		}
		// Exponential with jitter over the upper half: [0.5s, 1s], then [1s, 2s].
		if w := sl.waits; len(w) != 2 || w[0] < 500*time.Millisecond || w[0] > time.Second || w[1] < time.Second || w[1] > 2*time.Second {
			t.Errorf("waits = %v", w)
		}
	})
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	bothFormats(t, func(t *testing.T, provider string) {
		var sl sleeps
		var retries []hostllm.Retry
		c, srv := client(t, provider, script(t, `[{"status":429,"retry_after":"7"},{"status":429,"retry_after":"0.25"},{"reply":{"content":"after the wait"}}]`),
			hostllm.Config{}, hostllm.WithSleep(sl.sleep), hostllm.WithRetryHook(func(r hostllm.Retry) { retries = append(retries, r) }))
		resp, err := c.Complete(context.Background(), hello)
		if err != nil || resp.Content != "after the wait" {
			t.Fatalf("resp %+v, err %v", resp, err)
		}
		if len(srv.Requests()) != 3 {
			t.Fatalf("%d requests, want 3", len(srv.Requests()))
		}
		if len(sl.waits) != 2 || sl.waits[0] != 7*time.Second || sl.waits[1] != 250*time.Millisecond {
			t.Errorf("waits = %v, want [7s 250ms] as the server asked", sl.waits)
		}
		if len(retries) != 2 || !retries[0].RetryAfter || retries[0].Status != 429 {
			t.Errorf("retries = %+v", retries)
		}
	})
}

func TestRateLimitGivesUp(t *testing.T) {
	var sl sleeps
	c, srv := client(t, "groq", script(t, `[{"status":429},{"status":429},{"status":429}]`), hostllm.Config{MaxRetries: 2}, hostllm.WithSleep(sl.sleep))
	_, err := c.Complete(context.Background(), hello)
	var e *hostllm.Error
	if !errors.As(err, &e) || e.Code != api.LLMRateLimit || e.Attempts != 3 || e.Status != 429 {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 3 || len(sl.waits) != 2 {
		t.Errorf("%d requests, waits %v", len(srv.Requests()), sl.waits)
	}
}

func TestRetryAfterLongerThanMaxIsNotWaited(t *testing.T) {
	var sl sleeps
	c, srv := client(t, "openai", script(t, `[{"status":429,"retry_after":"3600"},{"reply":{"content":"never"}}]`), hostllm.Config{},
		hostllm.WithSleep(sl.sleep), hostllm.WithBackoff(time.Second, 30*time.Second))
	_, err := c.Complete(context.Background(), hello)
	if code(err) != api.LLMRateLimit || !strings.Contains(err.Error(), "asked to wait 1h0m0s") {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Requests()) != 1 || len(sl.waits) != 0 {
		t.Errorf("%d requests, waits %v", len(srv.Requests()), sl.waits)
	}
}

func TestAuthErrorIsNotRetried(t *testing.T) {
	bothFormats(t, func(t *testing.T, provider string) {
		c, srv := client(t, provider, script(t, `[{"reply":{"content":"unreachable"}}]`), hostllm.Config{APIKey: "sk-wrong-key-42", KeySource: "ARBOR_LLM_API_KEY"})
		srv.RequireKey(testKey)
		_, err := c.Complete(context.Background(), hello)
		var e *hostllm.Error
		if !errors.As(err, &e) || e.Code != api.LLMAuth || e.Status != 401 || e.Attempts != 1 {
			t.Fatalf("err = %#v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "ARBOR_LLM_API_KEY") || strings.Contains(msg, "sk-wrong-key-42") {
			t.Errorf("message %q should name the key's source and never the key", msg)
		}
		if len(srv.Requests()) != 1 || srv.Remaining() != 1 {
			t.Errorf("%d requests, %d steps left", len(srv.Requests()), srv.Remaining())
		}
	})
}

// TestServerEchoingTheKey: a message quoting the refused key is redacted.
func TestServerEchoingTheKey(t *testing.T) {
	c, _ := client(t, "openai", script(t, `[{"status":403,"message":"Incorrect API key provided: sk-test-0123456789"}]`), hostllm.Config{})
	_, err := c.Complete(context.Background(), hello)
	if code(err) != api.LLMAuth || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %v", err)
	}
}

func TestInvalidAnswers(t *testing.T) {
	cases := []struct{ name, step, want string }{
		{"html", `{"raw":"<html><body>502 Bad Gateway</body></html>"}`, "could not be decoded"},
		{"truncated JSON", `{"raw":"{\"choices\":[{\"message\":"}`, "could not be decoded"},
		{"empty body", `{"raw":""}`, "could not be decoded"},
		{"no choices", `{"raw":"{\"id\":\"x\",\"choices\":[]}"}`, "no choices"},
		{"wrong shape", `{"raw":"[1,2,3]"}`, "could not be decoded"},
		{"empty message", `{"raw":"{\"choices\":[{\"message\":{\"content\":null},\"finish_reason\":\"length\"}]}"}`, "neither content nor tool calls"},
		{"content of another type", `{"raw":"{\"choices\":[{\"message\":{\"content\":42}}]}"}`, "neither text nor a list of parts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sl sleeps
			c, srv := client(t, "vllm", script(t, "["+tc.step+`,{"reply":{"content":"unused"}}]`), hostllm.Config{}, hostllm.WithSleep(sl.sleep))
			_, err := c.Complete(context.Background(), hello)
			var e *hostllm.Error
			if !errors.As(err, &e) || e.Code != api.LLMInvalid || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("err = %v, want invalid: %s", err, tc.want)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests: an invalid answer is not retried", len(srv.Requests()))
			}
		})
	}
}

func TestAnthropicInvalidAnswers(t *testing.T) {
	for _, raw := range []string{`"not an object"`, `{"type":"completion","completion":"hi"}`, `{"type":"message","content":[]}`} {
		c, _ := client(t, "anthropic", []llmtest.Step{{Raw: &raw}}, hostllm.Config{})
		if _, err := c.Complete(context.Background(), hello); code(err) != api.LLMInvalid {
			t.Errorf("%s: err = %v, want invalid", raw, err)
		}
	}
}

// TestErrorInA200Body: OpenRouter reports some failures inside a 200.
func TestErrorInA200Body(t *testing.T) {
	c, _ := client(t, "openrouter", script(t, `[{"raw":"{\"error\":{\"message\":\"No auth credentials found\",\"code\":401}}"}]`), hostllm.Config{})
	_, err := c.Complete(context.Background(), hello)
	if code(err) != api.LLMAuth || !strings.Contains(err.Error(), "No auth credentials found") {
		t.Fatalf("err = %v", err)
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	c, srv := client(t, "ollama", script(t, `[{"status":404,"raw":"{\"error\":\"model \\\"llama9\\\" not found\"}"},{"reply":{"content":"x"}}]`), hostllm.Config{APIKey: "unused"})
	_, err := c.Complete(context.Background(), hello)
	if code(err) != api.LLMHTTP || !strings.Contains(err.Error(), `model "llama9" not found`) || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestTimeout(t *testing.T) {
	bothFormats(t, func(t *testing.T, provider string) {
		var sl sleeps
		c, srv := client(t, provider, script(t, `[{"delay_ms":10000,"reply":{"content":"late"}},{"delay_ms":10000,"reply":{"content":"late"}}]`),
			hostllm.Config{Timeout: 300 * time.Millisecond, MaxRetries: 1}, hostllm.WithSleep(sl.sleep))
		_, err := c.Complete(context.Background(), hello)
		var e *hostllm.Error
		if !errors.As(err, &e) || e.Code != api.LLMTimeout || e.Attempts != 2 || !strings.Contains(e.Message, "300ms") {
			t.Fatalf("err = %v", err)
		}
		if len(srv.Requests()) != 2 || len(sl.waits) != 1 {
			t.Errorf("%d requests, waits %v: a timeout is retried once", len(srv.Requests()), sl.waits)
		}
	})
}

func TestCancelDuringRequest(t *testing.T) {
	c, srv := client(t, "openai", script(t, `[{"delay_ms":10000,"reply":{"content":"late"}}]`), hostllm.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Complete(ctx, hello)
	var e *hostllm.Error
	if !errors.As(err, &e) || e.Code != api.LLMCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests: a cancelled call is not retried", len(srv.Requests()))
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, srv := client(t, "openai", script(t, `[{"status":503},{"reply":{"content":"never asked"}}]`), hostllm.Config{},
		hostllm.WithBackoff(time.Hour, time.Hour), hostllm.WithRetryHook(func(hostllm.Retry) { cancel() }))
	_, err := c.Complete(ctx, hello)
	if code(err) != api.LLMCancelled {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests", len(srv.Requests()))
	}
}

func TestCallerDeadlineIsATimeout(t *testing.T) {
	c, _ := client(t, "openai", script(t, `[{"delay_ms":10000,"reply":{"content":"late"}}]`), hostllm.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(ctx, hello); code(err) != api.LLMTimeout {
		t.Fatalf("err = %v", err)
	}
}

func TestConnectionRefusedIsRetriedThenHTTP(t *testing.T) {
	srv := llmtest.New(nil)
	url := srv.URL
	srv.Close()
	var sl sleeps
	c, err := hostllm.New(hostllm.Config{Provider: "lmstudio", BaseURL: url + "/v1", Model: "m", MaxRetries: 2}, hostllm.WithSleep(sl.sleep))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), hello)
	var e *hostllm.Error
	if !errors.As(err, &e) || e.Code != api.LLMHTTP || e.Attempts != 3 || e.Status != 0 {
		t.Fatalf("err = %v", err)
	}
}

func TestScriptExhaustedIsReported(t *testing.T) {
	c, _ := client(t, "openai", nil, hostllm.Config{})
	_, err := c.Complete(context.Background(), hello)
	if code(err) != api.LLMHTTP || !strings.Contains(err.Error(), "script has run out") {
		t.Fatalf("err = %v", err)
	}
}

// TestErrorsAsWireError: a driver looking for core/llm's *Error finds it
// in a provider's error.
func TestErrorsAsWireError(t *testing.T) {
	var err error = &hostllm.Error{Code: api.LLMAuth, Provider: "openai", Message: "the API key was refused"}
	var w *api.LLMError
	if !errors.As(err, &w) || w.Code != api.LLMAuth || !strings.Contains(w.Message, "openai: the API key was refused") {
		t.Fatalf("errors.As = %+v", w)
	}
}

// code is the wire code of a provider's error ("" for nil).
func code(err error) string {
	var w *api.LLMError
	if errors.As(err, &w) {
		return w.Code
	}
	return ""
}

// TestContentParts: a proxy answering content as a list of parts is read.
func TestContentParts(t *testing.T) {
	raw := `{"choices":[{"message":{"content":[{"type":"text","text":"Retried "},{"type":"image_url"},{"type":"text","text":"three times."}]}}]}`
	c, _ := client(t, "openai-compatible", []llmtest.Step{{Raw: &raw}}, hostllm.Config{})
	resp, err := c.Complete(context.Background(), hello)
	if err != nil || resp.Content != "Retried three times." {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
}
