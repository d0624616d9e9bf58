package search

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

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
	s, err := newTermSearcher(snap, r, q.term, q.field, q.boost, opts)
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
	return appendClauses(make([]bsearch.Searcher, 0, len(clauses)), make([]float64, 0, len(clauses)), clauses, r, opts)
}

// appendClauses is openClauses appending to ss and bounds: a pruning
// disjunction opens its terms one field at a time, and two slices of one
// searcher each were a twentieth of what a question allocated, by count. On an
// error it closes what it opened and returns ss and bounds as they were.
func appendClauses(ss []bsearch.Searcher, bounds []float64, clauses []bluge.Query, r bsearch.Reader, opts bsearch.SearcherOptions) ([]bsearch.Searcher, []float64, error) {
	n := len(ss)
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
			closeSearchers(ss[n:])
			return ss[:n], bounds[:n], err
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

// openPruning opens a pruning disjunction (min ≤ 1) as a maxScore over
// the terms and other leaves of its clauses: each clause that is a
// disjunction of one clause needed (a term in each field, with its
// expansions; a compound, "high-end", as the joined word or either part,
// each in every field) is taken apart down to its leaves, which maxScore
// scores as the nested disjunctions would (a tree of sums, scoreNode).
// The bound of a term in one field is far tighter than the sum of its
// bounds in every field, since a document seldom holds a term in all. A
// compound left whole was walked document by document through two levels
// of bluge's disjunctions, bounded by every field of both parts: at a
// million entries under wazero the questions naming one took 1.2 to 2.4
// times as long (bench/scale/notes.md).
//
// An expansion (expansionQuery) is opened as its terms, each a clause of
// its own, that maxScore scores together by their best (a max group): the
// bound of an expansion is that of its rarest term, so a frequent word one
// edit away ("back" for "black") was walked whole, document by document,
// with the rare ones; on its own, its low bound lets maxScore skip it. At a
// million entries expansions gave two fifths of a question's candidates.
func (q *disjunction) openPruning(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	t := scoreTree{nodes: []scoreNode{{parent: -1}}}
	for _, c := range q.clauses {
		if err := t.add(c, 0, r, opts); err != nil {
			closeSearchers(t.ss)
			return nil, 0, err
		}
	}
	if len(t.ss) == 0 {
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	}
	m := newMaxScore(&t)
	return m, m.below[len(m.subs)], nil
}

// scoreNode is a sum of scores of a maxScore, or a max of them (an
// expansion's terms): the clauses and nodes whose parent it is. Node 0,
// the root, is the pruning disjunction's sum.
type scoreNode struct {
	parent int
	max    bool
}

// scoreTree is what openPruning makes of a disjunction: its leaves'
// searchers with their bounds and parent nodes, and the nodes, each after
// its parent.
type scoreTree struct {
	ss      []bsearch.Searcher
	bounds  []float64
	parents []int
	nodes   []scoreNode
}

// add opens c under the node parent: a disjunction of one clause needed
// as a sum node of its clauses, an expansion as a max node of its terms,
// anything else as a leaf.
func (t *scoreTree) add(c bluge.Query, parent int, r bsearch.Reader, opts bsearch.SearcherOptions) error {
	cs := []bluge.Query{c}
	switch q := c.(type) {
	case *disjunction:
		if q.min <= 1 && !q.prune {
			parent = t.node(parent, false)
			for _, c := range q.clauses {
				if err := t.add(c, parent, r, opts); err != nil {
					return err
				}
			}
			return nil
		}
	case *expansionQuery:
		var err error
		if cs, err = q.clauses(r); err != nil {
			return err
		}
		parent = t.node(parent, true)
	}
	n := len(t.ss)
	var err error
	if t.ss, t.bounds, err = appendClauses(t.ss, t.bounds, cs, r, opts); err != nil {
		return err
	}
	for range t.ss[n:] {
		t.parents = append(t.parents, parent)
	}
	return nil
}

// node adds a node under parent and returns it.
func (t *scoreTree) node(parent int, isMax bool) int {
	t.nodes = append(t.nodes, scoreNode{parent: parent, max: isMax})
	return len(t.nodes) - 1
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

// maxScore is a disjunction of clauses, each with an upper bound of its
// scores, that skips the documents scoring less than the threshold it is
// given (see the comment at the top). Its score is that of the nested
// disjunctions it was made of (scoreTree): each node the sortedSum of its
// matching clauses' and nodes' scores, or their best for a max node.
//
// The essential clauses are read a window of documents at a time, each
// clause's postings in the window gathered by document (docWindow): at a
// million entries a long question's essential clauses yield hundreds of
// thousands of candidates, nearly all dropped by their bound, and ordering
// them through a heap of clauses by their current document, a pop and a
// push of a few levels per posting, was a quarter of the question
// (bench/scale/notes.md). Lucene's MaxScore scorer reads its essential
// clauses in windows for the same reason.
type maxScore struct {
	subs []bsearch.Searcher // by bound ascending
	// terms[i] is subs[i] when it is a term's searcher, nil otherwise:
	// called directly rather than through the interface, once or twice
	// per posting.
	terms   []*termSearcher
	parents []int       // the node of each of subs
	nodes   []scoreNode // each after its parent
	below   []float64   // below[i]: a bound of the sum of the scores of subs[:i]
	bounds  []float64   // of each of subs
	// winBelow is below for the window's candidates: the non-essential
	// clauses with no match left before the window's end left out. A rare
	// word's clause is the likeliest to be non-essential (its bound is the
	// highest), and in most windows it matches nothing: with its bound in
	// the sum, most candidates passed the first check only to be dropped
	// by the next (bench/scale/notes.md).
	winBelow []float64
	best     []float64 // scratch of setWinBelow
	currs    []*bsearch.DocumentMatch
	min      float64 // the threshold
	ess      int     // subs[ess:] are essential: a match must hold one of them
	win      *docWindow
	end      uint64 // no clause matches a document at or after it
	inited   bool
	// The candidate's matches: the clause, the score and the match of
	// each (nil for a bare term's, read from the window without one).
	// more: the non-essential clauses matching it.
	more   []int
	idx    []int
	vals   []float64
	cons   []*bsearch.DocumentMatch
	reader bsearch.MatchReader // for the match of a candidate of bare terms alone
	acc    [][]float64         // scratch of score: the scores under each node
}

// newMaxScore builds a maxScore over the leaves of t.
func newMaxScore(t *scoreTree) *maxScore {
	ss, bounds := t.ss, t.bounds
	order := make([]int, len(ss))
	for i := range order {
		order[i] = i
	}
	// A stable order: the clauses' order breaks ties of bounds.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bounds[a], bounds[b]) })
	m := &maxScore{
		subs:     make([]bsearch.Searcher, len(ss)),
		terms:    make([]*termSearcher, len(ss)),
		parents:  make([]int, len(ss)),
		nodes:    t.nodes,
		below:    make([]float64, len(ss)+1),
		bounds:   make([]float64, len(ss)),
		winBelow: make([]float64, len(ss)+1),
		best:     make([]float64, len(t.nodes)),
		currs:    make([]*bsearch.DocumentMatch, len(ss)),
		min:      math.Inf(-1),
		acc:      make([][]float64, len(t.nodes)),
	}
	for i, o := range order {
		m.subs[i] = ss[o]
		m.terms[i], _ = ss[o].(*termSearcher)
		m.parents[i] = t.parents[o]
		m.bounds[i] = bounds[o]
	}
	m.sumBelow(m.below, len(ss), nil)
	for _, t := range m.terms {
		if t == nil {
			m.end = math.MaxUint64
			continue
		}
		m.end = max(m.end, t.end)
		m.reader = t.reader
	}
	return m
}

// atLeast raises the threshold. The clauses no longer essential keep what
// a window read of them; outside it they are only advanced to the
// candidates that need them.
func (m *maxScore) atLeast(min float64) {
	m.min = min
	ess := m.ess
	for m.ess < len(m.subs) && m.below[m.ess+1] < min {
		m.ess++
	}
	if m.ess != ess && m.win != nil {
		m.setWinBelow()
	}
}

// setWinBelow sets winBelow for the window read last: below, of the
// non-essential clauses whose next match, if any, is in the window. A
// clause that left the essential ones after the window was read is past
// it: its matches in the window are in the window's sums.
func (m *maxScore) setWinBelow() {
	end := m.win.base + uint64(m.win.n)
	m.sumBelow(m.winBelow, m.ess, func(i int) bool {
		c := m.currs[i]
		return c != nil && c.Number < end
	})
}

// sumBelow sets dst[i+1], for i < n, to a bound of the sum of the scores of
// subs[:i+1] that counts (all when counts is nil): the bounds of the
// clauses outside max nodes, summed, plus the best bound of each max node
// (the last, by the order, since it is by bound).
func (m *maxScore) sumBelow(dst []float64, n int, counts func(int) bool) {
	clear(m.best)
	sum, best := 0.0, 0.0 // best: the max nodes' best bounds, summed
	for i := range n {
		if counts == nil || counts(i) {
			if p := m.parents[i]; m.nodes[p].max {
				best += m.bounds[i] - m.best[p]
				m.best[p] = m.bounds[i]
			} else {
				sum += m.bounds[i]
			}
		}
		dst[i+1] = up(sum + best)
	}
}

func (m *maxScore) init(ctx *bsearch.Context) error {
	m.inited = true
	for i := range m.subs {
		d, err := m.next(ctx, i)
		if err != nil {
			return err
		}
		m.currs[i] = d
	}
	return nil
}

// next moves subs[i] to its next match.
func (m *maxScore) next(ctx *bsearch.Context, i int) (*bsearch.DocumentMatch, error) {
	if t := m.terms[i]; t != nil {
		return t.Next(ctx)
	}
	return m.subs[i].Next(ctx)
}

// advance moves clause i, behind number, to its first match at or after
// it. A bare term's match holds a number and a score alone (fill reads
// the window's that way): it is moved there, not replaced.
func (m *maxScore) advance(ctx *bsearch.Context, i int, number uint64) (*bsearch.DocumentMatch, error) {
	c, t := m.currs[i], m.terms[i]
	if t != nil && t.bare() {
		doc, score, ok, err := t.advance(number)
		if err != nil {
			return nil, err
		}
		m.currs[i] = moved(ctx, c, doc, score, ok)
		return m.currs[i], nil
	}
	ctx.DocumentMatchPool.Put(c)
	var d *bsearch.DocumentMatch
	var err error
	if t != nil {
		d, err = t.Advance(ctx, number)
	} else {
		d, err = m.subs[i].Advance(ctx, number)
	}
	m.currs[i] = d
	return d, err
}

// moved is a bare term's match c moved to its posting doc with score, or
// nil, c put back, when it has none left (ok false).
func moved(ctx *bsearch.Context, c *bsearch.DocumentMatch, doc uint64, score float64, ok bool) *bsearch.DocumentMatch {
	if !ok {
		ctx.DocumentMatchPool.Put(c)
		return nil
	}
	c.Number, c.Score = doc, score
	return c
}

// Next implements bluge's search.Searcher.
func (m *maxScore) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	return m.candidate(ctx, windowDocs)
}

// candidate returns the next document of the window scoring at least the
// threshold, filling windows of width documents as they run out.
func (m *maxScore) candidate(ctx *bsearch.Context, width int) (*bsearch.DocumentMatch, error) {
	if !m.inited {
		if err := m.init(ctx); err != nil {
			return nil, err
		}
	}
	for {
		s, ok := m.win.first()
		if !ok {
			more, err := m.fill(ctx, width)
			if err != nil || !more {
				return nil, err
			}
			continue
		}
		// The candidate: a document an essential clause matches. Most are
		// dropped by their bound before their matches are gathered.
		doc := m.win.base + uint64(s)
		head, sum := m.win.head[s], m.win.sums[s]
		m.win.clear(s)
		if m.ess > 0 && up(sum+m.winBelow[m.ess]) < m.min {
			m.putBack(ctx, head, nil) // as most are: the loop below, cut short
			continue
		}
		m.more = m.more[:0]
		keep := true
		for i := m.ess - 1; i >= 0; i-- {
			if up(sum+m.winBelow[i+1]) < m.min {
				keep = false
				break
			}
			// A clause that left the essential ones after the window was
			// read is past it: its match of doc, if any, is in the window.
			c := m.currs[i]
			if c != nil && c.Number < doc {
				var err error
				if c, err = m.advance(ctx, i, doc); err != nil {
					return nil, err
				}
			}
			if c != nil && c.Number == doc {
				m.more = append(m.more, i)
				sum += c.Score
			}
		}
		var rv *bsearch.DocumentMatch
		if keep {
			m.gather(head)
			// The bounds are loose: a document read whole may still score
			// too little, and is dropped here rather than by the caller.
			if score := m.score(); score >= m.min {
				rv = m.match(ctx, doc, score)
			}
		}
		m.putBack(ctx, head, rv)
		if rv == nil {
			// The non-essential clauses read at doc stay there (their
			// matches unread), to be advanced when a later candidate
			// needs them.
			continue
		}
		for _, i := range m.more {
			if c := m.currs[i]; c != rv {
				ctx.DocumentMatchPool.Put(c)
			}
			d, err := m.next(ctx, i)
			if err != nil {
				return nil, err
			}
			m.currs[i] = d
		}
		return rv, nil
	}
}

// putBack puts back the matches of the slot whose list starts at head,
// but for keep.
func (m *maxScore) putBack(ctx *bsearch.Context, head int32, keep *bsearch.DocumentMatch) {
	if m.win.held { // a call for nothing costs, under wasm, in a loop this hot
		m.putBackList(ctx, head, keep)
	}
}

func (m *maxScore) putBackList(ctx *bsearch.Context, head int32, keep *bsearch.DocumentMatch) {
	for e := head; e != 0; e = m.win.ents[e-1].prev {
		if d := m.win.ents[e-1].d; d != nil && d != keep {
			ctx.DocumentMatchPool.Put(d)
		}
	}
}

// gather sets the candidate's matches: the window's, from the slot's list
// head, in the order of the clauses, then the non-essential clauses' read
// at it (more).
func (m *maxScore) gather(head int32) {
	m.idx, m.vals, m.cons = m.idx[:0], m.vals[:0], m.cons[:0]
	for e := head; e != 0; e = m.win.ents[e-1].prev {
		en := &m.win.ents[e-1]
		m.idx, m.vals, m.cons = append(m.idx, int(en.sub)), append(m.vals, en.score), append(m.cons, en.d)
	}
	for _, i := range m.more {
		c := m.currs[i]
		m.idx, m.vals, m.cons = append(m.idx, i), append(m.vals, c.Score), append(m.cons, c)
	}
}

// match is the document match of a kept candidate: the first of its
// clauses' matches, holding the locations of the others, as bluge's
// disjunction merges them, or a new one when its clauses are bare terms.
func (m *maxScore) match(ctx *bsearch.Context, doc uint64, score float64) *bsearch.DocumentMatch {
	var rv *bsearch.DocumentMatch
	for _, c := range m.cons {
		switch {
		case c == nil:
		case rv == nil:
			rv = c
		default:
			rv.FieldTermLocations = append(rv.FieldTermLocations, c.FieldTermLocations...)
		}
	}
	if rv == nil {
		rv = ctx.DocumentMatchPool.Get()
		rv.SetReader(m.reader)
		rv.Number = doc
	}
	rv.Score = score
	return rv
}

// fill reads the next window: the matches of the essential clauses in
// width documents from the first any of them matches. It reports false
// when they have no match left. The clauses are read last to first, so
// that each slot lists its matches in the clauses' order.
func (m *maxScore) fill(ctx *bsearch.Context, width int) (bool, error) {
	base, any := uint64(math.MaxUint64), false
	for i := m.ess; i < len(m.subs); i++ {
		if c := m.currs[i]; c != nil && c.Number < base {
			base, any = c.Number, true
		}
	}
	if !any {
		return false, nil
	}
	if m.end > base {
		width = int(min(uint64(width), m.end-base))
	}
	if m.win == nil {
		m.win = newDocWindow()
	}
	w := m.win
	w.reset(base, width)
	end := base + uint64(width)
	for i := len(m.subs) - 1; i >= m.ess; i-- {
		c := m.currs[i]
		if c == nil || c.Number >= end {
			continue
		}
		if t := m.terms[i]; t != nil && t.bare() {
			// The postings in the window need no DocumentMatch: the
			// clause's own is moved to its first posting after it.
			doc, score, ok, err := t.addTo(w, i, c.Number, c.Score, end)
			if err != nil {
				return false, err
			}
			c = moved(ctx, c, doc, score, ok)
		} else {
			var err error
			for c != nil && c.Number < end {
				w.add(int(c.Number-base), i, c.Score, c)
				if c, err = m.next(ctx, i); err != nil {
					return false, err
				}
			}
		}
		m.currs[i] = c
	}
	m.setWinBelow()
	return true, nil
}

// score is the score of the document of cons, as the nested disjunctions
// maxScore was made of compute it: each node's is the sortedSum of the
// scores under it, or for a max node their best (maxComposite); a node
// with nothing under it counts for nothing. Nodes come after their parents,
// so taking them last to first reads each after the nodes under it.
func (m *maxScore) score() float64 {
	for k, i := range m.idx {
		p := m.parents[i]
		m.acc[p] = append(m.acc[p], m.vals[k])
	}
	for n := len(m.nodes) - 1; n > 0; n-- {
		v := m.acc[n]
		if len(v) == 0 {
			continue
		}
		s := 0.0
		if m.nodes[n].max {
			for _, x := range v {
				s = math.Max(s, x)
			}
		} else {
			s = sumSorted(v)
		}
		p := m.nodes[n].parent
		m.acc[p] = append(m.acc[p], s)
		m.acc[n] = v[:0]
	}
	s := sumSorted(m.acc[0])
	m.acc[0] = m.acc[0][:0]
	return s
}

// Advance implements bluge's search.Searcher. The window's documents
// before number are dropped, and the essential clauses behind it
// advanced. A searcher advanced is most often being filtered (filter.go:
// a set of documents, or the few a ranking kept), so the window it reads
// next is one document wide: a wide one would read postings the next
// Advance drops unread.
func (m *maxScore) Advance(ctx *bsearch.Context, number uint64) (*bsearch.DocumentMatch, error) {
	if !m.inited {
		if err := m.init(ctx); err != nil {
			return nil, err
		}
	}
	for {
		s, ok := m.win.first()
		if !ok || m.win.base+uint64(s) >= number {
			break
		}
		m.release(ctx, s)
	}
	for i := m.ess; i < len(m.subs); i++ {
		if c := m.currs[i]; c != nil && c.Number < number {
			if _, err := m.advance(ctx, i, number); err != nil {
				return nil, err
			}
		}
	}
	return m.candidate(ctx, 1)
}

// release puts back the window's matches of slot s and clears it.
func (m *maxScore) release(ctx *bsearch.Context, s int) {
	m.putBack(ctx, m.win.head[s], nil)
	m.win.clear(s)
}

// windowDocs is the width of maxScore's windows, in document numbers:
// Lucene's MaxScore scorer reads 4,096 at a time. A variable for the
// tests.
var windowDocs = 4096

// docWindow holds the matches of maxScore's essential clauses in documents
// base to base+n, by slot (document − base): each slot's matches as a
// list, the last added first, the sum of their scores, and a bit for each
// slot holding any not yet taken.
type docWindow struct {
	base  uint64
	n     int
	at    int       // every slot before the word at holds nothing
	head  []int32   // by slot: 1 + the index in ents of its last match, 0 for none
	sums  []float64 // by slot
	marks []uint64  // by slot, 64 to a word
	ents  []winEntry
	held  bool // some entry holds a DocumentMatch
}

type winEntry struct {
	sub   int32 // the clause
	prev  int32 // 1 + the index of the slot's match added before it, 0 for none
	score float64
	d     *bsearch.DocumentMatch // nil for a bare term's
}

// windows keeps windows from one pass to the next: a question runs
// several, and a window is about 50 KB.
var windows = sync.Pool{New: func() any { return new(docWindow) }}

func newDocWindow() *docWindow { return windows.Get().(*docWindow) }

// reset empties the window (every slot taken or released) for n
// documents from base.
func (w *docWindow) reset(base uint64, n int) {
	w.base, w.n, w.at, w.held = base, n, 0, false
	w.ents = w.ents[:0]
	if len(w.head) < n {
		w.head = make([]int32, n)
		w.sums = make([]float64, n)
		w.marks = make([]uint64, (n+63)/64)
	}
}

func (w *docWindow) add(s, sub int, score float64, d *bsearch.DocumentMatch) {
	w.ents = append(w.ents, winEntry{sub: int32(sub), prev: w.head[s], score: score, d: d})
	w.head[s] = int32(len(w.ents))
	w.sums[s] += score
	w.marks[s>>6] |= 1 << (s & 63)
	if d != nil { // not at the bare terms' calls, where d is nil
		w.held = true
	}
}

// first returns the first slot holding matches not yet taken.
func (w *docWindow) first() (int, bool) {
	if w == nil {
		return 0, false
	}
	for ; w.at<<6 < w.n; w.at++ {
		if b := w.marks[w.at]; b != 0 {
			return w.at<<6 + bits.TrailingZeros64(b), true
		}
	}
	return 0, false
}

func (w *docWindow) clear(s int) {
	w.head[s] = 0
	w.sums[s] = 0
	w.marks[s>>6] &^= 1 << (s & 63)
}

// Close implements bluge's search.Searcher.
func (m *maxScore) Close() error {
	if m.win != nil {
		// Every slot is empty once the searcher is exhausted; a searcher
		// closed early (top's n reached, a probe) leaves some.
		for {
			s, ok := m.win.first()
			if !ok {
				break
			}
			m.win.clear(s)
		}
		clear(m.win.ents)
		windows.Put(m.win)
		m.win = nil
	}
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
