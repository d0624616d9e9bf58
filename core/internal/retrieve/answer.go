package retrieve

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/lifecycle"
	"github.com/arbormem/arbor/core/internal/search"
)

// directPath is the entry a tier-2 answer presents as the answer, or "".
func directPath(o outcome) string {
	if o.res.TierName != "direct" || len(o.hits) == 0 {
		return ""
	}
	return o.hits[0].Path
}

// answer finishes a query result: it orders the results by the compound
// score of the lifecycle (docs/design.md), keeping the entry a direct answer presents first
// (that answer was decided on ŝ alone), then counts the access to it.
func (rv *Retriever) answer(o outcome, answered string, start time.Time) outcome {
	p, now := rv.signals.Model(), rv.clock.Now()
	hits := make([]search.Hit, len(o.hits))
	copy(hits, o.hits) // the cache keeps the unranked order
	// Relevance is the raw BM25 score relative to the best hit's: ŝ =
	// s/(1+s) squeezes every good hit into a few hundredths below 1, where
	// any recency or importance difference would outweigh it.
	top := 0.0
	for _, h := range hits {
		top = max(top, h.Raw)
	}
	scores := make(map[string]float64, len(hits))
	for i := range hits {
		s := rv.signals.Of(hits[i].Path).At(p, now)
		rec := lifecycle.Recency(p, rv.updatedAt(hits[i].Path), now)
		rel := 0.0
		if top > 0 {
			rel = hits[i].Raw / top
		}
		score := lifecycle.Score(p, rel, s, rec)
		scores[hits[i].Path] = score
		hits[i].Lifecycle = &api.Rank{Importance: round4(s.Importance), Maturity: s.Maturity, Recency: round4(rec), Score: round4(score)}
	}
	// The lifecycle reorders the entries, then the contexts (a folder
	// overview only fills the slots entries leave, see search.Search).
	// Equal scores go by path, as everywhere in a ranking. Hits sorted by
	// a key (byKey) stay in that order.
	if o.by == nil {
		slices.SortFunc(hits, func(a, b search.Hit) int {
			if c := lead(a, b, answered); c != 0 {
				return c
			}
			if c := cmp.Compare(scores[b.Path], scores[a.Path]); c != 0 {
				return c
			}
			return strings.Compare(a.Path, b.Path)
		})
	}
	o.hits = hits
	o.res.Results = make([]api.Hit, len(hits))
	for i, h := range hits {
		o.res.Results[i] = h.Hit
	}
	if answered != "" {
		rv.signals.Access(answered)
	}
	o.res.TookMs = api.TookMs(start)
	return o
}

// lead orders the hit at answered (if any) first, then entries before
// contexts: what every ordering of a ranking's hits starts with.
func lead(a, b search.Hit, answered string) int {
	if pa, pb := a.Path == answered, b.Path == answered; pa != pb {
		if pa {
			return -1
		}
		return 1
	}
	return cmp.Compare(group(a), group(b))
}

// group is the rank of a hit's group: entries, then context files.
func group(h search.Hit) int {
	if h.Kind == "context" {
		return 1
	}
	return 0
}

// updatedAt is when the entry at path last changed (tree.Entry.Changed);
// zero for context files and notes without dates.
func (rv *Retriever) updatedAt(path string) time.Time {
	if en, ok := rv.catalog.Get(path); ok {
		return en.Changed()
	}
	return time.Time{}
}

// saidAt is when the knowledge of the entry at path is from, for a
// question about a time (tree.Entry.SaidAt).
func (rv *Retriever) saidAt(path string) time.Time {
	if en, ok := rv.catalog.Get(path); ok {
		return en.SaidAt()
	}
	return time.Time{}
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
