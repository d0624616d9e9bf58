package engine

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
)

// minTurnTokens is the least output room worth a model call: a budget
// with less left ends the loop.
const minTurnTokens = 256

// expiredMemory is how many expired continuations are remembered, so that
// resuming one says "expired" rather than "unknown".
const expiredMemory = 256

// task is a call that talks to a model: query (tiers 3 and 4) or
// curateFrom. advance gets the answer to its last request (or the host's
// error) and returns the next request, or nil and the final result.
type task interface {
	advance(e *Engine, c *conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any)
	// abandon is called when the continuation is cancelled or expires: the
	// task drops what it holds; nothing it staged reaches the tree.
	abandon()
}

// conv is the bookkeeping every task shares: budget, iterations, trace.
type conv struct {
	budget  int
	maxIter int
	trace   api.LLMTrace
	purpose string // of the request in flight
}

func (c *conv) used() int { return c.trace.InputTokens + c.trace.OutputTokens }

// room is how many output tokens the next call may ask for, at most want;
// 0 when the budget or the iterations are spent.
func (c *conv) room(want int) int {
	if len(c.trace.Steps) >= c.maxIter {
		return 0
	}
	left := c.budget - c.used()
	if left < minTurnTokens {
		return 0
	}
	return min(want, left)
}

// exhausted says why the conversation cannot go on, for a reason line.
func (c *conv) exhausted() string {
	if len(c.trace.Steps) >= c.maxIter {
		return fmt.Sprintf("the iteration limit (%d model calls) was reached", c.maxIter)
	}
	return fmt.Sprintf("the token budget is spent (%d of %d tokens used)", c.used(), c.budget)
}

// continuation is a task waiting on the host's model call.
type continuation struct {
	id       string
	kind     string
	step     int
	sentAt   time.Time
	deadline time.Time
	req      *api.LLMRequest
	task     task
	conv     *conv
}

// continuations are the engine's waiting tasks, by id.
type continuations struct {
	live    map[string]*continuation
	expired map[string]bool
	order   []string // of expired, oldest first
}

// newContinuationID is 128 random bits: a continuation id is a capability
// (whoever holds it steers the task), so it must not be guessable. The
// runtime's generator is seeded from the host's random source (WASI
// random_get), and keeps crypto/rand, and its 32 MiB DRBG, out of the
// module (DESIGN §6).
func newContinuationID() string {
	var b [16]byte
	for i := range 2 {
		v := rand.Uint64()
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return "c_" + hex.EncodeToString(b[:])
}

// sweep forgets the continuations past their deadline.
func (e *Engine) sweep() {
	now := e.clock.Now()
	for id, c := range e.conts.live {
		if now.After(c.deadline) {
			e.log.Log("info", fmt.Sprintf("llm: %s %s expired after step %d", c.kind, id, c.step))
			c.task.abandon()
			delete(e.conts.live, id)
			e.rememberExpired(id)
		}
	}
}

func (e *Engine) rememberExpired(id string) {
	if e.conts.expired == nil {
		e.conts.expired = map[string]bool{}
	}
	e.conts.expired[id] = true
	e.conts.order = append(e.conts.order, id)
	if len(e.conts.order) > expiredMemory {
		delete(e.conts.expired, e.conts.order[0])
		e.conts.order = e.conts.order[1:]
	}
}

// start runs a new task until it needs the model (a Pending) or is done.
func (e *Engine) start(kind string, t task, c *conv) (any, error) {
	e.sweep()
	if len(e.conts.live) >= e.llmOpts.MaxContinuations {
		t.abandon()
		return nil, errorf(api.CodeTooManyPending, "%d calls already wait on a model (the limit): resume or cancel one first", len(e.conts.live))
	}
	req, res := t.advance(e, c, nil, nil)
	return e.wait(&continuation{kind: kind, task: t, conv: c}, req, res), nil
}

// wait registers the next step of a task under a fresh id, or returns the
// final result. Every step gets a new id, so a resume sent twice cannot
// run a step twice.
func (e *Engine) wait(c *continuation, req *api.LLMRequest, res any) any {
	if req == nil {
		return res
	}
	c.id = newContinuationID()
	c.step++
	c.req = req
	c.sentAt = e.clock.Now()
	c.deadline = c.sentAt.Add(time.Duration(e.llmOpts.ContinuationSeconds * float64(time.Second)))
	if e.conts.live == nil {
		e.conts.live = map[string]*continuation{}
	}
	e.conts.live[c.id] = c
	return api.Pending{Status: "pending", Continuation: c.id, Step: c.step, LLM: *req}
}

// take removes and returns a live continuation, or the error for an id
// that is not one.
func (e *Engine) take(id string) (*continuation, error) {
	e.sweep()
	c, ok := e.conts.live[id]
	switch {
	case ok:
		delete(e.conts.live, id)
		return c, nil
	case e.conts.expired[id]:
		return nil, errorf(api.CodeExpired, "continuation %s expired (not resumed within %gs); start the call again", id, e.llmOpts.ContinuationSeconds)
	case id == "":
		return nil, errorf(api.CodeInvalidParams, "continuation is required")
	}
	return nil, errorf(api.CodeUnknownContinuation, "no continuation %s: it finished, was cancelled or resumed already, or never existed", id)
}

// Resume continues a waiting call with the model's answer or the host's
// error; the result is the next Pending or the call's final result.
func (e *Engine) Resume(p api.ResumeParams) (any, error) {
	if (p.Response == nil) == (p.Error == nil) {
		return nil, errorf(api.CodeInvalidParams, "resume: exactly one of response and error is required")
	}
	if p.Error != nil && p.Error.Code == "" {
		return nil, errorf(api.CodeInvalidParams, "resume: error.code is required")
	}
	c, err := e.take(p.Continuation)
	if err != nil {
		return nil, err
	}
	e.logStep(c, p.Response, p.Error)
	req, res := c.task.advance(e, c.conv, p.Response, p.Error)
	return e.wait(c, req, res), nil
}

// Cancel abandons a waiting call: nothing it staged reaches the tree.
func (e *Engine) Cancel(p api.CancelParams) (api.CancelResult, error) {
	c, err := e.take(p.Continuation)
	if err != nil {
		return api.CancelResult{}, err
	}
	c.task.abandon()
	e.log.Log("info", fmt.Sprintf("llm: %s cancelled at step %d", c.kind, c.step))
	return api.CancelResult{Cancelled: true, Steps: c.step}, nil
}

// dropContinuations abandons every waiting call (close, reopen).
func (e *Engine) dropContinuations() {
	for id, c := range e.conts.live {
		c.task.abandon()
		delete(e.conts.live, id)
	}
}

// logStep adds one model call to the trace and logs it. A host that
// reports no usage gets an estimate (4 characters a token), so that the
// budget still bounds the loop.
func (e *Engine) logStep(c *continuation, resp *api.LLMResponse, fail *api.LLMError) {
	s := api.LLMStep{Step: c.step, Purpose: c.conv.purpose}
	if fail != nil {
		s.Error = fail.Code + ": " + fail.Message
	}
	if resp != nil {
		s.InputTokens, s.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
		s.LatencyMs, s.Model = resp.LatencyMs, resp.Model
		if s.InputTokens == 0 && s.OutputTokens == 0 {
			s.InputTokens, s.OutputTokens = estimateRequest(c.req), estimateTokens(resp.Content)
			for _, tc := range resp.ToolCalls {
				s.OutputTokens += estimateTokens(tc.Name + tc.Arguments)
			}
			c.conv.trace.Estimated = true
		}
		for _, tc := range resp.ToolCalls {
			s.ToolCalls = append(s.ToolCalls, tc.Name)
		}
	}
	if s.LatencyMs == 0 {
		s.LatencyMs = float64(e.clock.Now().Sub(c.sentAt).Microseconds()) / 1000
	}
	t := &c.conv.trace
	t.Steps = append(t.Steps, s)
	t.InputTokens += s.InputTokens
	t.OutputTokens += s.OutputTokens
	line := fmt.Sprintf("llm: %s step %d (%s): %d tokens in, %d out, %.0f ms", c.kind, s.Step, s.Purpose, s.InputTokens, s.OutputTokens, s.LatencyMs)
	if s.Model != "" {
		line += ", model " + s.Model
	}
	if len(s.ToolCalls) > 0 {
		line += ", tools " + strings.Join(s.ToolCalls, " ")
	}
	if s.Error != "" {
		line += ", error " + s.Error
	}
	e.log.Log("info", line)
}

// estimateTokens counts ~4 characters a token, the usual rule of thumb
// for English with BPE tokenizers.
func estimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

func estimateRequest(r *api.LLMRequest) int {
	if r == nil {
		return 0
	}
	n := 0
	for _, m := range r.Messages {
		n += estimateTokens(m.Content) + 4
		for _, tc := range m.ToolCalls {
			n += estimateTokens(tc.Name + tc.Arguments)
		}
	}
	for _, t := range r.Tools {
		n += estimateTokens(t.Description + string(t.Parameters))
	}
	return n
}

// decodeArgs reads a tool call's arguments strictly: unknown fields and
// wrong types are errors the model is told about.
func decodeArgs(raw string, v any) error {
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not valid: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("arguments are not valid: text after the JSON object")
	}
	return nil
}
