package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// Completer makes one model call: a provider client (host/llm) or a test
// double. An error that is (or wraps) an *api.LLMError keeps its code when
// the driver passes it on to the engine; context.DeadlineExceeded becomes
// api.LLMTimeout and any other error api.LLMHTTP.
type Completer interface {
	Complete(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error)
}

// CompleterFunc adapts a function to Completer.
type CompleterFunc func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error)

// Complete calls f.
func (f CompleterFunc) Complete(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
	return f(ctx, req)
}

// Drive runs a method that may need a model (query with "llm": true,
// curateFrom) to its final result: while the engine answers "pending", it
// makes the model call through c and resumes. The engine's lock is held
// only for each engine call, never while the model works, so other calls
// (reads, searches, curates, other queries) are served meanwhile. When ctx
// ends during a model call, the continuation is cancelled (which leaves
// the tree unchanged) and ctx's error is returned.
func (e *Engine) Drive(ctx context.Context, method string, params any, c Completer) (json.RawMessage, error) {
	return DriveWith(ctx, e, method, params, c)
}

// MethodCaller makes one engine call and returns its raw result, or the
// engine's error as an *api.Error: an *Engine, or a client of an engine
// that another process keeps open (host/serve).
type MethodCaller interface {
	CallMethod(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// DriveWith is Drive over any MethodCaller: the model calls are made here,
// through c, and only the engine calls go to e.
func DriveWith(ctx context.Context, e MethodCaller, method string, params any, c Completer) (json.RawMessage, error) {
	if c == nil {
		return nil, fmt.Errorf("arbor: %s: no model (Completer) given", method)
	}
	raw, err := e.CallMethod(ctx, method, params)
	for err == nil {
		var p api.Pending
		if json.Unmarshal(raw, &p) != nil || p.Status != "pending" {
			return raw, nil
		}
		start := time.Now()
		var resp api.LLMResponse
		var cerr error
		if ctx.Err() == nil {
			resp, cerr = c.Complete(ctx, p.LLM)
		}
		if ctx.Err() != nil {
			// The caller gave up: the engine must drop the call, and the
			// cancel must go through although ctx is done.
			if _, err := e.CallMethod(context.WithoutCancel(ctx), "cancel", api.CancelParams{Continuation: p.Continuation}); err != nil && !isCode(err, api.CodeExpired) && !isCode(err, api.CodeUnknownContinuation) {
				return nil, errors.Join(fmt.Errorf("arbor: %s: %w", method, ctx.Err()), err)
			}
			return nil, fmt.Errorf("arbor: %s: %w", method, ctx.Err())
		}
		rp := api.ResumeParams{Continuation: p.Continuation}
		if cerr != nil {
			rp.Error = llmError(cerr)
		} else {
			if resp.LatencyMs == 0 {
				// In nanoseconds: an answer within the microsecond (a
				// scripted model) still has a latency, not none.
				resp.LatencyMs = float64(time.Since(start).Nanoseconds()) / 1e6
			}
			rp.Response = &resp
		}
		// The resume itself is not cancelled half-way: it is quick, and a
		// resume lost to ctx would leave the continuation waiting until it
		// expires. A ctx that ends meanwhile is seen before the next call.
		raw, err = e.CallMethod(context.WithoutCancel(ctx), "resume", rp)
	}
	return nil, err
}

// llmError maps a Completer's error onto the codes of the wire contract.
func llmError(err error) *api.LLMError {
	var le *api.LLMError
	switch {
	case errors.As(err, &le):
		return &api.LLMError{Code: le.Code, Message: le.Message}
	case errors.Is(err, context.DeadlineExceeded):
		return &api.LLMError{Code: api.LLMTimeout, Message: err.Error()}
	}
	return &api.LLMError{Code: api.LLMHTTP, Message: err.Error()}
}

// QueryLLM runs tiered retrieval with a model for tiers 3 and 4 (p.LLM is
// set for the caller). The result says which tier answered; its LLM field
// traces every model call.
func (e *Engine) QueryLLM(ctx context.Context, p api.QueryParams, c Completer) (api.QueryResult, error) {
	p.LLM = true
	return decodeResult[api.QueryResult]("query")(e.Drive(ctx, "query", p, c))
}

// CurateFrom turns raw material into entries through the model (the
// curate feedback loop). Nothing reaches the tree before the loop ends; a
// cancelled ctx leaves it unchanged.
func (e *Engine) CurateFrom(ctx context.Context, p api.CurateFromParams, c Completer) (api.CurateFromResult, error) {
	return decodeResult[api.CurateFromResult]("curateFrom")(e.Drive(ctx, "curateFrom", p, c))
}
