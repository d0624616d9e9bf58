package search

import (
	"fmt"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
	segment "github.com/blugelabs/bluge_segment_api"
)

// Counting the matches of a query. A pass that prunes (prune.go) never
// sees most of the documents it matches, and Result.Total is the number of
// documents matching the query. The postings of a term in a segment are a
// bitmap of its documents: a query's matches in a segment are the union,
// intersection or at-least-m-of of its clauses' bitmaps, evaluated without
// reading a posting, and counted less the segment's deleted documents.
// Only a phrase, which needs positions, is found by running its searcher.

// countable is a query whose matches a counter can list.
type countable interface {
	// matches returns the documents of segment seg the query matches
	// (deleted documents may be among them).
	matches(c *counter, seg int) (*roaring.Bitmap, error)
}

// counter lists the matches of queries on one snapshot, and opens the
// searchers of one ranking on it (search).
type counter struct {
	r       snapshot
	cfg     bluge.Config
	segs    []segment.Segment
	deleted []*roaring.Bitmap
	offsets []uint64 // the first document number of each segment
	phrases map[*phraseQuery][]*roaring.Bitmap
}

// orInto is the postings list of ice segments: it adds its documents to a
// bitmap without iterating them.
type orInto interface {
	OrInto(*roaring.Bitmap)
}

// counter returns a counter of the matches of queries on the index's
// current snapshot.
func (x *Index) counter() (*counter, error) {
	c := &counter{cfg: x.cfg.search, phrases: map[*phraseQuery][]*roaring.Bitmap{}}
	var err error
	if c.segs, c.deleted, c.offsets, err = segmentsOf(snapshot{Snapshot: x.reader}); err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	c.r = snapshot{Snapshot: x.reader, memo: &lookups{segs: c.segs, deleted: c.deleted, offsets: c.offsets}}
	return c, nil
}

// search opens the searcher of q on the counter's snapshot, where the
// searchers of one ranking share their terms' lookups (lookups).
func (c *counter) search(q bluge.Query) (bsearch.Searcher, error) {
	return bluge.NewAllMatches(q).IncludeLocations().Searcher(c.r, c.cfg)
}

// count returns the number of live documents q matches.
func (c *counter) count(q countable) (int, error) {
	n := 0
	for i := range c.segs {
		bm, err := q.matches(c, i)
		if err != nil {
			return 0, err
		}
		live := bm.GetCardinality()
		if d := c.deleted[i]; d != nil {
			live -= bm.AndCardinality(d)
		}
		n += int(live)
	}
	return n, nil
}

// term returns the documents of segment seg holding term in field.
func (c *counter) term(seg int, field, term string) (*roaring.Bitmap, error) {
	dict, err := c.r.memo.dictionary(seg, field)
	if err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	pl, err := dict.PostingsList([]byte(term), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("count: postings of %q in %s: %w", term, field, err)
	}
	bm := roaring.New()
	if o, ok := pl.(orInto); ok {
		o.OrInto(bm)
		return bm, nil
	}
	it, err := pl.Iterator(false, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("count: postings of %q in %s: %w", term, field, err)
	}
	for {
		p, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("count: postings of %q in %s: %w", term, field, err)
		}
		if p == nil {
			return bm, nil
		}
		bm.Add(uint32(p.Number()))
	}
}

// phrase returns the documents of segment seg matching a phrase, running
// its searcher once for every segment.
func (c *counter) phrase(q *phraseQuery, seg int) (*roaring.Bitmap, error) {
	if bms, ok := c.phrases[q]; ok {
		return bms[seg], nil
	}
	bms := make([]*roaring.Bitmap, len(c.segs))
	for i := range bms {
		bms[i] = roaring.New()
	}
	s, err := c.search(q)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	ctx := bsearch.NewSearchContext(s.DocumentMatchPoolSize()+1, 0)
	i := 0
	for {
		d, err := s.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		for i+1 < len(c.offsets) && c.offsets[i+1] <= d.Number {
			i++
		}
		bms[i].Add(uint32(d.Number - c.offsets[i]))
		ctx.DocumentMatchPool.Put(d)
	}
	c.phrases[q] = bms
	return bms[seg], nil
}

// atLeast returns the documents in at least m of bms (m ≥ 1).
func atLeast(bms []*roaring.Bitmap, m int) *roaring.Bitmap {
	if m <= 1 {
		return roaring.FastOr(bms...)
	}
	// in[j]: the documents in more than j of the bitmaps seen so far.
	in := make([]*roaring.Bitmap, m)
	for j := range in {
		in[j] = roaring.New()
	}
	for _, bm := range bms {
		for j := m - 1; j >= 1; j-- {
			in[j].Or(roaring.And(in[j-1], bm))
		}
		in[0].Or(bm)
	}
	return in[m-1]
}

// allOf returns the documents in every one of bms.
func allOf(bms []*roaring.Bitmap) *roaring.Bitmap {
	if len(bms) == 0 {
		return roaring.New()
	}
	return roaring.FastAnd(bms...)
}

// clauseMatches returns the matches of each clause in segment seg.
func clauseMatches(c *counter, seg int, clauses []bluge.Query) ([]*roaring.Bitmap, error) {
	out := make([]*roaring.Bitmap, len(clauses))
	for i, q := range clauses {
		cq, ok := q.(countable)
		if !ok {
			return nil, fmt.Errorf("count: query %T cannot be counted", q)
		}
		bm, err := cq.matches(c, seg)
		if err != nil {
			return nil, err
		}
		out[i] = bm
	}
	return out, nil
}
