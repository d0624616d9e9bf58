package search

import (
	"fmt"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	"math"
	"sort"
	"sync"
	"weak"

	bsearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/arbormem/arbor/core/internal/portmath"
)

// Scoring. bluge's own BM25 has two problems for Arbor: its idf is
// log(1 + (N-n) + 0.5/(n+0.5)) (a misplaced parenthesis that all but removes
// the idf's discrimination), and its collection statistics count deleted and
// replaced documents until a background merge drops them, so a score would
// depend on merge timing. bm25 below uses the textbook idf
// log(1 + (N-n+0.5)/(n+0.5)) and takes N and the average field length from
// the index's own bookkeeping of live documents (fieldStats); the document
// frequency n comes from the postings, which already exclude deleted
// documents. Scores then depend only on the set of live documents, and
// are the same bits on every architecture (see package portmath).

// fieldStats are the live-document statistics of one field.
type fieldStats struct {
	docs int // live documents with at least one term in the field
	sum  int // total number of terms of the field over those documents
}

// bm25 is the similarity of one searchable field.
type bm25 struct {
	stats *fieldStats
	k1, b float64
}

// ComputeNorm encodes a field length exactly as bluge's BM25 does (the
// index calls it when it builds segments).
func (s *bm25) ComputeNorm(numTerms int) float32 {
	return math.Float32frombits(uint32(numTerms))
}

// Scorer returns the scorer of one term in this field.
func (s *bm25) Scorer(boost float64, _ segment.CollectionStats, ts segment.TermStats) bsearch.Scorer {
	sc := s.scorer(boost, ts.DocumentFrequency())
	return &sc
}

// scorer is the scorer of a term matching n documents of this field, as
// a value: the term searchers keep theirs in themselves.
func (s *bm25) scorer(boost float64, n uint64) bm25Scorer {
	df := float64(n)
	N := math.Max(float64(s.stats.docs), df)
	idf := portmath.Log(1 + (N-df+0.5)/(df+0.5))
	avg := 1.0
	if s.stats.docs > 0 && s.stats.sum > 0 {
		avg = float64(s.stats.sum) / float64(s.stats.docs)
	}
	return bm25Scorer{weight: boost * idf, k1: s.k1, b: s.b, avg: avg}
}

// bound is an upper bound of the scores of a term matching n documents of
// this field, with a boost: weight·(k1+1), since tf/(tf + k1·(1-b+b·dl/avg))
// < 1 when k1·(1-b+b·dl/avg) ≥ 0, with the margin of rounding (up). Without
// that (b > 1 lets a long field make it negative), there is no bound.
func (s *bm25) bound(boost float64, n uint64) float64 {
	if s.k1 < 0 || s.b < 0 || s.b > 1 {
		return math.Inf(1)
	}
	sc := s.scorer(boost, n)
	return up(sc.weight * (sc.k1 + 1))
}

// docFreq is a term's document frequency, as bluge's TermSearcher gives
// it to a similarity.
type docFreq uint64

// DocumentFrequency implements segment.TermStats.
func (n docFreq) DocumentFrequency() uint64 { return uint64(n) }

// bm25Scorer scores one term in one field:
// weight·tf·(k1+1)/(tf + k1·(1-b+b·dl/avg)), Robertson's form, as in bluge,
// Lucene before 8 and MiniSearch: the (k1+1) factor keeps a single
// occurrence worth about idf, which the ŝ thresholds of the tiers assume.
type bm25Scorer struct {
	weight, k1, b, avg float64
}

// Score implements bluge's search.Scorer.
func (s *bm25Scorer) Score(freq int, norm float64) float64 {
	dl := float64(math.Float32bits(float32(norm)))
	f := float64(freq)
	// The conversion keeps the compiler from fusing k1·(…) + f into one
	// FMA (as it does on arm64), which rounds differently than wasm does.
	return s.weight * f * (s.k1 + 1) / (f + float64(s.k1*(1-s.b+s.b*dl/s.avg)))
}

// Explain implements bluge's search.Scorer.
func (s *bm25Scorer) Explain(freq int, norm float64) *bsearch.Explanation {
	return bsearch.NewExplanation(s.Score(freq, norm), "bm25 (live statistics)")
}

// maxComposite scores a disjunction by its best constituent, so a document
// is not rewarded for matching many expansions of one query term.
type maxComposite struct{}

// ScoreComposite implements bluge's search.CompositeScorer.
func (maxComposite) ScoreComposite(cs []*bsearch.DocumentMatch) float64 {
	best := 0.0
	for _, c := range cs {
		best = math.Max(best, c.Score)
	}
	return best
}

// ExplainComposite implements bluge's search.CompositeScorer.
func (m maxComposite) ExplainComposite(cs []*bsearch.DocumentMatch) *bsearch.Explanation {
	var children []*bsearch.Explanation
	for _, c := range cs {
		children = append(children, c.Explanation)
	}
	return bsearch.NewExplanation(m.ScoreComposite(cs), "max of:", children...)
}

// expansionQuery matches the terms of one field that start with a prefix, or
// are within one edit of a term, excluding the term itself (the exact clause
// scores that). Each expansion is scored by BM25 with the query's boost and
// the document keeps its best expansion. At most maxExp expansions are used,
// shortest first then in byte order, so results stay deterministic.
type expansionQuery struct {
	text   string
	field  string
	fuzzy  bool
	boost  float64
	maxExp int
	seen   *expansions // the query term's, shared by its expansions
}

// expansions remembers the candidates of one query word's expansions
// while the index's snapshot stays the same: the passes of one question
// (all terms, any term, context files) and its probes for unmatched terms
// expand the same word in the same fields, and so do the later questions
// that ask with it (Index.words), and walking the dictionaries, one
// automaton run per segment and field, is most of what an expansion
// costs. A question read on another snapshot (a write since) finds them
// anew.
type expansions struct {
	mu  sync.Mutex
	lev *lev1
	// snap is the snapshot cands and used were found in, weak: a word not
	// asked again must not keep a snapshot, and the segments merges took
	// out of the index since, in memory.
	snap  weak.Pointer[index.Snapshot]
	cands map[expansionKey][]candidate
	// used holds the candidates an expansion uses: the first maxExp of
	// them matching a live document.
	used map[expansionKey][]string
}

// at readies e for the snapshot r reads, dropping what was found in
// another; called with e.mu held.
func (e *expansions) at(r bsearch.Reader) {
	var s *index.Snapshot
	switch r := r.(type) {
	case snapshot:
		s = r.Snapshot
	case *index.Snapshot:
		s = r
	}
	if w := weak.Make(s); s == nil || w != e.snap {
		e.snap, e.cands, e.used = w, nil, nil
	}
}

// maxWords bounds the words whose expansions an index keeps (Index.words):
// a question asks with about ten.
const maxWords = 1024

// wordExpansions keeps, by word, the expansions of the words questions
// asked with (expansions), up to maxWords, then starts afresh.
type wordExpansions struct {
	mu sync.Mutex
	m  map[string]*expansions
}

// of returns the expansions of w.
func (c *wordExpansions) of(w string) *expansions {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[w]; ok {
		return e
	}
	if c.m == nil || len(c.m) >= maxWords {
		c.m = map[string]*expansions{}
	}
	e := &expansions{}
	c.m[w] = e
	return e
}

// candidate is a dictionary term an expansion may use, with the segments
// (indexes in the snapshot) whose dictionaries hold it.
type candidate struct {
	term string
	segs []int
}

type expansionKey struct {
	field string
	fuzzy bool
}

// Searcher implements bluge.Query.
func (q *expansionQuery) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, _, err := q.open(r, opts)
	return s, err
}

// open bounds the score by the best bound of the expansions (the score is
// the best expansion's).
func (q *expansionQuery) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	clauses, err := q.clauses(r)
	if err != nil {
		return nil, 0, err
	}
	ss, bounds, err := openClauses(clauses, r, opts)
	if err != nil {
		return nil, 0, err
	}
	bound := 0.0
	for _, b := range bounds {
		bound = math.Max(bound, b)
	}
	switch len(ss) {
	case 0:
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	case 1:
		return ss[0], bound, nil
	}
	s, err := searcher.NewDisjunctionSearcher(r, ss, 1, maxComposite{}, opts)
	if err != nil {
		closeSearchers(ss)
		return nil, 0, err
	}
	return s, bound, nil
}

// clauses are the term queries of the expansions used, each scored with
// the query's boost.
func (q *expansionQuery) clauses(r bsearch.Reader) ([]bluge.Query, error) {
	terms, err := q.terms(r)
	if err != nil {
		return nil, err
	}
	clauses := make([]bluge.Query, len(terms))
	for i, t := range terms {
		clauses[i] = &termQuery{term: t, field: q.field, boost: q.boost}
	}
	return clauses, nil
}

func (q *expansionQuery) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	terms, err := q.terms(c.r)
	if err != nil {
		return nil, err
	}
	bms := make([]*roaring.Bitmap, len(terms))
	for i, t := range terms {
		if bms[i], err = c.term(seg, q.field, t); err != nil {
			return nil, err
		}
	}
	return atLeast(bms, 1), nil
}

// terms returns the expansions used: the first maxExp candidates found in
// a live document (a term of deleted documents only is still in the
// dictionaries until a merge).
func (q *expansionQuery) terms(r bsearch.Reader) ([]string, error) {
	e := q.seen
	e.mu.Lock()
	defer e.mu.Unlock()
	e.at(r)
	key := expansionKey{q.field, q.fuzzy}
	if t, ok := e.used[key]; ok {
		return t, nil
	}
	cands, err := q.candidatesLocked(r)
	if err != nil {
		return nil, err
	}
	segs := r.(snapshot).Segments()
	var out []string
	for _, c := range cands {
		if len(out) >= q.maxExp {
			break
		}
		live, err := q.live(segs, c)
		if err != nil {
			return nil, err
		}
		if live {
			out = append(out, c.term)
		}
	}
	if e.used == nil {
		e.used = map[expansionKey][]string{}
	}
	e.used[key] = out
	return out, nil
}

// live reports whether a live document holds the candidate c. A segment's
// dictionary holds a term only when one of its documents does (ice writes
// no term without postings), so a segment without deleted documents that
// holds c answers without reading its postings.
func (q *expansionQuery) live(segs []index.SegmentSnapshot, c candidate) (bool, error) {
	for _, i := range c.segs {
		del := segs[i].Deleted()
		if del == nil || del.IsEmpty() {
			return true, nil
		}
	}
	for _, i := range c.segs {
		seg, err := segmentOf(segs[i])
		if err != nil {
			return false, fmt.Errorf("search: expand %q: %w", q.text, err)
		}
		dict, err := seg.Dictionary(q.field)
		if err != nil {
			return false, fmt.Errorf("search: expand %q: dictionary of %s: %w", q.text, q.field, err)
		}
		pl, err := dict.PostingsList([]byte(c.term), segs[i].Deleted(), nil)
		if err != nil {
			return false, fmt.Errorf("search: expand %q: postings of %q: %w", q.text, c.term, err)
		}
		if pl.Count() > 0 {
			return true, nil
		}
	}
	return false, nil
}

// candidatesLocked lists the dictionary terms the query expands to in the
// snapshot r reads; called with q.seen.mu held, after at(r).
func (q *expansionQuery) candidatesLocked(r bsearch.Reader) ([]candidate, error) {
	e := q.seen
	key := expansionKey{q.field, q.fuzzy}
	if c, ok := e.cands[key]; ok {
		return c, nil
	}
	if q.fuzzy && e.lev == nil {
		e.lev = newLev1(q.text)
	}
	c, err := q.lookup(r, e.lev)
	if err != nil {
		return nil, err
	}
	if e.cands == nil {
		e.cands = map[expansionKey][]candidate{}
	}
	e.cands[key] = c
	return c, nil
}

// lookup walks the field's dictionary in every segment of the snapshot for
// the candidates; lev is the automaton of a fuzzy expansion. The segments
// are walked one after the other: bluge's own DictionaryIterator starts a
// goroutine per segment and merges their outputs in order, which in wasm
// (one thread, a goroutine switch costing stack unwinding and regrowth)
// made a query's expansions cost more with every segment than the walks
// themselves. Terms found only in deleted documents are among the
// candidates either way; terms drops them.
func (q *expansionQuery) lookup(r bsearch.Reader, lev *lev1) ([]candidate, error) {
	snap, ok := r.(snapshot)
	if !ok {
		return nil, fmt.Errorf("search: expand %q: reader %T is not an index snapshot", q.text, r)
	}
	seen := map[string]int{} // index in out
	var out []candidate
	for i, ss := range snap.Segments() {
		seg, err := segmentOf(ss)
		if err != nil {
			return nil, fmt.Errorf("search: expand %q: %w", q.text, err)
		}
		dict, err := seg.Dictionary(q.field)
		if err != nil {
			return nil, err
		}
		var it segment.DictionaryIterator
		if q.fuzzy {
			it = termsOnly(dict.Iterator(lev, nil, nil))
		} else {
			it = termsOnly(dict.Iterator(nil, []byte(q.text), prefixEnd(q.text)))
		}
		for {
			e, err := it.Next()
			if err != nil {
				_ = it.Close()
				return nil, err
			}
			if e == nil {
				break
			}
			t := e.Term()
			if t == q.text {
				continue
			}
			if k, ok := seen[t]; ok {
				out[k].segs = append(out[k].segs, i)
				continue
			}
			seen[t] = len(out)
			out = append(out, candidate{term: t, segs: []int{i}})
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].term) != len(out[j].term) {
			return len(out[i].term) < len(out[j].term)
		}
		return out[i].term < out[j].term
	})
	return out, nil
}

// segmentOf returns the segment of a snapshot's segment, whose
// dictionaries and postings bluge's interface does not reach.
func segmentOf(ss index.SegmentSnapshot) (segment.Segment, error) {
	seg, ok := ss.(interface{ Segment() segment.Segment })
	if !ok {
		return nil, fmt.Errorf("segment %T has no dictionary", ss)
	}
	return seg.Segment(), nil
}

// prefixEnd returns the smallest byte string greater than every string that
// starts with p (nil when there is none).
func prefixEnd(p string) []byte {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return b[:i+1]
		}
	}
	return nil
}

// lev1 is a deterministic automaton over bytes accepting the strings within
// Levenshtein distance 1 of a term. It is built completely up front and is
// immutable, because bluge walks it from several goroutines at once.
type lev1 struct {
	class  [256]uint8 // byte → input class (0: a byte not in the term)
	next   [][]int32  // state → class → state; state 0 is dead
	accept []bool
}

// maxFuzzyBytes is the longest term lev1 handles (its NFA state sets are
// 64-bit masks of 2·(len+1) bits); longer terms get no fuzzy expansion.
const maxFuzzyBytes = 31

// newLev1 builds the automaton of term t, len(t) ≤ maxFuzzyBytes.
func newLev1(t string) *lev1 {
	n := len(t)
	a := &lev1{}
	var bytesOf []byte // class i+1 ↔ bytesOf[i]
	for i := 0; i < n; i++ {
		if a.class[t[i]] == 0 {
			bytesOf = append(bytesOf, t[i])
			a.class[t[i]] = uint8(len(bytesOf))
		}
	}
	// An NFA state (i, e) — i bytes of t consumed with e edits — is bit
	// e*(n+1)+i of a set.
	bit := func(i, e int) uint64 { return 1 << uint(e*(n+1)+i) }
	closure := func(s uint64) uint64 { // deletions: (i,0) → (i+1,1)
		for i := 0; i < n; i++ {
			if s&bit(i, 0) != 0 {
				s |= bit(i+1, 1)
			}
		}
		return s
	}
	step := func(s uint64, c int) uint64 { // c: byte, or -1 for a byte not in t
		var out uint64
		for e := 0; e <= 1; e++ {
			for i := 0; i <= n; i++ {
				if s&bit(i, e) == 0 {
					continue
				}
				if i < n && c >= 0 && t[i] == byte(c) {
					out |= bit(i+1, e)
				}
				if e == 0 {
					out |= bit(i, 1) // insertion
					if i < n {
						out |= bit(i+1, 1) // substitution
					}
				}
			}
		}
		return closure(out)
	}
	ids := map[uint64]int32{0: 0}
	sets := []uint64{0}
	a.next = [][]int32{make([]int32, len(bytesOf)+1)}
	start := closure(bit(0, 0))
	ids[start] = 1
	sets = append(sets, start)
	a.next = append(a.next, nil)
	for id := 1; id < len(sets); id++ {
		row := make([]int32, len(bytesOf)+1)
		for c := 0; c <= len(bytesOf); c++ {
			in := -1
			if c > 0 {
				in = int(bytesOf[c-1])
			}
			ns := step(sets[id], in)
			nid, ok := ids[ns]
			if !ok {
				nid = int32(len(sets))
				ids[ns] = nid
				sets = append(sets, ns)
				a.next = append(a.next, nil)
			}
			row[c] = nid
		}
		a.next[id] = row
	}
	a.accept = make([]bool, len(sets))
	for id, s := range sets {
		a.accept[id] = s&(bit(n, 0)|bit(n, 1)) != 0
	}
	return a
}

// Start implements bluge's segment.Automaton.
func (a *lev1) Start() int { return 1 }

// IsMatch implements bluge's segment.Automaton.
func (a *lev1) IsMatch(s int) bool { return a.accept[s] }

// CanMatch implements bluge's segment.Automaton.
func (a *lev1) CanMatch(s int) bool { return s != 0 }

// WillAlwaysMatch implements bluge's segment.Automaton.
func (a *lev1) WillAlwaysMatch(int) bool { return false }

// Accept implements bluge's segment.Automaton.
func (a *lev1) Accept(s int, b byte) int { return int(a.next[s][a.class[b]]) }

// within1 reports whether a and b are within Levenshtein distance 1 (over
// bytes, like lev1).
func within1(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return i == len(a) || a[i+1:] == b[i+1:]
	}
	return a[i:] == b[i+1:]
}
