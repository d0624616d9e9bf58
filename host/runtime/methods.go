package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/arbormem/arbor/core/api"
)

// envelope is a response of docs/ABI.md §3.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *api.Error      `json:"error"`
}

// CallMethod sends one request for method with params (marshaled to JSON;
// nil sends none) and returns the raw result. An error the engine reports
// is returned as an *api.Error, whose Code is stable (docs/ABI.md §3).
func (e *Engine) CallMethod(ctx context.Context, method string, params any) (json.RawMessage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.methodLocked(ctx, method, params)
}

func (e *Engine) methodLocked(ctx context.Context, method string, params any) (json.RawMessage, error) {
	e.before(ctx, method)
	defer e.after(ctx, method)
	return e.rawMethod(ctx, method, params)
}

// rawMethod is methodLocked without catching up with the disk first.
func (e *Engine) rawMethod(ctx context.Context, method string, params any) (json.RawMessage, error) {
	e.nextID++
	req := struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{e.nextID, method, params}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("arbor: %s: encode params: %w", method, err)
	}
	out, err := e.callLocked(ctx, method, b)
	if err != nil {
		return nil, err
	}
	var env envelope
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("arbor: %s: invalid response from the engine: %w", method, err)
	}
	if env.Error != nil {
		return nil, env.Error
	}
	if method == "open" && e.follow != nil {
		e.follow.opened = true
	}
	return env.Result, nil
}

// isCode reports whether err is an *api.Error with the given code.
func isCode(err error, code string) bool {
	var e *api.Error
	return errors.As(err, &e) && e.Code == code
}

// method calls method and decodes its result into a new R. A read
// method (readMethods) goes to a reader when e has readers.
func method[R any](ctx context.Context, e *Engine, name string, params any) (R, error) {
	if readMethods[name] {
		r, release, err := e.reader(ctx)
		if err != nil {
			var zero R
			return zero, err
		}
		if r != nil {
			defer release()
			e = r
		}
	}
	return decodeResult[R](name)(e.CallMethod(ctx, name, params))
}

// decodeResult decodes a method's raw result, or passes its error on.
func decodeResult[R any](name string) func(json.RawMessage, error) (R, error) {
	return func(raw json.RawMessage, err error) (R, error) {
		var r R
		if err != nil {
			return r, err
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return r, fmt.Errorf("arbor: %s: decode result: %w", name, err)
		}
		return r, nil
	}
}

// Open opens the memory root: reads and indexes the tree. It must come
// before every other method.
func (e *Engine) Open(ctx context.Context, p api.OpenParams) (api.OpenResult, error) {
	return method[api.OpenResult](ctx, e, "open", p)
}

// Curate applies operations in order and reports each one; a failed
// operation is not an error (see api.CurateResult).
func (e *Engine) Curate(ctx context.Context, p api.CurateParams) (api.CurateResult, error) {
	return method[api.CurateResult](ctx, e, "curate", p)
}

// Search returns ranked full-text results.
func (e *Engine) Search(ctx context.Context, p api.SearchParams) (api.SearchResult, error) {
	return method[api.SearchResult](ctx, e, "search", p)
}

// Query runs tiered retrieval and says which tier answered.
func (e *Engine) Query(ctx context.Context, p api.SearchParams) (api.QueryResult, error) {
	return method[api.QueryResult](ctx, e, "query", p)
}

// Read returns one entry or context file with its relations and backlinks.
func (e *Engine) Read(ctx context.Context, p api.ReadParams) (api.ReadResult, error) {
	return method[api.ReadResult](ctx, e, "read", p)
}

// Tree returns the folder at p.Path (the root by default) as nested nodes.
func (e *Engine) Tree(ctx context.Context, p api.TreeParams) (*api.Node, error) {
	return method[*api.Node](ctx, e, "tree", p)
}

// Flush writes the search index's changes to .arbor/index and pending
// lifecycle signals to .arbor/state.json now; Close does it too.
func (e *Engine) Flush(ctx context.Context) (api.FlushResult, error) {
	return method[api.FlushResult](ctx, e, "flush", nil)
}

// Stats counts what the tree holds.
func (e *Engine) Stats(ctx context.Context) (api.StatsResult, error) {
	return method[api.StatsResult](ctx, e, "stats", nil)
}

// Recent lists the entries changed since a time, newest first.
func (e *Engine) Recent(ctx context.Context, p api.RecentParams) (api.RecentResult, error) {
	return method[api.RecentResult](ctx, e, "recent", p)
}

// Status is the tree at a glance, after a scan for what changed on disk.
func (e *Engine) Status(ctx context.Context) (api.StatusResult, error) {
	return method[api.StatusResult](ctx, e, "status", nil)
}

// Tidy plans the upkeep of the tree and, with p.Apply, applies it
// (docs/ABI.md §4.17), merging near-duplicates deterministically: it
// drives no model, so p.LLM is ignored. Drive "tidy" with p.LLM set to
// have a model write the merges (§6.7).
func (e *Engine) Tidy(ctx context.Context, p api.TidyParams) (api.TidyResult, error) {
	p.LLM = false
	return method[api.TidyResult](ctx, e, "tidy", p)
}

// Merge merges the files two versions of a tree changed since their common
// ancestor (docs/ABI.md §4.15); it needs no Open.
func (e *Engine) Merge(ctx context.Context, p api.MergeParams) (api.MergeResult, error) {
	return method[api.MergeResult](ctx, e, "merge", p)
}

// Context builds an entry's context for a prompt: the entry with its
// relations and backlinks, breadth-first within a token budget.
func (e *Engine) Context(ctx context.Context, p api.ContextParams) (api.ContextResult, error) {
	return method[api.ContextResult](ctx, e, "context", p)
}
