package engine

import (
	"time"

	"github.com/arbormem/arbor/core/api"
)

// Refresh brings the engine in step with files others changed on disk
// (docs/ABI.md §4.12): the catalog reads again what changed
// (curate.Curator.Refresh), the index takes it in, any change empties
// the query cache so that no answer comes from text that is gone, and
// entries that are gone lose their signals (a new file at the path is
// new knowledge). It writes nothing.
func (e *Engine) Refresh(p api.RefreshParams) (api.RefreshResult, error) {
	start := time.Now()
	res, removed, err := e.curator.Refresh(p.Paths)
	e.reindex() // what was read before an error is indexed too
	for _, q := range removed {
		e.signals.Deleted(q)
	}
	if err != nil {
		return api.RefreshResult{}, err
	}
	res.TookMs = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}
