package search

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Filters run in the index. What a document's file says and only a new
// version of the file changes (its domain and topic, from its path; its
// tags; its date) is indexed in keyword fields, whose postings are bitmaps
// of documents; a filter is the intersection of the bitmaps of its
// criteria in each segment, and a filtered pass walks only the documents
// of that intersection (filteredSearcher leapfrogs the query's searcher to
// them). So a filter that keeps few documents makes the query cheaper, and
// the n best of a filtered pass are the n best of the filtered documents,
// not the filtered n best of all. What changes with use rather than with
// the file (an entry's importance and maturity, from its lifecycle
// signals) is not indexed, where it would go stale between two writes of
// the file: the caller computes, at query time, the paths that pass
// (Filter.Keep), and the index turns them into a bitmap through the path
// (document id) postings.

// The keyword fields filters read; none is scored or stored.
const (
	domainField = "domain" // the first folder of the path
	topicField  = "topic"  // the second folder of the path
	tagField    = "tag"    // each tag, folded (FoldTag)
	dateField   = "date"   // Doc.Date, as dateKey writes it
)

// filterFields are the keyword fields of filters (warm loads them).
var filterFields = []string{domainField, topicField, tagField, dateField, idField}

// Filter narrows a search to the documents that pass every criterion
// given; the zero Filter keeps every document.
type Filter struct {
	// Domain keeps the documents whose path's first folder is Domain.
	Domain string
	// Topic keeps the documents whose path's second folder (the topic of
	// an entry domain/topic/…) is Topic.
	Topic string
	// Tags keeps the documents that carry every one of Tags, compared
	// case-folded (FoldTag).
	Tags []string
	// Since and Until keep the documents whose Doc.Date is within
	// [Since, Until]; a zero bound is open. A document without a date
	// passes neither bound.
	Since, Until time.Time
	// Keep, when not nil, keeps only the documents whose path it holds.
	Keep map[string]bool
	// Without leaves out the documents whose path's first folder is
	// Without (the archive, api.ArchiveFolder).
	Without string
}

// IsZero reports whether f keeps every document.
func (f Filter) IsZero() bool {
	return f.Domain == "" && f.Topic == "" && len(f.Tags) == 0 && f.Since.IsZero() && f.Until.IsZero() && f.Keep == nil && f.Without == ""
}

// Admits reports whether f keeps the document at path carrying tags and
// dated date (zero: no date), as a filtered search does, for what is
// found outside the index (the files nearest a question by meaning).
func (f Filter) Admits(path string, tags []string, date time.Time) bool {
	if f.Domain != "" && domainOf(path) != f.Domain {
		return false
	}
	if f.Without != "" && domainOf(path) == f.Without {
		return false
	}
	if f.Topic != "" && topicOf(path) != f.Topic {
		return false
	}
	for _, t := range f.Tags {
		if !slices.ContainsFunc(tags, func(u string) bool { return FoldTag(u) == FoldTag(t) }) {
			return false
		}
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		if date.IsZero() || (!f.Since.IsZero() && dateKey(date) < dateKey(f.Since)) || (!f.Until.IsZero() && dateKey(date) > dateKey(f.Until)) {
			return false
		}
	}
	return f.Keep == nil || f.Keep[path]
}

// Scope is a Filter and the order of the matches: by score (By nil) or by
// a key of each document, descending, equal keys by score then path.
type Scope struct {
	Filter
	// By returns the key of the document at path, or false when it has
	// none: such documents come after those with a key.
	By func(path string) (float64, bool)
	// Uncounted spares counting every match, for a caller that reads
	// Total only as a lower bound: Total is then the number of documents
	// ranked, which is every match when fewer than limit match. At a
	// million entries the count was a tenth of a question.
	Uncounted bool
}

// FoldTag is a tag as filters compare it: trimmed, in Unicode NFC,
// case-folded ("E-mail" and "e-mail" are one tag).
func FoldTag(t string) string {
	return cases.Fold().String(norm.NFC.String(strings.TrimSpace(t)))
}

// domainOf is the first folder of a path ("" for a file at the root).
func domainOf(p string) string {
	d, rest, ok := strings.Cut(p, "/")
	if !ok || rest == "" {
		return ""
	}
	return d
}

// topicOf is the second folder of a path ("" above a topic).
func topicOf(p string) string {
	_, rest, ok := strings.Cut(p, "/")
	if !ok {
		return ""
	}
	t, rest, ok := strings.Cut(rest, "/")
	if !ok || rest == "" {
		return ""
	}
	return t
}

// dateKey writes a time so that keys sort as the times do: UTC, fixed
// width, to the nanosecond (years outside 0000–9999 are clamped).
func dateKey(t time.Time) string {
	t = t.UTC()
	switch {
	case t.Year() < 0:
		t = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	case t.Year() > 9999:
		t = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	}
	return t.Format("2006-01-02T15:04:05.000000000Z")
}

// filterTerms adds to doc the keyword fields of d that filters read.
func filterTerms(doc *bluge.Document, d Doc) {
	if v := domainOf(d.Path); v != "" {
		doc.AddField(bluge.NewKeywordField(domainField, v))
	}
	if v := topicOf(d.Path); v != "" {
		doc.AddField(bluge.NewKeywordField(topicField, v))
	}
	seen := map[string]bool{}
	for _, t := range d.Tags {
		if v := FoldTag(t); v != "" && !seen[v] {
			seen[v] = true
			doc.AddField(bluge.NewKeywordField(tagField, v))
		}
	}
	if !d.Date.IsZero() {
		doc.AddField(bluge.NewKeywordField(dateField, dateKey(d.Date)))
	}
}

// HoldsDomain reports whether the index holds a document in the domain d
// (the first folder of its path), from each segment's dictionary of
// domains: what a query asks of a tree of any size before it leaves the
// archive out, so it must not cost a walk of every path.
func (x *Index) HoldsDomain(d string) (bool, error) {
	var held bool
	err := x.retry(func() error {
		if f := x.files(); f != nil {
			f.searching.Add(1)
			defer f.searching.Add(-1)
		}
		if err := x.warm(); err != nil {
			return err
		}
		x.mu.RLock()
		defer x.mu.RUnlock()
		if x.closed {
			return ErrClosed
		}
		c, err := x.counter()
		if err != nil {
			return err
		}
		for seg := range c.segs {
			bm, err := c.term(seg, domainField, d)
			if err != nil {
				return err
			}
			if del := c.deleted[seg]; del != nil {
				bm.AndNot(del)
			}
			if held = !bm.IsEmpty(); held {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("search: domain %q: %w", d, err)
	}
	return held, nil
}

// allowSet is the documents a filter keeps in one snapshot, by segment
// (segment document numbers), with the first document number of each
// segment, as bluge numbers them across a snapshot.
type allowSet struct {
	segs    []*roaring.Bitmap
	offsets []uint64
}

// allowed returns the documents of the counter's snapshot that f keeps,
// or nil when f keeps every document. Called with x.mu held.
func (x *Index) allowed(c *counter, f Filter) (*allowSet, error) {
	if f.IsZero() {
		return nil, nil
	}
	a := &allowSet{segs: make([]*roaring.Bitmap, len(c.segs)), offsets: c.offsets}
	// The paths given are looked up one by one in each segment's path
	// postings: the fewer of those kept and those left out.
	var keep, drop []string
	complement := false // drop holds the paths left out
	if f.Keep != nil {
		if err := x.docsReady(); err != nil {
			return nil, err
		}
		for p := range f.Keep {
			if _, ok := x.docs.Peek(p); ok && f.Keep[p] {
				keep = append(keep, p)
			}
		}
		if len(keep) > x.docs.Len()/2 {
			keep, complement = nil, true
			for p := range x.docs.All() {
				if !f.Keep[p] {
					drop = append(drop, p)
				}
			}
		}
	}
	for seg := range c.segs {
		var bms []*roaring.Bitmap
		term := func(field, v string) error {
			bm, err := c.term(seg, field, v)
			bms = append(bms, bm)
			return err
		}
		if f.Domain != "" {
			if err := term(domainField, f.Domain); err != nil {
				return nil, err
			}
		}
		if f.Topic != "" {
			if err := term(topicField, f.Topic); err != nil {
				return nil, err
			}
		}
		for _, t := range f.Tags {
			if err := term(tagField, FoldTag(t)); err != nil {
				return nil, err
			}
		}
		if !f.Since.IsZero() || !f.Until.IsZero() {
			lo, hi := "", ""
			if !f.Since.IsZero() {
				lo = dateKey(f.Since)
			}
			if !f.Until.IsZero() {
				hi = dateKey(f.Until)
			}
			bm, err := c.keyRange(seg, dateField, lo, hi)
			if err != nil {
				return nil, err
			}
			bms = append(bms, bm)
		}
		if f.Keep != nil {
			bm, err := c.paths(seg, keep)
			if err != nil {
				return nil, err
			}
			if complement {
				// bm is empty: every document but those dropped.
				bm.AddRange(0, c.segs[seg].Count())
				out, err := c.paths(seg, drop)
				if err != nil {
					return nil, err
				}
				bm.AndNot(out)
			}
			bms = append(bms, bm)
		}
		all := allOf(bms)
		if f.Without != "" {
			if len(bms) == 0 {
				all.AddRange(0, c.segs[seg].Count())
			}
			out, err := c.term(seg, domainField, f.Without)
			if err != nil {
				return nil, err
			}
			all.AndNot(out)
		}
		a.segs[seg] = all
	}
	return a, nil
}

// paths returns the documents of segment seg with the given paths.
func (c *counter) paths(seg int, ps []string) (*roaring.Bitmap, error) {
	bm := roaring.New()
	for _, p := range ps {
		t, err := c.term(seg, idField, p)
		if err != nil {
			return nil, err
		}
		bm.Or(t)
	}
	return bm, nil
}

// keyRange returns the documents of segment seg holding a term of field
// within [lo, hi] ("" leaves a bound open).
func (c *counter) keyRange(seg int, field, lo, hi string) (*roaring.Bitmap, error) {
	dict, err := c.r.memo.dictionary(seg, field)
	if err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	var start, end []byte
	if lo != "" {
		start = []byte(lo)
	}
	if hi != "" {
		// The end key is exclusive: the smallest key after hi.
		end = append([]byte(hi), 0)
	}
	it := dict.Iterator(nil, start, end)
	defer func() { _ = it.Close() }()
	bm := roaring.New()
	for {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("count: terms of %s: %w", field, err)
		}
		if e == nil {
			return bm, nil
		}
		t, err := c.term(seg, field, e.Term())
		if err != nil {
			return nil, err
		}
		bm.Or(t)
	}
}

// newAllowSet returns the set of the documents numbered nums in a
// snapshot with the given segment offsets.
func newAllowSet(offsets []uint64, nums []uint64) *allowSet {
	a := &allowSet{segs: make([]*roaring.Bitmap, len(offsets)), offsets: offsets}
	for i := range a.segs {
		a.segs[i] = roaring.New()
	}
	for _, n := range nums {
		i := a.segOf(n)
		a.segs[i].Add(uint32(n - offsets[i]))
	}
	return a
}

// segOf is the segment of document n.
func (a *allowSet) segOf(n uint64) int {
	i, found := slices.BinarySearch(a.offsets, n)
	if !found {
		i--
	}
	return max(i, 0)
}

// count is the number of documents a keeps (deleted ones included).
func (a *allowSet) count() uint64 {
	var n uint64
	for _, bm := range a.segs {
		n += bm.GetCardinality()
	}
	return n
}

// filtered is a query whose matches are those of q that an allowSet
// keeps, with q's scores.
type filtered struct {
	q     bluge.Query
	allow *allowSet
}

// Searcher implements bluge.Query.
func (f *filtered) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, _, err := f.open(r, opts)
	return s, err
}

func (f *filtered) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	ss, bounds, err := openClauses([]bluge.Query{f.q}, r, opts)
	if err != nil {
		return nil, 0, err
	}
	if len(ss) == 0 || f.allow.count() == 0 {
		closeSearchers(ss)
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	}
	its := make([]roaring.IntPeekable, len(f.allow.segs))
	for i, bm := range f.allow.segs {
		its[i] = bm.Iterator()
	}
	return &filteredSearcher{inner: ss[0], allow: f.allow, its: its}, bounds[0], nil
}

func (f *filtered) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	bms, err := clauseMatches(c, seg, []bluge.Query{f.q})
	if err != nil {
		return nil, err
	}
	return roaring.And(bms[0], f.allow.segs[seg]), nil
}

// filteredSearcher passes on the documents of a searcher that an allowSet
// keeps: from each document it is given that the set does not keep, it
// advances the searcher to the next document the set keeps, so the
// searcher skips what lies between (a term's postings jump there, a
// pruning disjunction advances its clauses there). It passes the
// threshold of top on to the searcher.
type filteredSearcher struct {
	inner bsearch.Searcher
	allow *allowSet
	its   []roaring.IntPeekable // by segment, moving forward only (as searchers do)
	from  uint64                // the first document number not returned yet
}

func (s *filteredSearcher) atLeast(min float64) {
	if p, ok := s.inner.(pruner); ok {
		p.atLeast(min)
	}
}

// next returns the first document at or after n that the set keeps.
func (s *filteredSearcher) next(n uint64) (uint64, bool) {
	for i := s.allow.segOf(n); i < len(s.its); i++ {
		it := s.its[i]
		if off := s.allow.offsets[i]; n > off {
			it.AdvanceIfNeeded(uint32(n - off))
		}
		if it.HasNext() {
			return s.allow.offsets[i] + uint64(it.PeekNext()), true
		}
	}
	return 0, false
}

// Next implements bluge's search.Searcher: the searcher is advanced to
// the first kept document after the last one returned, rather than moved
// to its next match, which the set would most often not keep.
func (s *filteredSearcher) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	return s.Advance(ctx, s.from)
}

// Advance implements bluge's search.Searcher.
func (s *filteredSearcher) Advance(ctx *bsearch.Context, number uint64) (*bsearch.DocumentMatch, error) {
	t, ok := s.next(max(number, s.from))
	if !ok {
		return nil, nil
	}
	d, err := s.inner.Advance(ctx, t)
	d, err = s.skip(ctx, d, err)
	if d != nil {
		s.from = d.Number + 1
	}
	return d, err
}

func (s *filteredSearcher) skip(ctx *bsearch.Context, d *bsearch.DocumentMatch, err error) (*bsearch.DocumentMatch, error) {
	for err == nil && d != nil {
		t, ok := s.next(d.Number)
		if !ok {
			ctx.DocumentMatchPool.Put(d)
			return nil, nil
		}
		if t == d.Number {
			return d, nil
		}
		ctx.DocumentMatchPool.Put(d)
		d, err = s.inner.Advance(ctx, t)
	}
	return nil, err
}

// Close implements bluge's search.Searcher.
func (s *filteredSearcher) Close() error { return s.inner.Close() }

// Count implements bluge's search.Searcher: at most the searcher's.
func (s *filteredSearcher) Count() uint64 { return min(s.inner.Count(), s.allow.count()) }

// Min implements bluge's search.Searcher.
func (s *filteredSearcher) Min() int { return 0 }

// Size implements bluge's search.Searcher.
func (s *filteredSearcher) Size() int { return s.inner.Size() }

// DocumentMatchPoolSize implements bluge's search.Searcher.
func (s *filteredSearcher) DocumentMatchPoolSize() int { return 1 + s.inner.DocumentMatchPoolSize() }

// keyed is one match of a pass ordered by a key (Scope.By).
type keyed struct {
	num   uint64
	score float64
	key   float64
	has   bool
	path  string
}

// runBy is run for a pass ordered by a key: it reads every match of q
// (their number, score and path; nothing is pruned, since a match of any
// score may have the best key), keeps the limit first by key, equal keys
// by score then path, and runs q again over those alone (the allowSet of
// their numbers) to read them as run does.
func (x *Index) runBy(q bluge.Query, limit int, by func(string) (float64, bool), c *counter) ([]stored, error) {
	s, err := c.search(withoutLocations{q})
	if err != nil {
		return nil, err
	}
	var all []keyed
	err = func() error {
		defer func() { _ = s.Close() }()
		ctx := bsearch.NewSearchContext(1+s.DocumentMatchPoolSize(), 0)
		for {
			d, err := s.Next(ctx)
			if err != nil {
				return err
			}
			if d == nil {
				return nil
			}
			if err := d.LoadDocumentValues(ctx, []string{idField}); err != nil {
				return fmt.Errorf("read the path of document %d: %w", d.Number, err)
			}
			vs := d.DocValues(idField)
			if len(vs) == 0 {
				return fmt.Errorf("document %d has no path", d.Number)
			}
			k := keyed{num: d.Number, score: d.Score, path: string(vs[0])}
			k.key, k.has = by(k.path)
			all = append(all, k)
			ctx.DocumentMatchPool.Put(d)
		}
	}()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if a.has != b.has {
			if a.has {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.key, a.key); a.has && c != 0 {
			return c
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	all = all[:min(len(all), limit)]
	if len(all) == 0 {
		return nil, nil
	}
	nums := make([]uint64, len(all))
	rank := make(map[string]int, len(all))
	for i, k := range all {
		nums[i] = k.num
		rank[k.path] = i
	}
	docs, err := x.run(&filtered{q: q, allow: newAllowSet(c.offsets, nums)}, len(all), c)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b stored) int { return cmp.Compare(rank[a.path], rank[b.path]) })
	return docs, nil
}
