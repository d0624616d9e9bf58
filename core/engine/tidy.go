package engine

import (
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/lifecycle"
	"github.com/arbormem/arbor/core/internal/tidy"
)

// Tidy plans the upkeep of the tree (docs/ABI.md §4.17) and, with Apply,
// carries the plan out through curate, one curate call per suggestion. It
// first takes in what changed on disk, as "status" does, so that the plan
// is made from the files as they are. Merges get the deterministic text;
// TidyLLM has the model write them.
func (e *Engine) Tidy(p api.TidyParams) (api.TidyResult, error) {
	start := time.Now()
	p, plan, err := e.tidyPlan(p)
	if err != nil {
		return api.TidyResult{}, err
	}
	return e.tidyResult(p, plan, start), nil
}

// TidyLLM is Tidy, but with p.Apply and p.LLM the text of each merge is
// written by the model (docs/ABI.md §6.7): it returns an api.Pending, and
// the final api.TidyResult comes from Resume. Nothing is written before
// the last model call is answered; a cancelled or expired call writes
// nothing.
func (e *Engine) TidyLLM(p api.TidyParams) (any, error) {
	if !p.LLM || !p.Apply {
		return e.Tidy(p)
	}
	start := time.Now()
	c, err := e.loops.NewConv(p.TokenBudget, p.MaxIterations, e.loops.Options().CurateTokenBudget)
	if err != nil {
		return nil, err
	}
	p, plan, err := e.tidyPlan(p)
	if err != nil {
		return nil, err
	}
	if !hasMerge(plan.Suggestions) {
		return e.tidyResult(p, plan, start), nil
	}
	return tidy.StartModel(tidy.ModelConfig{Loops: e.loops, Catalog: e.catalog, Finish: func(written []tidy.Written, c *agent.Conv) any {
		// The tree may have changed while the model worked: the plan
		// applied is made again from the files as they are now, and takes
		// the model's text only for a group it saw as it is.
		p, plan, err := e.tidyPlan(p)
		if err != nil {
			return err // nothing was written
		}
		plan.Suggestions = tidy.WithModel(plan.Suggestions, written, e.catalog)
		res := e.tidyResult(p, plan, start)
		res.LLM = &c.Trace
		return res
	}}, plan.Suggestions, c)
}

func hasMerge(plan []api.TidySuggestion) bool {
	for _, s := range plan {
		if s.Kind == api.TidyMerge {
			return true
		}
	}
	return false
}

// tidyPlan checks p, takes in what changed on disk and plans. The plan
// holds the suggestions the answer shows, or with an apply those it
// applies (all, unless a limit was given), and counts the others.
func (e *Engine) tidyPlan(p api.TidyParams) (api.TidyParams, tidy.Planned, error) {
	p, err := p.Check(e.signals.Model().InitialImportance)
	if err != nil {
		return p, tidy.Planned{}, err
	}
	if p.Apply {
		if err := e.Writable("tidy"); err != nil {
			return p, tidy.Planned{}, err
		}
	}
	if _, err := e.Refresh(api.RefreshParams{}); err != nil {
		return p, tidy.Planned{}, err
	}
	tt := e.tidyTree()
	tt.Read = host.Reporter(e.log, api.PhaseRead)
	keep := p.Shown()
	if p.Apply {
		keep = p.Applies()
	}
	return p, tidy.Plan(tt, p, keep), nil
}

// tidyResult is the answer of a plan, applied when p asks: the first
// suggestions up to p's limit, and with an apply the outcomes of their
// operations and the summary of every operation applied.
func (e *Engine) tidyResult(p api.TidyParams, plan tidy.Planned, start time.Time) api.TidyResult {
	shown := plan.Suggestions
	if n := p.Shown(); n > 0 && len(shown) > n {
		shown = shown[:n]
	}
	res := api.TidyResult{Suggestions: shown, Counts: plan.Counts, Omitted: plan.Total - len(shown), Entries: plan.Entries}
	if res.Suggestions == nil {
		res.Suggestions = []api.TidySuggestion{}
	}
	if !p.Apply {
		// Shown to be applied later through curate: each operation names
		// the version it was planned from (docs/ABI.md §4.17).
		tidy.Based(shown, e.curator.Current)
	}
	if p.Apply {
		all, undone := tidy.Apply(plan.Suggestions, e.curate, host.Reporter(e.log, api.PhaseWrite))
		// Every suggestion's operations have one outcome each, in order
		// (tidy.Apply): those of the suggestions shown come first.
		ops := 0
		for _, s := range shown {
			ops += len(s.Operations)
		}
		all.Applied = all.Applied[:min(ops, len(all.Applied))]
		out := all.API()
		res.Applied, res.Undone = &out, undone
	}
	res.TookMs = api.TookMs(start)
	return res
}

// tidyTree is what a tidy plan reads: the catalog, and each entry's
// lifecycle signal as of the engine's clock.
func (e *Engine) tidyTree() tidy.Tree {
	model, now := e.signals.Model(), e.clock.Now()
	return tidy.Tree{Catalog: e.catalog, Now: now, Signal: func(p string) lifecycle.Signal { return e.signals.Of(p).At(model, now) }}
}
