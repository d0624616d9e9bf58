package search

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"github.com/blugelabs/bluge/numeric"
	bsearch "github.com/blugelabs/bluge/search"
)

// idField is the field bluge keeps a document's identifier in, the path: a
// doc value as well as a stored field.
const idField = "_id"

// top returns the n best documents s matches (n ≥ 1), by score descending
// then path ascending, with the locations of their terms. It closes s.
// Once it holds n documents, it tells a pruning s (see maxScore) the
// lowest score it keeps: s may skip any document scoring less.
//
// bluge's TopN collector sorted by "-_score", "_id" reads the path of
// every match to build its sort key, decompressing a chunk of paths in
// each segment at every search, although a path only breaks a tie of
// scores. top keeps the documents by score alone, with every document
// tying with the n-th best score, and reads the paths of the tied ones
// once at the end. Paths, not document numbers, break the ties: merges
// renumber documents.
func top(s bsearch.Searcher, n int) ([]*bsearch.DocumentMatch, error) {
	defer func() { _ = s.Close() }()
	ctx := bsearch.NewSearchContext(n+1+s.DocumentMatchPoolSize(), 0)
	var (
		best minScores                // at most n, the lowest score first
		ties []*bsearch.DocumentMatch // out of best, with best's lowest score
	)
	p, _ := s.(pruner)
	for {
		d, err := s.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		switch {
		case len(best) < n:
			heap.Push(&best, d)
			if len(best) == n && p != nil {
				p.atLeast(best[0].Score)
			}
		case scoreKey(d) < scoreKey(best[0]):
			ctx.DocumentMatchPool.Put(d)
		case scoreKey(d) == scoreKey(best[0]):
			ties = append(ties, d)
		default:
			out := best[0]
			best[0] = d
			heap.Fix(&best, 0)
			if scoreKey(out) == scoreKey(best[0]) {
				ties = append(ties, out)
				break
			}
			// The lowest score rose: out and its ties are no longer among
			// the n best.
			ctx.DocumentMatchPool.Put(out)
			for _, t := range ties {
				ctx.DocumentMatchPool.Put(t)
			}
			ties = ties[:0]
			if p != nil {
				p.atLeast(best[0].Score)
			}
		}
	}
	docs := append([]*bsearch.DocumentMatch(best), ties...)
	paths, err := tiedPaths(docs)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b *bsearch.DocumentMatch) int {
		if c := cmp.Compare(scoreKey(b), scoreKey(a)); c != 0 {
			return c
		}
		return strings.Compare(paths[a], paths[b])
	})
	docs = docs[:min(len(docs), n)]
	for _, d := range docs {
		d.Complete(nil)
	}
	return docs, nil
}

// tiedPaths reads the paths of the documents whose score another document
// of docs has too.
func tiedPaths(docs []*bsearch.DocumentMatch) (map[*bsearch.DocumentMatch]string, error) {
	count := make(map[int64]int, len(docs))
	for _, d := range docs {
		count[scoreKey(d)]++
	}
	var tied []*bsearch.DocumentMatch
	for _, d := range docs {
		if count[scoreKey(d)] > 1 {
			tied = append(tied, d)
		}
	}
	// Each path is read from the document's stored fields rather than its
	// doc value: loading a chunk of doc values decompresses the paths of
	// its 1,024 documents and allocates twice for each (ice reads every
	// offset by a copy), for a handful of documents, or a few dozen of one
	// conversation, that tie: about 2.6 chunks and 6,000 allocations per
	// question of a 100,000-entry tree, a third of the question's. In
	// document order, neighbours' stored fields are read from one block.
	slices.SortFunc(tied, func(a, b *bsearch.DocumentMatch) int { return cmp.Compare(a.Number, b.Number) })
	paths := make(map[*bsearch.DocumentMatch]string, len(tied))
	for _, d := range tied {
		var path []byte
		err := d.VisitStoredFields(func(field string, value []byte) bool {
			if field == idField {
				path = value
				return false
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("read the path of document %d: %w", d.Number, err)
		}
		if path == nil {
			return nil, fmt.Errorf("document %d has no path", d.Number)
		}
		// A copy: the value is in the reader's buffer, which the next
		// document's stored fields overwrite.
		paths[d] = string(path)
	}
	return paths, nil
}

// scoreKey orders scores as bluge's "-_score" sort does (its sortable
// integer of the float), so that the order is bluge's for every float.
func scoreKey(d *bsearch.DocumentMatch) int64 {
	return numeric.Float64ToInt64(d.Score)
}

// minScores is a heap of documents, the lowest score first.
type minScores []*bsearch.DocumentMatch

func (h minScores) Len() int           { return len(h) }
func (h minScores) Less(i, j int) bool { return scoreKey(h[i]) < scoreKey(h[j]) }
func (h minScores) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push implements heap.Interface.
func (h *minScores) Push(x any) { *h = append(*h, x.(*bsearch.DocumentMatch)) }

// Pop implements heap.Interface.
func (h *minScores) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}
