package engine

import (
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/lifecycle"
	"github.com/arbormem/arbor/core/internal/tidy"
)

// Tidy plans the upkeep of the tree (docs/ABI.md §4.17) and, with Apply,
// carries the plan out through curate, one curate call per suggestion. It
// first takes in what changed on disk, as "status" does, so that the plan
// is made from the files as they are.
func (e *Engine) Tidy(p api.TidyParams) (api.TidyResult, error) {
	start := time.Now()
	p, err := p.Check(e.signals.Model().InitialImportance)
	if err != nil {
		return api.TidyResult{}, err
	}
	if p.Apply {
		if err := e.Writable("tidy"); err != nil {
			return api.TidyResult{}, err
		}
	}
	if _, err := e.Refresh(api.RefreshParams{}); err != nil {
		return api.TidyResult{}, err
	}
	tt := e.tidyTree()
	tt.Read = host.Reporter(e.log, api.PhaseRead)
	plan, n := tidy.Plan(tt, p)
	res := api.TidyResult{Suggestions: plan, Counts: map[string]int{}, Entries: n}
	if res.Suggestions == nil {
		res.Suggestions = []api.TidySuggestion{}
	}
	for _, k := range p.Kinds {
		res.Counts[k] = 0
	}
	for _, s := range plan {
		res.Counts[s.Kind]++
	}
	if p.Apply {
		all, undone := tidy.Apply(plan, e.curate)
		out := all.API()
		res.Applied, res.Undone = &out, undone
	}
	res.TookMs = api.TookMs(start)
	return res, nil
}

// tidyTree is what a tidy plan reads: the catalog, and each entry's
// lifecycle signal as of the engine's clock.
func (e *Engine) tidyTree() tidy.Tree {
	model, now := e.signals.Model(), e.clock.Now()
	return tidy.Tree{Catalog: e.catalog, Now: now, Signal: func(p string) lifecycle.Signal { return e.signals.Of(p).At(model, now) }}
}
