// Package agent runs the calls that talk to a model (docs/ABI.md §6): the
// engine never calls one itself. A task (a query past tier 2, a curation
// from raw material) advances step by step; each step that needs the
// model waits as a continuation until the host resumes it with the
// model's answer, cancels it, or lets it expire. Conv keeps the budget,
// the iterations and the trace every task shares, and Toolbox runs the
// read-only tools the model may call.
//
// The package reaches files only through host.FS and time only through
// host.Clock; it must not decide what a task answers (its callers do).
package agent

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// minTurnTokens is the least output room worth a model call: a budget
// with less left ends the loop.
const minTurnTokens = 256

// expiredMemory is how many expired continuations are remembered, so that
// resuming one says "expired" rather than "unknown".
const expiredMemory = 256

// Task is a call that talks to a model: query (tiers 3 and 4), curateFrom
// or tidy. Advance gets the answer to its last request (or the host's
// error) and returns the next request, or nil and the final result; a
// final result that is an error ends the call with that error.
type Task interface {
	Advance(c *Conv, resp *api.LLMResponse, fail *api.LLMError) (*api.LLMRequest, any)
	// Abandon is called when the continuation is cancelled or expires: the
	// task drops what it holds; nothing it staged reaches the tree.
	Abandon()
}

// Conv is the bookkeeping every task shares: budget, iterations, trace.
type Conv struct {
	budget  int
	maxIter int
	// Trace is every model call so far; a final result reports it.
	Trace api.LLMTrace
	// Purpose is what the request in flight is for (tier3, tier4,
	// compact1, compact2, curate); the task sets it with each request.
	Purpose string
}

// Used is the tokens spent so far.
func (c *Conv) Used() int { return c.Trace.InputTokens + c.Trace.OutputTokens }

// Steps is the number of model calls so far.
func (c *Conv) Steps() int { return len(c.Trace.Steps) }

// Room is how many output tokens the next call may ask for, at most want;
// 0 when the budget or the iterations are spent.
func (c *Conv) Room(want int) int {
	if c.Steps() >= c.maxIter {
		return 0
	}
	left := c.budget - c.Used()
	if left < minTurnTokens {
		return 0
	}
	return min(want, left)
}

// Exhausted says why the conversation cannot go on, for a reason line.
func (c *Conv) Exhausted() string {
	if c.Steps() >= c.maxIter {
		return fmt.Sprintf("the iteration limit (%d model calls) was reached", c.maxIter)
	}
	return fmt.Sprintf("the token budget is spent (%d of %d tokens used)", c.Used(), c.budget)
}

// continuation is a task waiting on the host's model call.
type continuation struct {
	id       string
	kind     string
	step     int
	sentAt   time.Time
	deadline time.Time
	req      *api.LLMRequest
	task     Task
	conv     *Conv
}

// Loops are the tasks waiting on the host's model calls, by continuation
// id. Not safe for concurrent use: the engine serves one call at a time.
type Loops struct {
	clock   host.Clock
	log     host.Logger
	opts    api.LLMOptions
	live    map[string]*continuation
	expired map[string]bool
	order   []string // of expired, oldest first
}

// NewLoops returns an empty set of loops under opts (zero fields take
// their defaults).
func NewLoops(clock host.Clock, log host.Logger, opts api.LLMOptions) *Loops {
	return &Loops{clock: clock, log: log, opts: opts.WithDefaults()}
}

// Options are the LLM options in force, defaults filled in.
func (l *Loops) Options() api.LLMOptions { return l.opts }

// NewConv checks a call's budget and iteration parameters; 0 takes
// defBudget and the open's llm.maxIterations.
func (l *Loops) NewConv(budget, iters, defBudget int) (*Conv, error) {
	switch {
	case budget < 0:
		return nil, api.Errorf(api.CodeInvalidParams, "tokenBudget %d: must not be negative", budget)
	case iters < 0 || iters > api.MaxIterations:
		return nil, api.Errorf(api.CodeInvalidParams, "maxIterations %d: want 1 to %d", iters, api.MaxIterations)
	}
	if budget == 0 {
		budget = defBudget
	}
	if iters == 0 {
		iters = l.opts.MaxIterations
	}
	return &Conv{budget: budget, maxIter: iters}, nil
}

// newContinuationID is 128 random bits: a continuation id is a capability
// (whoever holds it steers the task), so it must not be guessable. The
// runtime's generator is seeded from the host's random source (WASI
// random_get), and keeps crypto/rand, and its 32 MiB DRBG, out of the
// module (docs/design.md, "WebAssembly").
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
func (l *Loops) sweep() {
	now := l.clock.Now()
	for id, c := range l.live {
		if now.After(c.deadline) {
			l.log.Log("info", fmt.Sprintf("llm: %s %s expired after step %d", c.kind, id, c.step))
			c.task.Abandon()
			delete(l.live, id)
			l.rememberExpired(id)
		}
	}
}

func (l *Loops) rememberExpired(id string) {
	if l.expired == nil {
		l.expired = map[string]bool{}
	}
	l.expired[id] = true
	l.order = append(l.order, id)
	if len(l.order) > expiredMemory {
		delete(l.expired, l.order[0])
		l.order = l.order[1:]
	}
}

// Start runs a new task until it needs the model (a Pending) or is done.
func (l *Loops) Start(kind string, t Task, c *Conv) (any, error) {
	l.sweep()
	if len(l.live) >= l.opts.MaxContinuations {
		t.Abandon()
		return nil, api.Errorf(api.CodeTooManyPending, "%d calls already wait on a model (the limit): resume or cancel one first", len(l.live))
	}
	req, res := t.Advance(c, nil, nil)
	return final(l.wait(&continuation{kind: kind, task: t, conv: c}, req, res))
}

// final is a task's next step, or its final result or error.
func final(res any) (any, error) {
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

// wait registers the next step of a task under a fresh id, or returns the
// final result. Every step gets a new id, so a resume sent twice cannot
// run a step twice.
func (l *Loops) wait(c *continuation, req *api.LLMRequest, res any) any {
	if req == nil {
		return res
	}
	c.id = newContinuationID()
	c.step++
	c.req = req
	c.sentAt = l.clock.Now()
	c.deadline = c.sentAt.Add(time.Duration(l.opts.ContinuationSeconds * float64(time.Second)))
	if l.live == nil {
		l.live = map[string]*continuation{}
	}
	l.live[c.id] = c
	return api.Pending{Status: "pending", Continuation: c.id, Step: c.step, LLM: *req}
}

// take removes and returns a live continuation, or the error for an id
// that is not one.
func (l *Loops) take(id string) (*continuation, error) {
	l.sweep()
	c, ok := l.live[id]
	switch {
	case ok:
		delete(l.live, id)
		return c, nil
	case l.expired[id]:
		return nil, api.Errorf(api.CodeExpired, "continuation %s expired (not resumed within %gs); start the call again", id, l.opts.ContinuationSeconds)
	case id == "":
		return nil, api.Errorf(api.CodeInvalidParams, "continuation is required")
	}
	return nil, api.Errorf(api.CodeUnknownContinuation, "no continuation %s: it finished, was cancelled or resumed already, or never existed", id)
}

// Resume continues a waiting call with the model's answer or the host's
// error; the result is the next Pending or the call's final result.
func (l *Loops) Resume(p api.ResumeParams) (any, error) {
	if (p.Response == nil) == (p.Error == nil) {
		return nil, api.Errorf(api.CodeInvalidParams, "resume: exactly one of response and error is required")
	}
	if p.Error != nil && p.Error.Code == "" {
		return nil, api.Errorf(api.CodeInvalidParams, "resume: error.code is required")
	}
	c, err := l.take(p.Continuation)
	if err != nil {
		return nil, err
	}
	l.logStep(c, p.Response, p.Error)
	req, res := c.task.Advance(c.conv, p.Response, p.Error)
	return final(l.wait(c, req, res))
}

// Cancel abandons a waiting call: nothing it staged reaches the tree.
func (l *Loops) Cancel(p api.CancelParams) (api.CancelResult, error) {
	c, err := l.take(p.Continuation)
	if err != nil {
		return api.CancelResult{}, err
	}
	c.task.Abandon()
	l.log.Log("info", fmt.Sprintf("llm: %s cancelled at step %d", c.kind, c.step))
	return api.CancelResult{Cancelled: true, Steps: c.step}, nil
}

// Drop abandons every waiting call (close, reopen).
func (l *Loops) Drop() {
	for id, c := range l.live {
		c.task.Abandon()
		delete(l.live, id)
	}
}

// logStep adds one model call to the trace and logs it. A host that
// reports no usage gets an estimate (4 characters a token), so that the
// budget still bounds the loop.
func (l *Loops) logStep(c *continuation, resp *api.LLMResponse, fail *api.LLMError) {
	s := api.LLMStep{Step: c.step, Purpose: c.conv.Purpose}
	if fail != nil {
		s.Error = fail.Code + ": " + fail.Message
	}
	if resp != nil {
		s.InputTokens, s.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
		s.LatencyMs, s.Model = resp.LatencyMs, resp.Model
		if s.InputTokens == 0 && s.OutputTokens == 0 {
			s.InputTokens, s.OutputTokens = estimateRequest(c.req), EstimateTokens(resp.Content)
			for _, tc := range resp.ToolCalls {
				s.OutputTokens += EstimateTokens(tc.Name + tc.Arguments)
			}
			c.conv.Trace.Estimated = true
		}
		for _, tc := range resp.ToolCalls {
			s.ToolCalls = append(s.ToolCalls, tc.Name)
		}
	}
	if s.LatencyMs == 0 {
		s.LatencyMs = float64(l.clock.Now().Sub(c.sentAt).Microseconds()) / 1000
	}
	t := &c.conv.Trace
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
	l.log.Log("info", line)
}

// EstimateTokens counts ~4 characters a token, the usual rule of thumb
// for English with BPE tokenizers.
func EstimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

func estimateRequest(r *api.LLMRequest) int {
	if r == nil {
		return 0
	}
	n := 0
	for _, m := range r.Messages {
		n += EstimateTokens(m.Content) + 4
		for _, tc := range m.ToolCalls {
			n += EstimateTokens(tc.Name + tc.Arguments)
		}
	}
	for _, t := range r.Tools {
		n += EstimateTokens(t.Description + string(t.Parameters))
	}
	return n
}

// DecodeArgs reads a tool call's arguments strictly: unknown fields and
// wrong types are errors the model is told about.
func DecodeArgs(raw string, v any) error {
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
