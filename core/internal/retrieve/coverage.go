package retrieve

import (
	"fmt"
	"math/bits"
	"path"

	"github.com/arbormem/arbor/core/internal/search"
)

// Episode coverage (session-level evidence): the sibling rule reads an
// episode through its pieces among the rerankPool best matches, which are
// the turns that match the question best on their own. A conversation
// often tells what a question asks in pieces spread over the session (the
// support group in one turn, the day it met in another), none of which
// matches well alone, and a whole-session BM25 ranks such sessions first
// where Arbor's turn ranking did not (bench/retrieval/mechanisms.md). So
// a piece's raw score is multiplied by 1 + coverageWeight·c, where c is
// the share of the question's terms that some entry of its episode (every
// entry of its folder, not only those in the pool) says in its own words.
// Counting the pool's pieces alone, or a term's rarity in the pool, did
// worse on the benchmark's tuning half.
//
// An episode's entries are read from the own-words cache, and parsed
// again in a tree too large for the catalog to keep them (maxParsed in
// core/internal/catalog, 1,024): coverageBudget bounds how many a question
// reads, half of those, episodes taken in the order of their best match;
// the episodes beyond it are left alone, and the reason says how many. On
// the benchmark 512 ranks as 1,024 does.
const (
	coverageWeight = 1.0
	coverageBudget = 512
)

// maxSaid is how many of a question's terms Ranked.Said reports.
const maxSaid = 64

// coverage raises the scores of the pieces by their episode's coverage of
// the question's terms, reading at most budget entries, and returns the
// reason code of what it did, or "" when no hit is a piece.
func (rv *Retriever) coverage(hits []search.Hit, said func(search.Words) uint64, terms, budget int) string {
	if rv.off.EpisodeCoverage || terms == 0 {
		return ""
	}
	terms = min(terms, maxSaid)
	share := map[string]float64{} // folder → its share of the question's terms
	read, skipped := 0, 0
	for _, h := range hits {
		d := path.Dir(h.Path)
		if _, seen := share[d]; seen || h.Kind == "context" {
			continue
		}
		en, ok := rv.catalog.Get(h.Path)
		if !ok || !isReply(en) {
			continue
		}
		folder := rv.catalog.Folder(d)
		if read+len(folder) > budget {
			share[d] = -1
			skipped++
			continue
		}
		read += len(folder)
		var m uint64
		for _, p := range folder {
			if e, ok := rv.catalog.Get(p); ok {
				m |= said(rv.ownOf(e))
			}
		}
		share[d] = float64(bits.OnesCount64(m)) / float64(terms)
	}
	n, best, bestDir := 0, 0.0, ""
	for i := range hits {
		c, ok := share[path.Dir(hits[i].Path)]
		if !ok || c < 0 || hits[i].Kind == "context" {
			continue
		}
		hits[i].Raw *= 1 + coverageWeight*c
		n++
		if d := path.Dir(hits[i].Path); c > best || (c == best && d < bestDir) {
			best, bestDir = c, d
		}
	}
	if n == 0 {
		return ""
	}
	reason := fmt.Sprintf("episode coverage: %d of the %d best matches are pieces of episodes whose entries say some of the question's terms, their scores ×(1 + %g × the share said, %s with %.2f)",
		n, len(hits), coverageWeight, bestDir, best)
	switch {
	case skipped == 1:
		reason += fmt.Sprintf("; 1 more episode left alone (a question reads at most %d entries)", budget)
	case skipped > 1:
		reason += fmt.Sprintf("; %d more episodes left alone (a question reads at most %d entries)", skipped, budget)
	}
	return reason
}
