package retrieve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/search"
)

// rrfK is the constant of reciprocal rank fusion (Cormack, Clarke and
// Büttcher, SIGIR 2009): a file ranked r by one list adds 1/(rrfK + r) to
// its fused score. 60 is the paper's value and every search engine's
// default (Elasticsearch, OpenSearch, Vespa); it was not tuned here.
const rrfK = 60

// fuse merges, when the host has an embedding model, the pool of BM25
// matches with the files nearest the question by cosine, by reciprocal
// rank (docs/ABI.md §4.4, "Embeddings"). The fused order then carries the
// pool's raw BM25 scores by rank — the i-th fused hit gets the i-th best
// raw score, hits past the pool's length the last score × n/i — so that
// the evidence rules and the direct-answer rule that follow read scores on
// the scale they were set for. A pool BM25 left empty stays empty: what
// shares no word with the tree is out of its domain, whatever is nearest.
// Only the files keep keeps are fused (a query's filters). It returns the reason's note ("" when embeddings are off) and whether
// the answer lacks the vectors it should have had (an embedding call
// failed), which must then not be cached.
func (rv *Retriever) fuse(r *search.Result, question string, pool int, keep func(path string) bool) (string, bool) {
	if rv.vectors == nil || rv.vectors.Len() == 0 || len(r.Hits) == 0 {
		return "", false
	}
	q, err := rv.vectors.Question(question)
	if err != nil {
		rv.log.Log("warn", fmt.Sprintf("embeddings: the question could not be embedded: %v; ranked by BM25 alone", err))
		return fmt.Sprintf("embeddings: the question could not be embedded (%v); ranked by BM25 alone", err), true
	}
	near := rv.vectors.Nearest(q, pool, keep)
	fused := map[string]float64{}
	hits := make(map[string]search.Hit, len(r.Hits)+len(near))
	raws := make([]float64, len(r.Hits))
	for i, h := range r.Hits {
		fused[h.Path] += 1.0 / float64(rrfK+i+1)
		hits[h.Path] = h
		raws[i] = h.Raw
	}
	added := 0
	for i, n := range near {
		if _, ok := hits[n.Path]; !ok {
			h, ok := rv.nearHit(n.Path)
			if !ok {
				continue // gone from the tree since it was embedded
			}
			hits[n.Path] = h
			added++
		}
		fused[n.Path] += 1.0 / float64(rrfK+i+1)
	}
	order := make([]string, 0, len(hits))
	for p := range hits {
		order = append(order, p)
	}
	slices.SortFunc(order, func(a, b string) int {
		if c := cmp.Compare(fused[b], fused[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	order = order[:min(len(order), pool)]
	slices.SortFunc(raws, func(a, b float64) int { return cmp.Compare(b, a) })
	out := make([]search.Hit, len(order))
	moved := 0
	for i, p := range order {
		h := hits[p]
		if i < len(raws) {
			h.Raw = raws[i]
		} else {
			h.Raw = raws[len(raws)-1] * float64(len(raws)) / float64(i+1)
		}
		h.Score = search.Normalize(h.Raw)
		if i >= len(r.Hits) || r.Hits[i].Path != p {
			moved++
		}
		out[i] = h
	}
	r.Hits = out
	r.Total += added
	return fmt.Sprintf("embeddings: the %d best matches fused with the %d files nearest the question by meaning (model %s) by reciprocal rank (k = %d): %d found by meaning alone, %d of %d places changed, the fused order carrying the matches' scores by rank",
		len(raws), len(near), rv.vectors.Model(), rrfK, added, moved, len(out)), false
}

// nearHit is the hit of a file found by meaning alone: what search would
// show of it, its excerpt the start of its text.
func (rv *Retriever) nearHit(p string) (search.Hit, bool) {
	var d search.Doc
	if en, ok := rv.catalog.Get(p); ok {
		d = catalog.EntryDoc(en)
	} else if ctx, ok := rv.catalog.Context(p); ok {
		d = catalog.ContextDoc(ctx)
	} else {
		return search.Hit{}, false
	}
	h := search.Hit{}
	h.Path, h.Kind, h.Title, h.Summary = d.Path, d.Kind, d.Title, d.Summary
	if h.Kind == "" {
		h.Kind = "entry"
	}
	text := strings.Join(strings.Fields(d.Content), " ")
	if r := []rune(text); len(r) > excerptRunes {
		text = strings.TrimRight(string(r[:excerptRunes]), " ") + "…"
	}
	h.Excerpt = text
	return h, true
}

// excerptRunes is the length of an excerpt (docs/ABI.md §4.3).
const excerptRunes = 240
