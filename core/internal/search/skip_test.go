package search

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// The reflect lookup of ice's unexported fields finds them all: without
// them every postings list is read through ice's own iterator, which does
// not skip (skip.go).
func TestPostingsFieldsFound(t *testing.T) {
	if !listFieldsFound {
		t.Fatal("ice.PostingsList or ice.Segment lacks a field skip.go reads: postings are read through ice's iterator")
	}
}

// skipIter reads what ice's PostingsIterator reads, document numbers,
// frequencies and norms, for any sequence of Next and Advance: on the
// segments of an index, and on their merge (where ice writes the terms of
// one document, once, without locations in the 1-hit encoding) read from
// memory and through a ReaderAt as the store's files are, with no deleted
// documents and with some (then ice's all and actual bitmaps differ).
func TestSkipIterAsIce(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 5))
	docs := lengthened(randomCorpus(rng, 3000))
	for i := 0; i < len(docs); i += 97 { // terms of one document
		docs[i].Content += fmt.Sprintf(" solo%d", i)
	}
	terms := strings.Fields("otter kelp forest river stone cloud amber delta harbor lantern meadow quartz signal timber velvet willow barley canyon ember falcon absent")
	for i := 0; i < len(docs); i += 97 {
		terms = append(terms, fmt.Sprintf("solo%d", i))
	}
	// The paths, in bluge's field of identifiers.
	var ids []string
	for i := 0; i < len(docs); i += 301 {
		ids = append(ids, docs[i].Path)
	}
	x := newIndex(t, Options{})
	putShuffled(t, x, docs, 1000, 9)
	segs, _, _, err := segmentsOf(snapshot{Snapshot: x.reader})
	if err != nil {
		t.Fatal(err)
	}
	held, read := mergedSegments(t, segs)
	// A segment of 9,000 documents: the frequent terms' documents fill
	// roaring's bitmap containers (more than 4,096 in a range of 65,536),
	// which addTo reads itself (containerFrom).
	big := newIndex(t, Options{})
	if err := big.Put(lengthened(randomCorpus(rand.New(rand.NewPCG(16, 6)), 9000))...); err != nil {
		t.Fatal(err)
	}
	bigSegs, _, _, err := segmentsOf(snapshot{Snapshot: big.reader})
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(segs, held, read), bigSegs...)
	var c listCounts
	for _, seg := range all {
		for _, deleted := range []*roaring.Bitmap{nil, randomDeletions(rng, seg.Count())} {
			compareSegment(t, rng, seg, deleted, terms, ids, &c)
		}
	}
	t.Logf("%+v", c)
	if c.files == 0 || c.inMemory == 0 || c.chunkedDirty == 0 || c.chunkedClean == 0 || c.oneHit == 0 || c.oneHitDeleted == 0 || c.dense == 0 {
		t.Fatalf("lists %+v: the test needs each kind", c)
	}
	// A roaring whose containers cannot be read (denseFound false) is read
	// through its iterator: the same postings.
	found := denseFound
	denseFound = false
	defer func() { denseFound = found }()
	for _, seg := range all {
		compareSegment(t, rng, seg, randomDeletions(rng, seg.Count()), terms, ids, &listCounts{})
	}
}

// lengthened makes one document in 13 of docs long, 80 to 200 words, two
// of them said 40 to 100 times, and one longer than 16,384 words: frequencies and norms (a field's length) of two and three bytes,
// which addTo reads apart from those of one.
func lengthened(docs []Doc) []Doc {
	for i := 0; i < len(docs); i += 13 {
		docs[i].Content += strings.Repeat(" kelp river", 40+i%61)
	}
	docs[500].Content += strings.Repeat(" zephyr", 1<<14)
	return docs
}

// mergedSegments merges segs, bluge's segments (which ice merges
// unwrapped), with ice, and returns the merge loaded from memory and read
// by ranges, as the store's files are.
func mergedSegments(t *testing.T, segs []segment.Segment) (held, read *ice.Segment) {
	t.Helper()
	inner := make([]segment.Segment, len(segs))
	for i, seg := range segs {
		if inner[i] = iceOf(seg); inner[i].(*ice.Segment) == nil {
			t.Fatalf("segment %d (%T) is not ice's", i, seg)
		}
	}
	var merged bytes.Buffer
	if _, err := ice.Merge(inner, make([]*roaring.Bitmap, len(segs)), mergeBufferSize).WriteTo(&merged, nil); err != nil {
		t.Fatal(err)
	}
	h, err := ice.Load(segment.NewDataBytes(merged.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ice.Load(readerData(bytes.NewReader(merged.Bytes()), merged.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return h.(*ice.Segment), r.(*ice.Segment)
}

// randomDeletions is a random tenth of the documents 0 to n-1.
func randomDeletions(rng *rand.Rand, n uint64) *roaring.Bitmap {
	bm := roaring.New()
	for d := range n {
		if rng.IntN(10) == 0 {
			bm.Add(uint32(d))
		}
	}
	return bm
}

// compareSegment compares skipIter with ice's iterator on the postings of
// terms in every field of seg, and of ids in bluge's field of
// identifiers, less the deleted documents.
func compareSegment(t *testing.T, rng *rand.Rand, seg segment.Segment, deleted *roaring.Bitmap, terms, ids []string, c *listCounts) {
	t.Helper()
	for _, field := range append(fieldNames[:], "_id") {
		dict, err := seg.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		terms := terms
		if field == "_id" {
			terms = ids
		}
		for _, term := range terms {
			l, err := openPostings(dict, deleted, field, term)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s:%s, deleted %v", field, term, deleted != nil)
			if !l.own {
				t.Fatalf("%s: postings %T not read by skipIter", what, l.ice)
			}
			c.add(l)
			for _, read := range []struct{ freqNorm, vectors bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
				compareWithIce(t, rng, what, l, read.freqNorm, read.vectors, seg.Count())
			}
			for _, vectors := range []bool{false, true} {
				compareAddTo(t, rng, what, l, vectors)
			}
		}
	}
}

// listCounts counts the kinds of postings lists a test read.
type listCounts struct {
	files, inMemory, chunkedDirty, chunkedClean, oneHit, oneHitDeleted int
	// dense: lists with a bitmap container among their live documents.
	dense int
}

func (c *listCounts) add(l *postingsList) {
	switch {
	case l.one:
		c.oneHit++
		if !l.oneLive {
			c.oneHitDeleted++
		}
	case l.all == nil:
	case l.data.mem == nil:
		c.files++
	default:
		c.inMemory++
	}
	if l.actual != nil && !l.actual.IsEmpty() {
		denseOnce.Do(func() { dense, denseFound = findDense() })
		if w, _, ok := containerFrom(dense, l.actual, l.actual.Minimum()); ok && w != nil {
			c.dense++
		}
	}
	if len(l.freqs.ends) > 1 {
		if l.clean {
			c.chunkedClean++
		} else {
			c.chunkedDirty++
		}
	}
}

// compareWithIce reads l through postingsIter and ice's iterator, with
// or without frequencies and norms, and locations: a whole walk of Next,
// then random sequences of Next and Advance.
func compareWithIce(t *testing.T, rng *rand.Rand, what string, l *postingsList, freqNorm, vectors bool, docs uint64) {
	t.Helper()
	what = fmt.Sprintf("%s, frequencies %v, locations %v", what, freqNorm, vectors)
	for round := range 6 {
		theirs, err := l.ice.Iterator(freqNorm, freqNorm, vectors, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ours postingsIter
		if err := ours.reset(l, freqNorm, vectors); err != nil {
			t.Fatal(err)
		}
		if ours.ice != nil {
			t.Fatalf("%s: read through ice's iterator", what)
		}
		// After the end, a few more calls: an advance to a document the
		// last one passed must find none, as ice's does.
		for step, ends := 0, 0; ; step++ {
			var target uint64
			op := "next"
			if round > 0 && rng.IntN(round+1) > 0 {
				target = rng.Uint64N(docs + 5)
				op = fmt.Sprint("advance to ", target)
			}
			var p segment.Posting
			if target == 0 {
				p, err = theirs.Next()
			} else {
				p, err = theirs.Advance(target)
			}
			if err != nil {
				t.Fatal(err)
			}
			ok, err := ours.next(target)
			if err != nil {
				t.Fatalf("%s, round %d, step %d, %s: %v", what, round, step, op, err)
			}
			want, got := "none", "none"
			if p != nil {
				want = fmt.Sprintf("%d freq %d norm %x", p.Number(), p.Frequency(), math.Float64bits(p.Norm()))
				for _, l := range p.Locations() {
					want += fmt.Sprintf(" %s@%d[%d:%d]", l.Field(), l.Pos(), l.Start(), l.End())
				}
			}
			if ok {
				got = fmt.Sprintf("%d freq %d norm %x", ours.doc, ours.freq, math.Float64bits(ours.norm))
				for _, l := range ours.locs {
					got += fmt.Sprintf(" %s@%d[%d:%d]", l.field, l.pos, l.start, l.end)
				}
			}
			if got != want {
				t.Fatalf("%s, round %d, step %d, %s:\n got %s\nwant %s", what, round, step, op, got, want)
			}
			if p == nil {
				if ends++; ends == 4 {
					break
				}
			}
		}
	}
}

// compareAddTo reads l through skipIter.addTo, in windows of random widths
// with advances between some of them, against ice's iterator: the same
// documents and scores, and the posting past each window left read.
func compareAddTo(t *testing.T, rng *rand.Rand, what string, l *postingsList, vectors bool) {
	t.Helper()
	what = fmt.Sprintf("%s, locations %v", what, vectors)
	theirs, err := l.ice.Iterator(true, true, vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ours postingsIter
	if err := ours.reset(l, true, vectors); err != nil {
		t.Fatal(err)
	}
	bm := &bm25Scorer{weight: 2.5, k1: 1.2, b: 0.75, avg: 7.3}
	same := func(step int, doc uint64, score float64, p segment.Posting) {
		t.Helper()
		if p == nil {
			t.Fatalf("%s, window %d: document %d, ice has no more", what, step, doc)
		}
		if want := bm.Score(p.Frequency(), p.Norm()); doc != p.Number() || score != want {
			t.Fatalf("%s, window %d: document %d score %v, want %d score %v", what, step, doc, score, p.Number(), want)
		}
	}
	w := new(docWindow)
	from := uint64(0) // every document before it was read
	for step := 0; ; step++ {
		width := 1 + rng.IntN(300)
		w.reset(from, width)
		more, last, err := ours.skip.addTo(w, 0, 0, from+uint64(width), bm)
		if err != nil {
			t.Fatalf("%s, window %d: %v", what, step, err)
		}
		for s := range width {
			if w.head[s] == 0 {
				continue
			}
			p, err := theirs.Next()
			if err != nil {
				t.Fatal(err)
			}
			same(step, from+uint64(s), w.sums[s], p)
			w.clear(s)
		}
		if !more {
			if p, err := theirs.Next(); p != nil || err != nil {
				t.Fatalf("%s, window %d: addTo ended before ice's %v (%v)", what, step, p, err)
			}
			return
		}
		p, err := theirs.Next()
		if err != nil {
			t.Fatal(err)
		}
		same(step, ours.skip.doc, bm.Score(ours.skip.freq, ours.skip.norm), p)
		if last != ours.skip.doc+1 || ours.skip.doc < from+uint64(width) {
			t.Fatalf("%s, window %d to %d: left at %d, last %d", what, step, from+uint64(width), ours.skip.doc, last)
		}
		from = last
		if rng.IntN(4) == 0 {
			target := from + rng.Uint64N(40)
			ok, err := ours.skip.next(target)
			if err != nil {
				t.Fatal(err)
			}
			p, err := theirs.Advance(target)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				if p != nil {
					t.Fatalf("%s, window %d: advance to %d ended before ice's %d", what, step, target, p.Number())
				}
				return
			}
			same(step, ours.skip.doc, bm.Score(ours.skip.freq, ours.skip.norm), p)
			from = ours.skip.doc + 1
		}
	}
}
