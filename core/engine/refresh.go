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

// Signals keeps the lifecycle signals of engines sharing a root in step
// (docs/ABI.md §4.18): it counts the accesses and takes the signals
// another engine hands over, and returns what this one counted and
// changed since the last call. It writes nothing itself; accesses it
// counts are flushed as any.
func (e *Engine) Signals(p api.SignalsParams) (api.SignalsResult, error) {
	return e.signals.Exchange(p)
}
