package search

import (
	"fmt"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring"
	bsearch "github.com/blugelabs/bluge/search"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// termSearcher is bluge's TermSearcher reading the postings of each
// segment of a snapshot itself, with the same matches, scores and
// locations. A question's cost is its walk of postings: at a million
// entries about 160,000 documents a question, each of them passing through
// bluge's snapshot-wide iterator, the restarting wrapper of postings.go,
// an interface call to the scorer and a conversion of the reader to a
// MatchReader (which wasm, with no cache of interface conversions, looks
// up in the runtime's table at every posting). Under wasm, where every
// call costs several times what it does natively, those layers were a
// large share of a question. The postings are read by skip.go's
// iterators, which jump to a document they are advanced to instead of
// decoding every posting on the way, as ice's do.
type termSearcher struct {
	reader   bsearch.MatchReader // converted once
	scorer   bsearch.Scorer
	bm       *bm25Scorer // scorer, when it is one, called directly: &bmv
	bmv      bm25Scorer
	explain  bool
	term     string
	field    string
	freqNorm bool
	vectors  bool
	offsets  []uint64 // the first document number of each segment
	lists    []*postingsList
	iters    []postingsIter
	slab     *iterSlab // where lists and iters came from, until Close
	seg      int       // the segment being read
	count    uint64
	// reach is where the iterators are: every document before it was
	// returned or passed over.
	reach uint64
	end   uint64 // the number after the snapshot's last document
}

// newTermSearcher opens the searcher of term in field with a boost, as
// bluge's NewTermSearcher does, on a snapshot; mr is the snapshot as its
// matches read it (the Reader the searcher was asked of: a snapshot
// converted to an interface anew for each searcher was one allocation
// more each).
func newTermSearcher(r snapshot, mr bsearch.MatchReader, term, field string, boost float64, opts bsearch.SearcherOptions) (*termSearcher, error) {
	segs, deleted, offsets, err := r.segments()
	if err != nil {
		return nil, fmt.Errorf("search: term %q: %w", term, err)
	}
	slab := takeSlab(len(segs))
	t := &termSearcher{
		reader:   mr,
		explain:  opts.Explain,
		term:     term,
		field:    field,
		freqNorm: opts.Score != "none",
		vectors:  opts.IncludeTermVectors,
		offsets:  offsets,
		lists:    slab.lists,
		iters:    slab.iters,
		slab:     slab,
	}
	for i, seg := range segs {
		if t.lists[i], err = r.memo.postings(i, seg, deleted[i], field, term); err != nil {
			return nil, fmt.Errorf("search: term %q: %w", term, err)
		}
		t.count += t.lists[i].count
	}
	if n := len(segs); n > 0 {
		t.end = offsets[n-1] + segs[n-1].Count()
	}
	if err := t.restart(); err != nil {
		return nil, err
	}
	sim := opts.SimilarityForField(field)
	if b, ok := sim.(*bm25); ok {
		// bm25 takes its statistics from the index's own bookkeeping: the
		// collection's, which bluge would compute, are not needed.
		t.bmv = b.scorer(boost, t.count)
		t.bm = &t.bmv
		t.scorer = t.bm
		return t, nil
	}
	stats, err := r.CollectionStats(field)
	if err != nil {
		return nil, fmt.Errorf("search: term %q: statistics of %s: %w", term, field, err)
	}
	t.scorer = sim.Scorer(boost, stats, docFreq(t.count))
	return t, nil
}

// restart opens the iterators anew, at the first posting.
func (t *termSearcher) restart() error {
	for i, pl := range t.lists {
		if err := t.iters[i].reset(pl, t.freqNorm, t.vectors); err != nil {
			return fmt.Errorf("search: term %q: postings in %s: %w", t.term, t.field, err)
		}
	}
	t.seg, t.reach = 0, 0
	return nil
}

// Next implements bluge's search.Searcher.
func (t *termSearcher) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	p, err := t.posting()
	if p == nil || err != nil {
		return nil, err
	}
	return t.match(ctx, p), nil
}

// posting moves to the next posting and returns its segment's iterator,
// nil at the end.
func (t *termSearcher) posting() (*postingsIter, error) {
	for t.seg < len(t.iters) {
		ok, err := t.iters[t.seg].next(0)
		if err != nil {
			return nil, fmt.Errorf("search: term %q: postings in %s: %w", t.term, t.field, err)
		}
		if ok {
			return &t.iters[t.seg], nil
		}
		t.seg++
	}
	return nil, nil
}

// bare reports whether a match of t is a number and a score alone: no
// locations, no explanation (see step).
func (t *termSearcher) bare() bool { return !t.explain && !t.vectors }

// step is Next for a bare searcher without a DocumentMatch: the next
// posting's document number and score, ok false at the end. maxScore's
// windows hold postings read this way (addTo), nearly all of them dropped
// by their bound, never handed to the collector.
func (t *termSearcher) step() (doc uint64, score float64, ok bool, err error) {
	p, err := t.posting()
	if p == nil || err != nil {
		return 0, 0, false, err
	}
	doc = t.offsets[t.seg] + p.doc
	t.reach = doc + 1
	return doc, t.score(p), true, nil
}

// addTo is step repeated for the postings before end, each added to w as
// clause sub's, from the one t is on (doc, with score): it returns the
// first posting at or after end as step does. A window holds thousands of
// postings of a clause, and under wasm each step through the iterators'
// layers cost more than reading the posting itself: skipIter.addTo reads
// a segment's postings in one loop.
func (t *termSearcher) addTo(w *docWindow, sub int, doc uint64, score float64, end uint64) (uint64, float64, bool, error) {
	w.add(int(doc-w.base), sub, score, nil)
	for t.seg < len(t.iters) {
		it := &t.iters[t.seg]
		if it.ice != nil || t.bm == nil {
			break
		}
		off := t.offsets[t.seg]
		more, last, err := it.skip.addTo(w, sub, off, end, t.bm)
		if err != nil {
			return 0, 0, false, fmt.Errorf("search: term %q: postings in %s: %w", t.term, t.field, err)
		}
		if last > 0 {
			t.reach = off + last
		}
		if more {
			it.doc, it.freq, it.norm, it.locs = it.skip.doc, it.skip.freq, it.skip.norm, it.skip.locs
			return off + it.doc, t.bm.Score(it.freq, it.norm), true, nil
		}
		t.seg++
	}
	for {
		doc, score, ok, err := t.step()
		if !ok || err != nil || doc >= end {
			return doc, score, ok, err
		}
		w.add(int(doc-w.base), sub, score, nil)
	}
}

func (t *termSearcher) score(p *postingsIter) float64 {
	if t.bm != nil {
		return t.bm.Score(p.freq, p.norm)
	}
	return t.scorer.Score(p.freq, p.norm)
}

// Advance implements bluge's search.Searcher for any document number,
// returning the first match at or after it: a number the iterators have
// passed restarts them (see snapshot in postings.go for why they are not
// reused). A disjunction advances a clause it saw exhausted backwards.
func (t *termSearcher) Advance(ctx *bsearch.Context, number uint64) (*bsearch.DocumentMatch, error) {
	p, err := t.seek(number)
	if p == nil || err != nil {
		return nil, err
	}
	return t.match(ctx, p), nil
}

// advance is Advance for a bare searcher without a DocumentMatch, as step
// is Next: maxScore advances a clause that left the essential ones to the
// candidates past their first bound, and moves its match there.
func (t *termSearcher) advance(number uint64) (doc uint64, score float64, ok bool, err error) {
	p, err := t.seek(number)
	if p == nil || err != nil {
		return 0, 0, false, err
	}
	doc = t.offsets[t.seg] + p.doc
	t.reach = doc + 1
	return doc, t.score(p), true, nil
}

// seek moves t to its first posting at or after number and returns its
// segment's iterator, nil at the end.
func (t *termSearcher) seek(number uint64) (*postingsIter, error) {
	if number < t.reach {
		if err := t.restart(); err != nil {
			return nil, err
		}
	}
	t.reach = number
	// The segment holding number; those before it hold no later document.
	// Most seeks stay in the segment they are in, which one comparison
	// tells (a search is a call per step under wasm).
	if t.seg+1 < len(t.offsets) && number >= t.offsets[t.seg+1] {
		t.seg = sort.Search(len(t.offsets), func(i int) bool { return t.offsets[i] > number }) - 1
	}
	if t.seg < len(t.iters) && number > t.offsets[t.seg] {
		ok, err := t.iters[t.seg].next(number - t.offsets[t.seg])
		if err != nil {
			return nil, fmt.Errorf("search: term %q: postings in %s: %w", t.term, t.field, err)
		}
		if ok {
			return &t.iters[t.seg], nil
		}
		t.seg++
	}
	return t.posting()
}

// match is the document match of a posting of the current segment, as
// bluge's TermSearcher builds it.
func (t *termSearcher) match(ctx *bsearch.Context, p *postingsIter) *bsearch.DocumentMatch {
	rv := ctx.DocumentMatchPool.Get()
	rv.SetReader(t.reader)
	rv.Number = t.offsets[t.seg] + p.doc
	t.reach = rv.Number + 1
	switch {
	case t.explain:
		rv.Explanation = t.scorer.Explain(p.freq, p.norm)
		rv.Score = rv.Explanation.Value
	default:
		rv.Score = t.score(p)
	}
	if locs := p.locs; len(locs) > 0 {
		if cap(rv.FieldTermLocations) < len(locs) {
			rv.FieldTermLocations = make([]bsearch.FieldTermLocation, 0, len(locs))
		}
		for _, l := range locs {
			rv.FieldTermLocations = append(rv.FieldTermLocations, bsearch.FieldTermLocation{
				Field:    l.field,
				Term:     t.term,
				Location: bsearch.Location{Pos: l.pos, Start: l.start, End: l.end},
			})
		}
	}
	return rv
}

// Count implements bluge's search.Searcher: the postings of the term, as
// bluge's counts them.
func (t *termSearcher) Count() uint64 { return t.count }

// Min implements bluge's search.Searcher.
func (t *termSearcher) Min() int { return 0 }

// Size implements bluge's search.Searcher.
func (t *termSearcher) Size() int {
	n := len(t.term) + len(t.field) + 8*len(t.offsets)
	for i := range t.iters {
		n += t.lists[i].Size() + t.iters[i].Size()
	}
	return n
}

// DocumentMatchPoolSize implements bluge's search.Searcher.
func (t *termSearcher) DocumentMatchPoolSize() int { return 1 }

// Close implements bluge's search.Searcher. It gives the iterators back
// (iterSlab): the searcher then has none, and finds no more postings.
func (t *termSearcher) Close() error {
	if t.slab != nil {
		t.slab.give()
		t.slab, t.lists, t.iters = nil, nil, nil
	}
	return nil
}

// iterSlab is the postings lists and iterators of a term searcher, one per
// segment, kept from a closed searcher for the next: at a million entries
// a question opens about 170 term searchers over a dozen segments, and
// their iterators, with the buffers their chunks are copied into, were a
// quarter of the bytes it allocated, which natively the collector's
// workers paid for on the other cores (bench/scale/notes.md).
type iterSlab struct {
	lists []*postingsList
	iters []postingsIter
}

var slabs = sync.Pool{New: func() any { return new(iterSlab) }}

// takeSlab returns a slab of n lists and iterators, the lists nil and the
// iterators at rest.
func takeSlab(n int) *iterSlab {
	s := slabs.Get().(*iterSlab)
	if cap(s.iters) < n {
		s.lists, s.iters = make([]*postingsList, n), make([]postingsIter, n)
	}
	s.lists, s.iters = s.lists[:n], s.iters[:n]
	return s
}

// give puts s back, keeping of its iterators only their buffers.
func (s *iterSlab) give() {
	clear(s.lists)
	for i := range s.iters {
		s.iters[i].rest()
	}
	slabs.Put(s)
}

// segmentsOf returns the segments of a snapshot, their deleted documents
// and the first document number of each: numbers run on from one segment
// to the next, deleted documents included, as bluge numbers them
// (index.Snapshot's offsets).
func segmentsOf(r snapshot) (segs []segment.Segment, deleted []*roaring.Bitmap, offsets []uint64, err error) {
	var next uint64
	for _, ss := range r.Segments() {
		seg, err := segmentOf(ss)
		if err != nil {
			return nil, nil, nil, err
		}
		segs = append(segs, seg)
		deleted = append(deleted, ss.Deleted())
		offsets = append(offsets, next)
		next += seg.Count()
	}
	return segs, deleted, offsets, nil
}

// segments is segmentsOf(s), as its memo found them when it has one.
func (s snapshot) segments() ([]segment.Segment, []*roaring.Bitmap, []uint64, error) {
	if s.memo != nil {
		return s.memo.segs, s.memo.deleted, s.memo.offsets, nil
	}
	return segmentsOf(s)
}

// lookups keeps, for one ranking on one snapshot (counter), the postings
// list of each term a searcher opened, by segment and field. A question
// opens the searchers of its terms several times over: its passes (every
// term, any term, the context files), the pass reading where the terms
// occur in the documents kept, the probes of terms no document matched,
// and each opening looked the term up in every segment's dictionary and
// decoded its bitmap of documents (bench/scale/notes.md). A postings list
// is only read: each searcher opens iterators of its own on it.
type lookups struct {
	segs    []segment.Segment
	deleted []*roaring.Bitmap
	offsets []uint64
	mu      sync.Mutex
	dicts   map[dictKey]segment.Dictionary
	lists   map[listKey]*postingsList
	// ices are the ice segments of segs, for reading stored fields
	// (storedread.go).
	icesOnce sync.Once
	ices     []*ice.Segment
}

type dictKey struct {
	seg   int
	field string
}

type listKey struct {
	seg         int
	field, term string
}

// postings returns the postings list of term in field of seg, the i-th
// segment of the snapshot, less its deleted documents; a nil memo looks it
// up each time.
func (m *lookups) postings(i int, seg segment.Segment, deleted *roaring.Bitmap, field, term string) (*postingsList, error) {
	if m == nil {
		dict, err := seg.Dictionary(field)
		if err != nil {
			return nil, fmt.Errorf("dictionary of %s: %w", field, err)
		}
		return openPostings(dict, deleted, field, term)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	lk := listKey{i, field, term}
	if pl, ok := m.lists[lk]; ok {
		return pl, nil
	}
	dict, err := m.dictLocked(i, field)
	if err != nil {
		return nil, err
	}
	pl, err := openPostings(dict, deleted, field, term)
	if err != nil {
		return nil, err
	}
	if m.lists == nil {
		m.lists = map[listKey]*postingsList{}
	}
	m.lists[lk] = pl
	return pl, nil
}

// openPostings opens the postings list of term in a field's dictionary,
// less the deleted documents.
func openPostings(dict segment.Dictionary, deleted *roaring.Bitmap, field, term string) (*postingsList, error) {
	pl, err := dict.PostingsList([]byte(term), deleted, nil)
	if err != nil {
		return nil, fmt.Errorf("postings in %s: %w", field, err)
	}
	l, err := newPostingsList(pl)
	if err != nil {
		return nil, fmt.Errorf("postings in %s: %w", field, err)
	}
	return l, nil
}

// dictionary returns the dictionary of field in the i-th segment, read
// once per ranking.
func (m *lookups) dictionary(i int, field string) (segment.Dictionary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dictLocked(i, field)
}

func (m *lookups) dictLocked(i int, field string) (segment.Dictionary, error) {
	dk := dictKey{i, field}
	if d, ok := m.dicts[dk]; ok {
		return d, nil
	}
	d, err := m.segs[i].Dictionary(field)
	if err != nil {
		return nil, fmt.Errorf("dictionary of %s: %w", field, err)
	}
	if m.dicts == nil {
		m.dicts = map[dictKey]segment.Dictionary{}
	}
	m.dicts[dk] = d
	return d, nil
}
