package search

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	bsearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
)

// Top-k pruning. A query of many terms matches a large part of a big index
// through its common terms, and scoring every match was most of a query's
// time (bench/scale). top only keeps the documents scoring at least the
// n-th best score so far, its threshold; the root disjunction of a pass
// learns that threshold and skips the documents that cannot reach it
// (MaxScore, Turtle and Flood 1995): each clause has an upper bound of its
// scores, and once the bounds of the weakest clauses add up to less than
// the threshold, a document matching only those cannot enter the n best,
// so those clauses are no longer walked, only advanced to the documents the
// other clauses match, and a document is dropped as soon as what it scored
// plus the bounds of the clauses not yet read falls below the threshold.
// A document that is kept is scored by every clause it matches, exactly as
// without pruning (sortedSum of the same scores), so rankings are the same
// bits. The number of matching documents, which pruning no longer sees, is
// counted apart on the postings' bitmaps (count.go).

// scoredQuery is a query of this package: it opens its searcher with an
// upper bound of the scores of the documents it matches (+Inf when it has
// none).
type scoredQuery interface {
	bluge.Query
	open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error)
}

// boundSlack is the relative margin added to a bound at each sum: the
// scores are computed in floating point, rounding at every operation (a few
// units in the last place, 2⁻⁵² each), and a bound must hold for the
// computed score, not only for the exact one. A document whose score
// equals the threshold must still be collected: ties are broken by path.
const boundSlack = 1e-9

// up is x with the margin of boundSlack.
func up(x float64) float64 { return x * (1 + boundSlack) }

// termQuery matches an index term in one field, scored by the field's
// similarity with a boost, as bluge's TermQuery does.
type termQuery struct {
	term, field string
	boost       float64
}

// Searcher implements bluge.Query.
func (q *termQuery) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, _, err := q.open(r, opts)
	return s, err
}

func (q *termQuery) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	var snap snapshot
	switch v := r.(type) {
	case snapshot:
		snap = v
	case *index.Snapshot: // bluge's own reader (its collector, in tests)
		snap = snapshot{Snapshot: v}
	default:
		return nil, 0, fmt.Errorf("search: term %q: reader %T is not an index snapshot", q.term, r)
	}
	s, err := newTermSearcher(snap, q.term, q.field, q.boost, opts)
	if err != nil {
		return nil, 0, err
	}
	return s, termBound(opts, q.field, q.boost, s.Count()), nil
}

// termBound is an upper bound of the scores of a term matching n documents
// in field, with a boost: the term searcher scores it with the scorer the
// field's similarity makes of the same figures.
func termBound(opts bsearch.SearcherOptions, field string, boost float64, n uint64) float64 {
	sim, ok := opts.SimilarityForField(field).(*bm25)
	if !ok {
		return math.Inf(1)
	}
	return sim.bound(boost, n)
}

// openClauses opens the searchers of clauses with their bounds, leaving out those
// that can match nothing.
func openClauses(clauses []bluge.Query, r bsearch.Reader, opts bsearch.SearcherOptions) ([]bsearch.Searcher, []float64, error) {
	ss := make([]bsearch.Searcher, 0, len(clauses))
	bounds := make([]float64, 0, len(clauses))
	for _, c := range clauses {
		var (
			s   bsearch.Searcher
			b   = math.Inf(1)
			err error
		)
		if sq, ok := c.(scoredQuery); ok {
			s, b, err = sq.open(r, opts)
		} else {
			s, err = c.Searcher(r, opts)
		}
		if err != nil {
			closeSearchers(ss)
			return nil, nil, err
		}
		if _, none := s.(*searcher.MatchNoneSearcher); none || s.Count() == 0 {
			_ = s.Close()
			continue
		}
		ss = append(ss, s)
		bounds = append(bounds, b)
	}
	return ss, bounds, nil
}

// openPruning opens a pruning disjunction (min ≤ 1) as a maxScore over the
// clauses of its clauses that are disjunctions of one clause needed (a
// term in each field, with its expansions) and over its other clauses:
// the bound of a term in one field is far tighter than the sum of its
// bounds in every field, since a document seldom holds a term in all.
//
// An expansion (expansionQuery) is opened as its terms, each a clause of
// its own, that maxScore scores together by their best (a max group): the
// bound of an expansion is that of its rarest term, so a frequent word one
// edit away ("back" for "black") was walked whole, document by document,
// with the rare ones; on its own, its low bound lets maxScore skip it. At a
// million entries expansions gave two fifths of a question's candidates.
func (q *disjunction) openPruning(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	var (
		ss     []bsearch.Searcher
		bounds []float64
		groups []int
		maxes  []int
		nmax   int
	)
	for g, c := range q.clauses {
		sub := []bluge.Query{c}
		if d, ok := c.(*disjunction); ok && d.min <= 1 && !d.prune {
			sub = d.clauses
		}
		for _, c := range sub {
			mx, cs := -1, []bluge.Query{c}
			if e, ok := c.(*expansionQuery); ok {
				var err error
				if cs, err = e.clauses(r); err != nil {
					closeSearchers(ss)
					return nil, 0, err
				}
				mx, nmax = nmax, nmax+1
			}
			s, b, err := openClauses(cs, r, opts)
			if err != nil {
				closeSearchers(ss)
				return nil, 0, err
			}
			ss, bounds = append(ss, s...), append(bounds, b...)
			for range s {
				groups, maxes = append(groups, g), append(maxes, mx)
			}
		}
	}
	if len(ss) == 0 {
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	}
	m := newMaxScore(ss, bounds, groups, maxes, nmax)
	return m, m.below[len(m.subs)], nil
}

// sumBound is the bound of a sum of scores with the given bounds.
func sumBound(bounds []float64) float64 {
	s := 0.0
	for _, b := range bounds {
		s += b
	}
	return up(s)
}

// pruner is a searcher that skips the documents scoring less than a
// threshold, which its caller raises as it learns better documents.
type pruner interface {
	bsearch.Searcher
	// atLeast tells the searcher that a document scoring less than min
	// will be dropped; min never decreases.
	atLeast(min float64)
}

// maxScore is a disjunction of clauses in groups, each clause with an
// upper bound of its scores, that skips the documents scoring less than
// the threshold it is given (see the comment at the top). Its score is that
// of a disjunction of disjunctions, one per group: the sortedSum over the
// groups of the sortedSum of their matching clauses' scores.
type maxScore struct {
	subs []bsearch.Searcher // by bound ascending
	// terms[i] is subs[i] when it is a term's searcher, nil otherwise:
	// called directly rather than through the interface, once or twice
	// per posting.
	terms  []*termSearcher
	groups []int // the group of each of subs
	// maxes is the max group of each of subs, -1 for none: the clauses of
	// a max group (an expansion's terms) count by their best score.
	maxes []int
	below []float64 // below[i]: a bound of the sum of the scores of subs[:i]
	currs []*bsearch.DocumentMatch
	min   float64 // the threshold
	ess   int     // subs[ess:] are essential: a match must hold one of them
	// next holds the essential subs that are not exhausted, as a heap by
	// their current document: the candidate is its first. A scan of every
	// essential clause at each candidate costs in proportion to the
	// clauses, and an expansion's terms, each a clause, make a long
	// question's hundred and more.
	next   docHeap
	inited bool
	cons   []*bsearch.DocumentMatch
	idx    []int // the subs of cons, in cons's order
	byGrp  []int // scratch: indexes of cons by group
	scores []float64
	sums   []float64
}

// newMaxScore builds a maxScore over searchers with their bounds, groups
// and max groups (nmax of them, numbered from 0; -1 for none).
func newMaxScore(ss []bsearch.Searcher, bounds []float64, groups, maxes []int, nmax int) *maxScore {
	order := make([]int, len(ss))
	for i := range order {
		order[i] = i
	}
	// A stable order: the clauses' order breaks ties of bounds.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bounds[a], bounds[b]) })
	m := &maxScore{
		subs:   make([]bsearch.Searcher, len(ss)),
		terms:  make([]*termSearcher, len(ss)),
		groups: make([]int, len(ss)),
		maxes:  make([]int, len(ss)),
		below:  make([]float64, len(ss)+1),
		currs:  make([]*bsearch.DocumentMatch, len(ss)),
		min:    math.Inf(-1),
	}
	// below: the bounds of the clauses outside max groups, summed, plus
	// the best bound of each max group so far (the last, by the order).
	sum := 0.0
	best := make([]float64, nmax)
	for i, o := range order {
		m.subs[i] = ss[o]
		m.terms[i], _ = ss[o].(*termSearcher)
		m.groups[i] = groups[o]
		m.maxes[i] = maxes[o]
		if maxes[o] < 0 {
			sum += bounds[o]
		} else {
			best[maxes[o]] = bounds[o]
		}
		b := sum
		for _, x := range best {
			b += x
		}
		m.below[i+1] = up(b)
	}
	return m
}

// sortStable sorts the indexes idx by less, stably (a small insertion sort:
// a document matches a handful of clauses).
func sortStable(idx []int, less func(a, b int) bool) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

func (m *maxScore) atLeast(min float64) {
	m.min = min
	ess := m.ess
	for m.ess < len(m.subs) && m.below[m.ess+1] < min {
		m.ess++
	}
	if m.ess != ess && m.inited {
		// The clauses no longer essential leave the heap; their current
		// documents stay, to be read if a candidate needs them.
		m.next.keep(func(i int32) bool { return int(i) >= m.ess })
	}
}

func (m *maxScore) init(ctx *bsearch.Context) error {
	m.inited = true
	for i, s := range m.subs {
		d, err := s.Next(ctx)
		if err != nil {
			return err
		}
		m.currs[i] = d
	}
	m.next = docHeap{currs: m.currs}
	for i := m.ess; i < len(m.subs); i++ {
		if m.currs[i] != nil {
			m.next.push(int32(i))
		}
	}
	return nil
}

// Next implements bluge's search.Searcher.
func (m *maxScore) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	if !m.inited {
		if err := m.init(ctx); err != nil {
			return nil, err
		}
	}
	for {
		// The candidate: the first document an essential clause matches.
		if len(m.next.idx) == 0 {
			return nil, nil
		}
		doc := m.currs[m.next.idx[0]].Number
		m.idx = m.idx[:0]
		for len(m.next.idx) > 0 && m.currs[m.next.idx[0]].Number == doc {
			m.idx = append(m.idx, int(m.next.pop()))
		}
		// In the order of the clauses, as a scan of them finds them.
		slices.Sort(m.idx)
		m.cons = m.cons[:0]
		sum := 0.0
		for _, i := range m.idx {
			c := m.currs[i]
			m.cons = append(m.cons, c)
			sum += c.Score
		}
		keep := true
		for i := m.ess - 1; i >= 0; i-- {
			if up(sum+m.below[i+1]) < m.min {
				keep = false
				break
			}
			c := m.currs[i]
			if c != nil && c.Number < doc {
				ctx.DocumentMatchPool.Put(c)
				var err error
				if t := m.terms[i]; t != nil {
					c, err = t.Advance(ctx, doc)
				} else {
					c, err = m.subs[i].Advance(ctx, doc)
				}
				if err != nil {
					return nil, err
				}
				m.currs[i] = c
			}
			if c != nil && c.Number == doc {
				m.cons = append(m.cons, c)
				m.idx = append(m.idx, i)
				sum += c.Score
			}
		}
		var rv *bsearch.DocumentMatch
		if keep {
			// The bounds are loose: a document read whole may still score
			// too little, and is dropped here rather than by the caller.
			if score := m.score(); score >= m.min {
				rv = m.cons[0]
				rv.Score = score
				rv.FieldTermLocations = bsearch.MergeFieldTermLocations(rv.FieldTermLocations, m.cons[1:])
			}
		}
		// Every clause at doc moves on; a non-essential one left behind
		// (its match unread) is advanced when a later candidate needs it.
		for k, i := range m.idx {
			if i < m.ess && rv == nil {
				continue
			}
			if m.cons[k] != rv {
				ctx.DocumentMatchPool.Put(m.cons[k])
			}
			var d *bsearch.DocumentMatch
			var err error
			if t := m.terms[i]; t != nil {
				d, err = t.Next(ctx)
			} else {
				d, err = m.subs[i].Next(ctx)
			}
			if err != nil {
				return nil, err
			}
			m.currs[i] = d
			if d != nil && i >= m.ess {
				m.next.push(int32(i))
			}
		}
		if rv != nil {
			return rv, nil
		}
	}
}

// score is the score of the document of cons: the sortedSum of its
// groups' sortedSums, as nested disjunctions compute it, a max group
// counting as the best score of its clauses (maxComposite).
func (m *maxScore) score() float64 {
	m.byGrp = m.byGrp[:0]
	for k := range m.cons {
		m.byGrp = append(m.byGrp, k)
	}
	sortStable(m.byGrp, func(a, b int) bool {
		ga, gb := m.groups[m.idx[a]], m.groups[m.idx[b]]
		return ga < gb || ga == gb && m.maxes[m.idx[a]] < m.maxes[m.idx[b]]
	})
	m.sums = m.sums[:0]
	for i := 0; i < len(m.byGrp); {
		g := m.groups[m.idx[m.byGrp[i]]]
		m.scores = m.scores[:0]
		for i < len(m.byGrp) && m.groups[m.idx[m.byGrp[i]]] == g {
			mx := m.maxes[m.idx[m.byGrp[i]]]
			if mx < 0 {
				m.scores = append(m.scores, m.cons[m.byGrp[i]].Score)
				i++
				continue
			}
			best := 0.0
			for ; i < len(m.byGrp) && m.groups[m.idx[m.byGrp[i]]] == g && m.maxes[m.idx[m.byGrp[i]]] == mx; i++ {
				best = math.Max(best, m.cons[m.byGrp[i]].Score)
			}
			m.scores = append(m.scores, best)
		}
		m.sums = append(m.sums, sumSorted(m.scores))
	}
	return sumSorted(m.sums)
}

// Advance implements bluge's search.Searcher.
func (m *maxScore) Advance(ctx *bsearch.Context, number uint64) (*bsearch.DocumentMatch, error) {
	if !m.inited {
		if err := m.init(ctx); err != nil {
			return nil, err
		}
	}
	for len(m.next.idx) > 0 && m.currs[m.next.idx[0]].Number < number {
		i := m.next.pop()
		ctx.DocumentMatchPool.Put(m.currs[i])
		d, err := m.subs[i].Advance(ctx, number)
		if err != nil {
			return nil, err
		}
		m.currs[i] = d
		if d != nil {
			m.next.push(i)
		}
	}
	return m.Next(ctx)
}

// docHeap is a heap of clauses (indexes in currs) by their current
// document, then by index. It is written out rather than through
// container/heap: its calls through an interface, several per posting,
// cost more than the comparisons themselves in wasm.
type docHeap struct {
	currs []*bsearch.DocumentMatch
	idx   []int32
}

func (h *docHeap) less(a, b int32) bool {
	da, db := h.currs[a].Number, h.currs[b].Number
	return da < db || da == db && a < b
}

func (h *docHeap) push(i int32) {
	h.idx = append(h.idx, i)
	h.up(len(h.idx) - 1)
}

func (h *docHeap) pop() int32 {
	top := h.idx[0]
	n := len(h.idx) - 1
	h.idx[0] = h.idx[n]
	h.idx = h.idx[:n]
	h.down(0)
	return top
}

// keep drops the clauses not kept and restores the heap.
func (h *docHeap) keep(ok func(int32) bool) {
	h.idx = slices.DeleteFunc(h.idx, func(i int32) bool { return !ok(i) })
	for j := len(h.idx)/2 - 1; j >= 0; j-- {
		h.down(j)
	}
}

func (h *docHeap) up(j int) {
	for j > 0 {
		p := (j - 1) / 2
		if !h.less(h.idx[j], h.idx[p]) {
			return
		}
		h.idx[j], h.idx[p] = h.idx[p], h.idx[j]
		j = p
	}
}

func (h *docHeap) down(j int) {
	n := len(h.idx)
	for {
		c := 2*j + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && h.less(h.idx[r], h.idx[c]) {
			c = r
		}
		if !h.less(h.idx[c], h.idx[j]) {
			return
		}
		h.idx[j], h.idx[c] = h.idx[c], h.idx[j]
		j = c
	}
}

// Close implements bluge's search.Searcher.
func (m *maxScore) Close() error {
	var first error
	for _, s := range m.subs {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Count implements bluge's search.Searcher: at most the sum of the clauses'
// counts, as bluge's disjunction counts.
func (m *maxScore) Count() uint64 {
	var n uint64
	for _, s := range m.subs {
		n += s.Count()
	}
	return n
}

// Min implements bluge's search.Searcher.
func (m *maxScore) Min() int { return 1 }

// Size implements bluge's search.Searcher.
func (m *maxScore) Size() int {
	n := 0
	for _, s := range m.subs {
		n += s.Size()
	}
	return n
}

// DocumentMatchPoolSize implements bluge's search.Searcher.
func (m *maxScore) DocumentMatchPoolSize() int {
	n := len(m.currs)
	for _, s := range m.subs {
		n += s.DocumentMatchPoolSize()
	}
	return n
}

// withoutKind passes on the documents of a searcher that a kind's term
// searcher does not match, their scores and locations unchanged (as bluge's
// BooleanSearcher with a must-not clause does), and the threshold to it.
type withoutKind struct {
	inner, kind bsearch.Searcher
	curr        *bsearch.DocumentMatch // the kind's, at or after the last document
	done        bool                   // the kind's searcher is exhausted
}

func (w *withoutKind) atLeast(min float64) {
	if p, ok := w.inner.(pruner); ok {
		p.atLeast(min)
	}
}

// Next implements bluge's search.Searcher.
func (w *withoutKind) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	d, err := w.inner.Next(ctx)
	return w.filter(ctx, d, err)
}

// Advance implements bluge's search.Searcher.
func (w *withoutKind) Advance(ctx *bsearch.Context, number uint64) (*bsearch.DocumentMatch, error) {
	d, err := w.inner.Advance(ctx, number)
	return w.filter(ctx, d, err)
}

func (w *withoutKind) filter(ctx *bsearch.Context, d *bsearch.DocumentMatch, err error) (*bsearch.DocumentMatch, error) {
	for ; err == nil && d != nil; d, err = w.inner.Next(ctx) {
		if !w.done && (w.curr == nil || w.curr.Number < d.Number) {
			if w.curr != nil {
				ctx.DocumentMatchPool.Put(w.curr)
			}
			if w.curr, err = w.kind.Advance(ctx, d.Number); err != nil {
				return nil, err
			}
			w.done = w.curr == nil
		}
		if w.curr == nil || w.curr.Number != d.Number {
			return d, nil
		}
		ctx.DocumentMatchPool.Put(d)
	}
	return nil, err
}

// Close implements bluge's search.Searcher.
func (w *withoutKind) Close() error {
	err := w.inner.Close()
	if err2 := w.kind.Close(); err == nil {
		err = err2
	}
	return err
}

// Count implements bluge's search.Searcher.
func (w *withoutKind) Count() uint64 { return w.inner.Count() }

// Min implements bluge's search.Searcher.
func (w *withoutKind) Min() int { return 0 }

// Size implements bluge's search.Searcher.
func (w *withoutKind) Size() int { return w.inner.Size() + w.kind.Size() }

// DocumentMatchPoolSize implements bluge's search.Searcher.
func (w *withoutKind) DocumentMatchPoolSize() int {
	return 1 + w.inner.DocumentMatchPoolSize() + w.kind.DocumentMatchPoolSize()
}

func (q *termQuery) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	return c.term(seg, q.field, q.term)
}
