package search

import (
	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"
)

// snapshot is the reader queries search: bluge's index snapshot, with
// postings iterators that can be advanced backwards safely.
//
// A snapshot pools the postings iterators of closed term searchers and
// gives them to the next ones (while no merge has replaced it). bluge's
// iterator, asked to advance to a document before the one it is on (a
// disjunction does that to a clause it saw exhausted), restarts by opening
// another iterator, closing itself, which puts it in the pool although
// its searcher still uses it, and copying the new one over itself
// (index.postingsIterator.Advance in bluge v0.2.2). The next term searcher
// of the field then gets the same iterator, and two terms of a query read
// one stream of postings: at 100,000 entries a document matched "rome"
// with the five positions of "recommend", and since merges decide whether
// the pool is used, rankings changed from run to run. Restarting here
// instead never lets an iterator in use reach the pool.
type snapshot struct {
	*index.Snapshot
	// memo, when not nil, keeps what opening a term's searcher reads for
	// the ranking the snapshot was made for (lookups).
	memo *lookups
}

// PostingsIterator implements bluge's search.Reader.
func (s snapshot) PostingsIterator(term []byte, field string, freq, norm, vectors bool) (segment.PostingsIterator, error) {
	it, err := s.Snapshot.PostingsIterator(term, field, freq, norm, vectors)
	if err != nil {
		return nil, err
	}
	return &postings{PostingsIterator: it, snap: s.Snapshot, term: append([]byte(nil), term...), field: field, freq: freq, norm: norm, vectors: vectors}, nil
}

// postings is a postings iterator that restarts itself when advanced
// backwards (see snapshot).
type postings struct {
	segment.PostingsIterator
	snap                *index.Snapshot
	term                []byte
	field               string
	freq, norm, vectors bool
	started             bool   // a posting was returned
	last                uint64 // the last one's document
}

// Next implements segment.PostingsIterator.
func (p *postings) Next() (segment.Posting, error) {
	return p.seen(p.PostingsIterator.Next())
}

// Advance implements segment.PostingsIterator for any document number,
// as bluge's searchers call it.
func (p *postings) Advance(n uint64) (segment.Posting, error) {
	if p.started && n <= p.last {
		fresh, err := p.snap.PostingsIterator(p.term, p.field, p.freq, p.norm, p.vectors)
		if err != nil {
			return nil, err
		}
		// Nothing reads the old iterator any longer: it may be pooled.
		_ = p.PostingsIterator.Close()
		p.PostingsIterator, p.started = fresh, false
	}
	return p.seen(p.PostingsIterator.Advance(n))
}

func (p *postings) seen(d segment.Posting, err error) (segment.Posting, error) {
	if d != nil {
		p.started, p.last = true, d.Number()
	}
	return d, err
}
