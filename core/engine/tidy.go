package engine

import (
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/curate"
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
		var all curate.Result
		for _, s := range plan {
			r := e.applySuggestion(s)
			for _, a := range r.Applied {
				all.Add(a)
			}
			if s.Kind == api.TidySplit && r.Summary.Failed > 0 {
				res.Undone += e.undoSplit(s, r)
			}
		}
		out := all.API()
		res.Applied = &out
	}
	res.TookMs = api.TookMs(start)
	return res, nil
}

// applySuggestion applies the operations of s in order and stops at the
// first that fails: those after it build on it (a split deletes the entry
// once its parts are written; a merge's text assumes the merges before
// it), and are reported as not tried.
func (e *Engine) applySuggestion(s api.TidySuggestion) curate.Result {
	var r curate.Result
	for i, op := range s.Operations {
		one := e.curate([]api.Operation{op})
		r.Add(one.Applied[0])
		if one.Summary.Failed == 0 {
			continue
		}
		for _, rest := range s.Operations[i+1:] {
			r.Add(curate.Applied{Applied: api.Applied{Type: rest.Type, Path: rest.Path, To: rest.To, Status: api.StatusFailed,
				Message: "not tried: an earlier operation of this tidy suggestion failed"}})
		}
		break
	}
	return r
}

// undoSplit removes the parts a split added when it failed before
// deleting the entry it splits, which is still whole: the tree then holds
// the split not at all. After the DELETE, every part is in the tree (the
// first at its own path if the MOVE failed), so nothing is undone. It
// returns the operations undone.
func (e *Engine) undoSplit(s api.TidySuggestion, r curate.Result) int {
	del := len(s.Operations) - 2 // tidy.split: the ADDs, DELETE, MOVE
	if del < len(r.Applied) && r.Applied[del].Status == api.StatusSuccess {
		return 0
	}
	why := ""
	for _, a := range r.Applied {
		if a.Status != api.StatusSuccess {
			why = a.Message
			break
		}
	}
	var undo []api.Operation
	for _, a := range r.Applied[:min(del, len(r.Applied))] {
		if a.Type == api.OpAdd && a.Status == api.StatusSuccess {
			undo = append(undo, api.Operation{Type: api.OpDelete, Path: a.Path, Reason: "tidy: undo the split of " + s.Paths[0] + ", which failed: " + why})
		}
	}
	if len(undo) > 0 {
		e.curate(undo)
	}
	return len(undo)
}

// tidyTree is what a tidy plan reads: the catalog, and each entry's
// lifecycle signal as of the engine's clock.
func (e *Engine) tidyTree() tidy.Tree {
	model, now := e.signals.Model(), e.clock.Now()
	return tidy.Tree{Catalog: e.catalog, Now: now, Signal: func(p string) lifecycle.Signal { return e.signals.Of(p).At(model, now) }}
}
