package agent

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// clock is a clock the test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// echo is a task that asks the model steps times, then answers with what
// the model said last; it records whether it was abandoned.
type echo struct {
	steps     int
	abandoned bool
}

func (t *echo) Advance(c *Conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any) {
	switch {
	case fail != nil:
		return nil, "failed: " + fail.Code
	case c.Steps() >= t.steps:
		return nil, resp.Content
	}
	c.Purpose = "echo"
	return &api.LLMRequest{Messages: []api.Message{{Role: api.RoleUser, Content: "say something"}}, MaxTokens: c.Room(100)}, nil
}

func (t *echo) Abandon() { t.abandoned = true }

func newLoops(opts api.LLMOptions) (*Loops, *clock) {
	c := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return NewLoops(c, host.NopLogger{}, opts), c
}

func code(err error) string {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestConvRoomAndExhausted(t *testing.T) {
	tests := []struct {
		name       string
		budget     int
		maxIter    int
		used, done int // tokens spent, model calls made
		want       int // Room(1000)
		exhausted  string
	}{
		{"fresh", 5000, 10, 0, 0, 1000, ""},
		{"budget caps the room", 5000, 10, 4500, 1, 500, ""},
		{"less than a turn left", 5000, 10, 4800, 1, 0, "the token budget is spent (4800 of 5000 tokens used)"},
		{"iterations spent", 5000, 2, 100, 2, 0, "the iteration limit (2 model calls) was reached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Conv{budget: tc.budget, maxIter: tc.maxIter}
			c.Trace.InputTokens = tc.used
			c.Trace.Steps = make([]api.LLMStep, tc.done)
			if got := c.Room(1000); got != tc.want {
				t.Errorf("Room(1000) = %d, want %d", got, tc.want)
			}
			if tc.exhausted != "" && c.Exhausted() != tc.exhausted {
				t.Errorf("Exhausted() = %q, want %q", c.Exhausted(), tc.exhausted)
			}
		})
	}
}

func TestNewConv(t *testing.T) {
	l, _ := newLoops(api.LLMOptions{MaxIterations: 7})
	for _, tc := range []struct {
		budget, iters int
		code          string
	}{
		{-1, 0, api.CodeInvalidParams},
		{0, -1, api.CodeInvalidParams},
		{0, api.MaxIterations + 1, api.CodeInvalidParams},
	} {
		if _, err := l.NewConv(tc.budget, tc.iters, 100); code(err) != tc.code {
			t.Errorf("NewConv(%d, %d): %v, want %s", tc.budget, tc.iters, err, tc.code)
		}
	}
	c, err := l.NewConv(0, 0, 1234)
	if err != nil || c.budget != 1234 || c.maxIter != 7 {
		t.Fatalf("defaults: %+v, %v; want the given default budget and the open's iterations", c, err)
	}
}

// A task runs step by step through Pending and Resume; every step has a
// new continuation id, so a resume sent twice cannot run a step twice.
func TestLoopsResume(t *testing.T) {
	l, _ := newLoops(api.LLMOptions{})
	c, _ := l.NewConv(0, 0, 10000)
	out, err := l.Start("echo", &echo{steps: 2}, c)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := out.(api.Pending)
	if !ok || p.Status != "pending" || p.Step != 1 || !strings.HasPrefix(p.Continuation, "c_") || len(p.Continuation) != 34 {
		t.Fatalf("start: %#v", out)
	}
	out, err = l.Resume(api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: "one", Usage: api.Usage{InputTokens: 10, OutputTokens: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	p2, ok := out.(api.Pending)
	if !ok || p2.Step != 2 || p2.Continuation == p.Continuation {
		t.Fatalf("second step: %#v", out)
	}
	if _, err := l.Resume(api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{}}); code(err) != api.CodeUnknownContinuation {
		t.Errorf("a resume of a finished step: %v, want %s", err, api.CodeUnknownContinuation)
	}
	// No usage reported: the engine estimates it (4 characters a token).
	out, err = l.Resume(api.ResumeParams{Continuation: p2.Continuation, Response: &api.LLMResponse{Content: "twelve chars"}})
	if err != nil || out != "twelve chars" {
		t.Fatalf("final: %#v, %v", out, err)
	}
	if c.Steps() != 2 || c.Trace.Steps[0].InputTokens != 10 || !c.Trace.Estimated || c.Trace.Steps[1].OutputTokens != 3 {
		t.Errorf("trace %+v", c.Trace)
	}
	if c.Trace.Steps[1].Purpose != "echo" {
		t.Errorf("purpose %q", c.Trace.Steps[1].Purpose)
	}
}

func TestLoopsErrors(t *testing.T) {
	l, clk := newLoops(api.LLMOptions{MaxContinuations: 1, ContinuationSeconds: 60})
	conv := func() *Conv {
		c, _ := l.NewConv(0, 0, 10000)
		return c
	}
	c := conv()
	first := &echo{steps: 1}
	out, _ := l.Start("echo", first, c)
	p := out.(api.Pending)

	second := &echo{steps: 1}
	if _, err := l.Start("echo", second, conv()); code(err) != api.CodeTooManyPending || !second.abandoned {
		t.Errorf("over the limit: %v, abandoned %v; want %s and the task dropped", err, second.abandoned, api.CodeTooManyPending)
	}
	for _, rp := range []api.ResumeParams{
		{Continuation: p.Continuation},
		{Continuation: p.Continuation, Response: &api.LLMResponse{}, Error: &api.LLMError{Code: api.LLMTimeout}},
		{Continuation: p.Continuation, Error: &api.LLMError{}},
		{Response: &api.LLMResponse{}},
	} {
		if _, err := l.Resume(rp); code(err) != api.CodeInvalidParams {
			t.Errorf("resume %+v: %v, want %s", rp, err, api.CodeInvalidParams)
		}
	}
	// The host's error reaches the task, which ends with it.
	if out, err := l.Resume(api.ResumeParams{Continuation: p.Continuation, Error: &api.LLMError{Code: api.LLMRateLimit, Message: "429"}}); err != nil || out != "failed: rate_limit" {
		t.Errorf("resume with an error: %#v, %v", out, err)
	}
	if !strings.Contains(c.Trace.Steps[0].Error, "rate_limit: 429") {
		t.Errorf("trace %+v", c.Trace.Steps)
	}

	// Past its deadline a continuation expires, is abandoned, and says so.
	third := &echo{steps: 1}
	out, _ = l.Start("echo", third, conv())
	p = out.(api.Pending)
	clk.now = clk.now.Add(61 * time.Second)
	if _, err := l.Resume(api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{}}); code(err) != api.CodeExpired || !third.abandoned {
		t.Errorf("expired: %v, abandoned %v; want %s", err, third.abandoned, api.CodeExpired)
	}

	// Cancel abandons the task; Drop abandons every waiting one.
	fourth := &echo{steps: 1}
	out, _ = l.Start("echo", fourth, conv())
	if res, err := l.Cancel(api.CancelParams{Continuation: out.(api.Pending).Continuation}); err != nil || !res.Cancelled || res.Steps != 1 || !fourth.abandoned {
		t.Errorf("cancel: %+v, %v, abandoned %v", res, err, fourth.abandoned)
	}
	fifth := &echo{steps: 1}
	l.Start("echo", fifth, conv())
	l.Drop()
	if !fifth.abandoned {
		t.Error("Drop left a task waiting")
	}
}

func TestDecodeArgs(t *testing.T) {
	var v struct {
		Path  string `json:"path"`
		Depth int    `json:"depth"`
	}
	for _, tc := range []struct {
		raw  string
		fail bool
	}{
		{`{"path":"a","depth":2}`, false},
		{``, false},
		{`  `, false},
		{`{"path":"a","extra":1}`, true},
		{`{"depth":"two"}`, true},
		{`{"path":"a"} trailing`, true},
		{`[1]`, true},
	} {
		if err := DecodeArgs(tc.raw, &v); (err != nil) != tc.fail {
			t.Errorf("DecodeArgs(%q) = %v, want failure %v", tc.raw, err, tc.fail)
		}
	}
}

func TestClipAndAnswer(t *testing.T) {
	if got := Clip("héllo", 10); got != "héllo" {
		t.Errorf("short text clipped: %q", got)
	}
	if got := Clip("héllo wörld", 5); got != "héllo\n[… cut: 5 of 11 characters shown]" {
		t.Errorf("Clip = %q", got)
	}
	calls := []api.ToolCall{{ID: "kept", Name: "a"}, {Name: "b"}}
	msgs := Answer([]api.Message{{Role: api.RoleUser, Content: "q"}}, &api.LLMResponse{Content: "let me look", ToolCalls: calls}, 3,
		func(tc api.ToolCall) string { return "ran " + tc.Name })
	want := []api.Message{
		{Role: api.RoleUser, Content: "q"},
		{Role: api.RoleAssistant, Content: "let me look", ToolCalls: []api.ToolCall{{ID: "kept", Name: "a"}, {ID: "call_3_2", Name: "b"}}},
		{Role: api.RoleTool, Content: "ran a", ToolCallID: "kept"},
		{Role: api.RoleTool, Content: "ran b", ToolCallID: "call_3_2"},
	}
	if !reflect.DeepEqual(msgs, want) || calls[1].ID != "" {
		t.Errorf("Answer = %+v (the model's calls: %+v)", msgs, calls)
	}
	if n := EstimateTokens("12345678"); n != 2 {
		t.Errorf("EstimateTokens = %d, want 2", n)
	}
}
