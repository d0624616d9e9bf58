package engine

import (
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/gather"
)

// Context builds the context of an entry for a prompt (docs/ABI.md §4.16):
// the entry named by p.Path, or the best search match of p.Query, with
// its relations and backlinks breadth-first within a token budget. It
// counts as an access of that entry, as "read" does.
func (e *Engine) Context(p api.ContextParams) (api.ContextResult, error) {
	start := time.Now()
	depth, budget, err := p.Check()
	if err != nil {
		return api.ContextResult{}, err
	}
	var root string
	if p.Query != "" {
		if root, err = e.bestEntry(p.Query, p.Archived); err != nil {
			return api.ContextResult{}, err
		}
	} else {
		if root, err = e.locate(p.Path); err != nil {
			return api.ContextResult{}, err
		}
		if _, ok := e.catalog.Get(root); !ok {
			if _, isContext := e.catalog.Context(root); isContext {
				return api.ContextResult{}, api.Errorf(api.CodeNotFound, "%s is a context file, not an entry: read it with \"read\"", root)
			}
			return api.ContextResult{}, e.missing(root)
		}
	}
	res := gather.Build(e.catalog, root, depth, budget, p.Archived)
	res.Query = p.Query
	e.signals.Access(root)
	res.TookMs = api.TookMs(start)
	return res, nil
}

// bestEntry returns the entry "search" ranks first for q. Search ranks
// context files after every entry, so when its first result is not an
// entry, no entry matches.
func (e *Engine) bestEntry(q string, archived bool) (string, error) {
	r, err := e.Search(api.SearchParams{Query: q, Limit: 1, Filters: api.Filters{Archived: archived}})
	if err != nil {
		return "", err
	}
	if len(r.Results) == 0 || r.Results[0].Kind != "entry" {
		return "", api.Errorf(api.CodeNotFound, "no entry matches %q", q)
	}
	return r.Results[0].Path, nil
}
