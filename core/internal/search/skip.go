package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// Postings that skip. ice v1's PostingsIterator, advanced to a document,
// steps roaring's iterator one document at a time and decodes the
// frequency and norm of every posting it passes
// (nextDocNumAtOrAfterClean), so a clause that maxScore only advances to
// the candidates (prune.go) cost about what reading all its postings
// does: the pruning saved scoring, not decoding (bench/scale/notes.md).
// skipIter reads ice's postings itself and jumps: roaring's
// AdvanceIfNeeded to the document, the chunk of frequencies and norms
// holding it loaded directly, and in that chunk only the entries between
// the last one read and the document's passed over, without decoding
// them; roaring's Rank of the document tells which entry is its.
//
// The format, as ice v1.0.0 writes it (writePostings, chunkedIntCoder):
// a term's postings are a roaring bitmap of its documents, all of them,
// deleted ones included, and a stream of frequencies and norms in chunks.
// The document d is in chunk d / chunkSize (chunkSize chosen per term,
// getChunkSize); a chunk holds, for each document of the bitmap in it in
// order, two uvarints: the frequency shifted left once with a bit telling
// whether locations follow in the separate stream of locations, and the
// bits of the norm as a float32. The stream starts with the number of
// chunks and the end offset of each, relative to the first chunk's start.
// The locations are a stream chunked alike, with an entry for each
// document whose frequency says it has some: the entry's length in bytes,
// then four uvarints a location (the field's number in the segment, the
// position, the start and end offsets). A term in one document with a
// frequency of 1 and no locations is encoded in its dictionary entry alone
// (the "1-hit" encoding).
//
// ice does not export what it parsed of a postings list (the bitmaps, the
// offsets of the streams, the chunk size) nor its segment's bytes: they
// are read from its unexported fields, found by name and type through
// reflect, as dictwalk.go does for its iterator. An ice without them (an
// upgrade; TestPostingsFieldsFound fails then) is read through its own
// iterator: slower, the same postings.

// iceFields are the offsets of the fields of ice.PostingsList and
// ice.Segment that a skipping reader needs.
type iceFields struct {
	sb, freqOffset, locOffset, postings, except, docNum1Hit, normBits1Hit, chunkSize uintptr
	data                                                                             uintptr // in ice.Segment
}

// listFields are those offsets; listFieldsFound is false when one of them
// is missing or has another type.
var listFields, listFieldsFound = func() (iceFields, bool) {
	var f iceFields
	pl, seg := reflect.TypeFor[ice.PostingsList](), reflect.TypeFor[ice.Segment]()
	bitmap, u64 := reflect.TypeFor[*roaring.Bitmap](), reflect.TypeFor[uint64]()
	for _, want := range []struct {
		in   reflect.Type
		name string
		typ  reflect.Type
		at   *uintptr
	}{
		{pl, "sb", reflect.TypeFor[*ice.Segment](), &f.sb},
		{pl, "freqOffset", u64, &f.freqOffset},
		{pl, "locOffset", u64, &f.locOffset},
		{pl, "postings", bitmap, &f.postings},
		{pl, "except", bitmap, &f.except},
		{pl, "docNum1Hit", u64, &f.docNum1Hit},
		{pl, "normBits1Hit", u64, &f.normBits1Hit},
		{pl, "chunkSize", u64, &f.chunkSize},
		{seg, "data", reflect.TypeFor[*segment.Data](), &f.data},
	} {
		sf, ok := want.in.FieldByName(want.name)
		if !ok || sf.Type != want.typ {
			return iceFields{}, false
		}
		*want.at = sf.Offset
	}
	return f, true
}()

// postingsList is the postings list of a term in one segment, less the
// segment's deleted documents, with what its iterators share: opened once
// per ranking (lookups) and then only read, by any number of iterators.
type postingsList struct {
	ice   segment.PostingsList // ice's, read through its iterator when own is false
	count uint64
	own   bool // read by skipIter, from the fields below
	// The 1-hit encoding: one document, live or not, frequency 1.
	one     bool
	oneDoc  uint64
	oneNorm uint64
	oneLive bool
	all     *roaring.Bitmap // the documents, deleted ones included
	actual  *roaring.Bitmap // the live documents (all, when none is deleted)
	clean   bool            // actual is all
	// gone is all's deleted documents, when there are some: a document's
	// rank in all is its rank in actual and in gone, and gone is small
	// where all can be large (roaring's Rank of a dense container counts
	// the bits of up to 1,024 words).
	gone   *roaring.Bitmap
	data   *dataLayout // the segment's bytes
	fields []string    // the segment's, by number
	chunk  uint64      // the chunk size, in document numbers
	freqs  chunked     // frequencies and norms
	// The locations, read when an iterator first asks for them (only the
	// pass reading where the terms occur does).
	locOffset uint64
	locsOnce  sync.Once
	locs      chunked
	locsErr   error
}

// chunked is where a stream of chunks is in the segment: none when ice
// wrote nothing (its termNotEncoded).
type chunked struct {
	none  bool
	start uint64   // of the first chunk
	ends  []uint64 // of each chunk, from start
}

// newPostingsList reads ice's postings list pl.
func newPostingsList(pl segment.PostingsList) (*postingsList, error) {
	l := &postingsList{ice: pl, count: pl.Count()}
	ip, ok := pl.(*ice.PostingsList)
	if !ok || !listFieldsFound {
		return l, nil
	}
	p := unsafe.Pointer(ip)
	f := listFields
	l.own = true
	if nb := *(*uint64)(unsafe.Add(p, f.normBits1Hit)); nb != 0 {
		except := *(**roaring.Bitmap)(unsafe.Add(p, f.except))
		l.one, l.oneNorm = true, nb
		l.oneDoc = *(*uint64)(unsafe.Add(p, f.docNum1Hit))
		l.oneLive = except == nil || !except.Contains(uint32(l.oneDoc))
		return l, nil
	}
	l.all = *(**roaring.Bitmap)(unsafe.Add(p, f.postings))
	if l.all == nil {
		return l, nil // no postings
	}
	l.actual, l.clean = l.all, true
	if except := *(**roaring.Bitmap)(unsafe.Add(p, f.except)); except != nil {
		// except is every deleted document of the segment: most hold other
		// terms.
		if gone := roaring.And(l.all, except); !gone.IsEmpty() {
			l.actual, l.clean, l.gone = roaring.AndNot(l.all, gone), false, gone
		}
	}
	l.chunk = *(*uint64)(unsafe.Add(p, f.chunkSize))
	if l.chunk == 0 {
		return nil, errors.New("postings with a chunk size of 0")
	}
	sb := *(**ice.Segment)(unsafe.Add(p, f.sb))
	if sb == nil {
		return nil, errors.New("postings without a segment")
	}
	data := *(**segment.Data)(unsafe.Add(unsafe.Pointer(sb), f.data))
	if data == nil {
		return nil, errors.New("postings of a segment without data")
	}
	l.data, l.fields = (*dataLayout)(unsafe.Pointer(data)), sb.Fields()
	l.locOffset = *(*uint64)(unsafe.Add(p, f.locOffset))
	off := *(*uint64)(unsafe.Add(p, f.freqOffset))
	var err error
	if l.freqs, err = l.readChunked(off); err != nil {
		return nil, fmt.Errorf("chunks of frequencies at %d: %w", off, err)
	}
	return l, nil
}

// locations returns the chunks of the locations.
func (l *postingsList) locations() (*chunked, error) {
	l.locsOnce.Do(func() {
		if l.locs, l.locsErr = l.readChunked(l.locOffset); l.locsErr != nil {
			l.locsErr = fmt.Errorf("chunks of locations at %d: %w", l.locOffset, l.locsErr)
		}
	})
	return &l.locs, l.locsErr
}

// chunkBytes returns the bytes of chunk i of c, into buf when they must
// be copied.
func (l *postingsList) chunkBytes(c *chunked, i int, buf []byte) ([]byte, error) {
	if c.none {
		return nil, nil
	}
	if i >= len(c.ends) {
		return nil, fmt.Errorf("chunk %d of %d", i, len(c.ends))
	}
	var from uint64
	if i > 0 {
		from = c.ends[i-1]
	}
	return l.read(buf, c.start+from, c.start+c.ends[i])
}

// readChunked reads the number of chunks of a stream at off and their
// ends.
func (l *postingsList) readChunked(off uint64) (chunked, error) {
	if off == 0 { // ice's termNotEncoded
		return chunked{none: true}, nil
	}
	var head [binary.MaxVarintLen64]byte
	b, err := l.read(head[:0], off, off+uint64(len(head)))
	if err != nil {
		return chunked{}, err
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(l.size()) {
		return chunked{}, errors.New("bad number of chunks")
	}
	pos := off + uint64(k)
	b, err = l.read(nil, pos, pos+n*binary.MaxVarintLen64)
	if err != nil {
		return chunked{}, err
	}
	c := chunked{ends: make([]uint64, n)}
	at := 0
	for i := range c.ends {
		v, k := binary.Uvarint(b[at:])
		if k <= 0 || i > 0 && v < c.ends[i-1] {
			return chunked{}, fmt.Errorf("bad end of chunk %d", i)
		}
		c.ends[i], at = v, at+k
	}
	c.start = pos + uint64(at)
	if n > 0 && c.start+c.ends[n-1] > uint64(l.size()) {
		return chunked{}, errors.New("chunks past the end of the segment")
	}
	return c, nil
}

// size is the length of the segment's bytes.
func (l *postingsList) size() int { return dataSize(l.data) }

// read returns the segment's bytes from start to end (cut at the
// segment's end), into buf when they must be copied.
func (l *postingsList) read(buf []byte, start, end uint64) ([]byte, error) {
	return readData(l.data, buf, start, end)
}

// Size is the memory the list holds, ice's and its own (the locations'
// chunks, read by another searcher at any time, left out), as bluge sizes
// searchers.
func (l *postingsList) Size() int {
	n := l.ice.Size() + 8*len(l.freqs.ends)
	if !l.clean {
		n += int(l.actual.GetSizeInBytes() + l.gone.GetSizeInBytes())
	}
	return n
}

// postingsIter reads the postings of a postingsList: through skipIter
// when the list is its own to read, through ice's iterator otherwise. The
// posting read last is in doc, freq, norm and locs.
type postingsIter struct {
	skip skipIter
	ice  segment.PostingsIterator // nil: skip reads
	doc  uint64
	freq int
	norm float64
	locs []location
}

// location is where a posting's term occurs, as ice's Location.
type location struct {
	field           string
	pos, start, end int
}

// reset opens the iterator on l at its first posting; freqNorm tells
// whether frequencies and norms are read, vectors whether locations are.
func (it *postingsIter) reset(l *postingsList, freqNorm, vectors bool) error {
	if l.own {
		it.ice = nil
		return it.skip.reset(l, freqNorm || vectors, vectors)
	}
	ii, err := l.ice.Iterator(freqNorm, freqNorm, vectors, nil)
	if err != nil {
		return err
	}
	it.ice = ii
	return nil
}

// next moves to the first posting at or after the document target (the
// next one, whatever target is, when it is 0 or behind), reporting
// whether there is one.
func (it *postingsIter) next(target uint64) (bool, error) {
	if it.ice == nil {
		ok, err := it.skip.next(target)
		if ok {
			it.doc, it.freq, it.norm, it.locs = it.skip.doc, it.skip.freq, it.skip.norm, it.skip.locs
		}
		return ok, err
	}
	var p segment.Posting
	var err error
	if target == 0 {
		p, err = it.ice.Next()
	} else {
		p, err = it.ice.Advance(target)
	}
	if err != nil || p == nil {
		return false, err
	}
	it.doc, it.freq, it.norm, it.locs = p.Number(), p.Frequency(), p.Norm(), it.locs[:0]
	for _, l := range p.Locations() {
		it.locs = append(it.locs, location{field: l.Field(), pos: l.Pos(), start: l.Start(), end: l.End()})
	}
	return true, nil
}

// maxKeptBuf bounds the chunk buffer an iterator at rest keeps: a chunk
// of a frequent term's locations can be large, and a slab (iterSlab) kept
// for the next searcher should not hold it.
const maxKeptBuf = 64 << 10

// rest drops what the iterator read and keeps its buffers.
func (it *postingsIter) rest() {
	keep := func(b []byte) []byte {
		if cap(b) > maxKeptBuf {
			return nil
		}
		return b[:0]
	}
	*it = postingsIter{skip: skipIter{fbuf: keep(it.skip.fbuf), lbuf: keep(it.skip.lbuf), locs: it.skip.locs[:0], run: it.skip.run[:0]}}
}

// Size is the memory the iterator holds, as bluge sizes searchers.
func (it *postingsIter) Size() int {
	if it.ice != nil {
		return it.ice.Size()
	}
	return int(unsafe.Sizeof(*it)) + cap(it.skip.fbuf) + cap(it.skip.lbuf)
}

// skipIter reads a postingsList of its own (see the comment at the top).
type skipIter struct {
	l        *postingsList
	freqNorm bool
	lchunks  *chunked            // the list's locations, when they are read
	docs     roaring.IntPeekable // over l.actual; behind doc when behind is set
	behind   bool
	passed   bool // an advance found no document: next finds none until reset
	// The container of l.actual holding doc, when an advance read it
	// (advanceIn): its words, or its values and doc's index in them, and
	// its key + 1 (0 for none).
	cwords  []uint64
	carr    []uint16
	cidx    int
	ckey    uint32
	oneRead bool   // the 1-hit posting was passed
	rank    uint64 // of the last document read in l.all: 1 for the first
	live    uint64 // its rank in l.actual
	chunk   int    // the chunk in fb and lb, -1 for none
	at      uint64 // the rank in l.all of the entry at fpos
	fb, lb  []byte // its frequencies and norms, its locations
	fpos    int
	lpos    int
	fbuf    []byte // the chunks' bytes, when they are copied
	lbuf    []byte
	run     []uint32 // the documents addTo reads next
	doc     uint64
	freq    int
	norm    float64
	locs    []location
}

// reset opens the iterator at the first posting of l, reading the
// frequencies and norms when freqNorm is set and the locations when
// vectors is.
func (s *skipIter) reset(l *postingsList, freqNorm, vectors bool) error {
	s.l, s.freqNorm, s.lchunks = l, freqNorm, nil
	if vectors && l.all != nil {
		var err error
		if s.lchunks, err = l.locations(); err != nil {
			return err
		}
	}
	s.docs, s.behind, s.passed, s.cwords, s.carr, s.ckey = nil, false, false, nil, nil, 0
	if l.actual != nil {
		s.docs = l.actual.Iterator()
	}
	s.oneRead, s.rank, s.live, s.chunk, s.fb, s.lb, s.fpos, s.lpos, s.at = false, 0, 0, -1, nil, nil, 0, 0, 0
	return nil
}

// next moves to the first posting at or after target, as ice's iterator
// does: a target behind gives the next posting.
func (s *skipIter) next(target uint64) (bool, error) {
	l := s.l
	if l.one {
		if s.oneRead || !l.oneLive || l.oneDoc < target {
			s.oneRead = true
			return false, nil
		}
		s.oneRead = true
		s.doc, s.freq, s.norm, s.locs = l.oneDoc, 0, 0, s.locs[:0]
		if s.freqNorm {
			s.freq, s.norm = 1, float64(math.Float32frombits(uint32(l.oneNorm)))
		}
		return true, nil
	}
	if s.docs == nil || target > math.MaxUint32 {
		return false, nil
	}
	if target > s.doc && s.rank > 0 && !s.passed {
		if n, skipped, ok := s.advanceIn(uint32(target)); ok {
			s.rank += skipped
			s.live, s.doc = s.rank, uint64(n)
			if !s.freqNorm {
				s.freq, s.norm = 0, 0
				return true, nil
			}
			return true, s.decode(n, skipped == 1)
		}
	}
	s.sync()
	if !s.docs.HasNext() {
		return false, nil
	}
	var n uint32
	seq := target == 0 || uint32(target) <= s.docs.PeekNext()
	if seq {
		n = s.docs.Next()
		s.ranked(n)
	} else {
		s.docs.AdvanceIfNeeded(uint32(target))
		if !s.docs.HasNext() {
			// The documents between doc and target were passed: advanceIn,
			// which reads from doc, must not find them.
			s.passed = true
			return false, nil
		}
		n = s.docs.Next()
		s.rank = rankAfter(l.all, s.doc, s.rank, n)
		s.live = s.rank
		if !l.clean {
			s.live -= l.gone.Rank(n)
		}
	}
	s.doc = uint64(n)
	if !s.freqNorm {
		s.freq, s.norm = 0, 0
		return true, nil
	}
	return true, s.decode(n, seq && l.clean)
}

// addTo reads the postings from the next one on, adding each document
// before end (numbered from off in the index) to w as clause sub's, scored
// by bm, and stops at the first at or after end, read as next reads it
// (more). last is 1 + the number of the last document read, 0 for none.
// The same postings as next gives, without its calls per posting.
func (s *skipIter) addTo(w *docWindow, sub int, off, end uint64, bm *bm25Scorer) (more bool, last uint64, err error) {
	l := s.l
	if l.one || !s.freqNorm || s.lchunks != nil {
		for {
			ok, err := s.next(0)
			if !ok || err != nil {
				return false, last, err
			}
			last = s.doc + 1
			if off+s.doc >= end {
				return true, last, nil
			}
			w.add(int(off+s.doc-w.base), sub, bm.Score(s.freq, s.norm), nil)
		}
	}
	if s.docs == nil {
		return false, 0, nil
	}
	denseOnce.Do(func() { dense, denseFound = findDense() })
	s.sync()
	s.locs = s.locs[:0] // take reads no locations
	for s.docs.HasNext() {
		n := s.docs.PeekNext()
		var words []uint64
		var arr []uint16
		ok := false
		if denseFound {
			words, arr, ok = containerFrom(dense, l.actual, n)
		}
		run := s.run[:0]
		if !ok { // the rest of this container through the iterator
			for key := n >> 16; s.docs.HasNext() && s.docs.PeekNext()>>16 == key; {
				n = s.docs.Next()
				run = append(run[:0], n)
				stop, err := s.take(run, w, sub, off, end, bm)
				s.run = run
				if stop || err != nil {
					return stop, uint64(n) + 1, err
				}
				last = uint64(n) + 1
			}
			continue
		}
		// The container's values are read from it, not through roaring's
		// iterator (three calls through interfaces a posting, about a
		// twentieth of a question under wasm at 1M), up to the first at or
		// past end; the iterator is moved past what was read once, at the
		// end.
		hs, low := n&^0xffff, n&0xffff
		if words != nil {
			base := hs | low&^63
		container:
			for i, word := range words {
				if i == 0 {
					word &= ^uint64(0) << (low % 64)
				}
				for ; word != 0; word &= word - 1 {
					m := base + uint32(64*i+bits.TrailingZeros64(word))
					if run = append(run, m); off+uint64(m) >= end {
						break container
					}
				}
			}
		} else {
			for _, v := range arr {
				m := hs | uint32(v)
				if run = append(run, m); off+uint64(m) >= end {
					break
				}
			}
		}
		s.run = run
		stop, err := s.take(run, w, sub, off, end, bm)
		m := run[len(run)-1]
		s.past(m)
		if stop || err != nil {
			return stop, uint64(m) + 1, err
		}
		last = uint64(m) + 1
	}
	return false, last, nil
}

// take reads the documents of run, the next live ones of the list in
// order, adding each to w, and stops at the first at or past end, which
// it reports. A document whose entry is the next of the chunk read last
// has its frequency and norm read here (most do): a call a posting costs
// more under wasm than reading it.
func (s *skipIter) take(run []uint32, w *docWindow, sub int, off, end uint64, bm *bm25Scorer) (stop bool, err error) {
	clean := s.l.clean
	for _, n := range run {
		s.ranked(n)
		fb, pos := s.fb, s.fpos
		// The entry at pos is n's when its rank is n's: a chunk holds the
		// entries of its documents, in order.
		if s.rank == s.at && pos+2 < len(fb) &&
			fb[pos] < 0x80 && (fb[pos+1] < 0x80 || fb[pos+2] < 0x80) {
			// The frequency in one byte, the norm (the field's length,
			// as a float32's bits) in one or two.
			fh, nb := fb[pos], uint64(fb[pos+1])
			if pos += 2; nb >= 0x80 {
				nb, pos = nb&0x7f|uint64(fb[pos])<<7, pos+1
			}
			s.fpos, s.at = pos, s.rank+1
			s.freq, s.norm = int(fh>>1), float64(math.Float32frombits(uint32(nb)))
		} else if err := s.decode(n, clean); err != nil {
			return false, err
		}
		s.doc = uint64(n)
		if off+s.doc >= end {
			return true, nil
		}
		w.add(int(off+s.doc-w.base), sub, bm.Score(s.freq, s.norm), nil)
	}
	return false, nil
}

// advanceIn finds the first document at or after target, past doc, in
// doc's container of a list without deleted documents, from the
// container's words or values: roaring's iterator takes five calls
// through interfaces to advance and tell where, and maxScore advances its
// non-essential clauses to the candidates they may match, a few hundred
// thousand times a question at 1M, most of them within one container.
// It returns the document and how many of the list's it passed, the
// document's included; ok false (nothing moved) when the container has no
// such document or cannot be read. The iterator is left behind (sync).
func (s *skipIter) advanceIn(target uint32) (n uint32, skipped uint64, ok bool) {
	doc := uint32(s.doc)
	if !s.l.clean || target>>16 != doc>>16 {
		return 0, 0, false
	}
	if s.ckey != doc>>16+1 && !s.loadContainer(doc) {
		return 0, 0, false
	}
	hs, from, low := doc&^0xffff, uint(doc&0xffff), uint(target&0xffff)
	if w := s.cwords; w != nil {
		i := low / 64
		word := w[i] & (^uint64(0) << (low % 64))
		for word == 0 {
			if i++; i == uint(len(w)) {
				return 0, 0, false
			}
			word = w[i]
		}
		to := i*64 + uint(bits.TrailingZeros64(word))
		s.behind = true
		return hs | uint32(to), uint64(between(w, from, to)), true
	}
	if s.cidx >= len(s.carr) || s.carr[s.cidx] != uint16(doc) {
		// doc was read since, by Next or addTo.
		s.cidx, _ = slices.BinarySearch(s.carr, uint16(doc))
	}
	// Galloping from doc: the target is most often a few values on.
	a, lo, hi := s.carr, s.cidx+1, s.cidx+1
	for step := 1; hi < len(a) && uint(a[hi]) < low; step <<= 1 {
		lo, hi = hi+1, hi+step
	}
	k, _ := slices.BinarySearch(a[lo:min(hi+1, len(a))], uint16(low))
	j := lo + k
	if j == len(a) {
		return 0, 0, false
	}
	skipped = uint64(j - s.cidx)
	s.cidx, s.behind = j, true
	return hs | uint32(s.carr[j]), skipped, true
}

// loadContainer reads the container of l.actual holding doc, one of its
// documents, for advanceIn.
func (s *skipIter) loadContainer(doc uint32) bool {
	s.ckey, s.cwords, s.carr = 0, nil, nil
	denseOnce.Do(func() { dense, denseFound = findDense() })
	if !denseFound {
		return false
	}
	i, found := containerOf(dense, s.l.actual, doc)
	if !found {
		return false
	}
	if s.cwords = denseWords(dense, s.l.actual, i); s.cwords == nil {
		a, ok := arrayValues(dense, s.l.actual, i)
		j, found := slices.BinarySearch(a, uint16(doc))
		if !ok || !found {
			return false
		}
		s.carr, s.cidx = a, j
	}
	s.ckey = doc>>16 + 1
	return true
}

// sync moves the documents' iterator past doc after advanceIn left it
// behind.
func (s *skipIter) sync() {
	if s.behind {
		s.behind = false
		s.past(uint32(s.doc))
	}
}

// past moves the documents' iterator past n, a document of the list it
// has not passed.
func (s *skipIter) past(n uint32) {
	s.docs.AdvanceIfNeeded(n)
	s.docs.Next()
}

// ranked sets the ranks of n, the live document after the last one read.
func (s *skipIter) ranked(n uint32) {
	s.live++
	s.rank = s.live
	if !s.l.clean {
		s.rank += s.l.gone.Rank(n)
	}
}

// decode reads the frequency and norm of document n, of rank s.rank, and
// its locations when they are read, passing over the entries between the
// last one read and its own. next tells that the document before n in
// l.all, if any, was the last one read: a chunk n begins is then n's own
// (roaring's Rank of a dense container counts up to 1,024 words).
func (s *skipIter) decode(n uint32, next bool) error {
	l := s.l
	if c := int(uint64(n) / l.chunk); c != s.chunk {
		if l.freqs.none {
			return fmt.Errorf("no frequencies for document %d", n)
		}
		fb, err := l.chunkBytes(&l.freqs, c, s.fbuf)
		if err != nil {
			return fmt.Errorf("chunk %d of frequencies: %w", c, err)
		}
		var lb []byte
		if s.lchunks != nil {
			if lb, err = l.chunkBytes(s.lchunks, c, s.lbuf); err != nil {
				return fmt.Errorf("chunk %d of locations: %w", c, err)
			}
		}
		if l.data.mem == nil {
			s.fbuf, s.lbuf = fb, lb
		}
		s.chunk, s.fb, s.lb, s.fpos, s.lpos, s.at = c, fb, lb, 0, 0, 1
		if first := uint64(c) * l.chunk; next {
			s.at = s.rank
		} else if first > 0 {
			s.at = l.all.Rank(uint32(first-1)) + 1
		}
	}
	switch {
	case s.rank < s.at:
		return fmt.Errorf("document %d of rank %d read before %d", n, s.rank, s.at)
	case s.rank > s.at:
		if err := s.pass(s.rank - s.at); err != nil {
			return fmt.Errorf("chunk %d, before document %d: %w", s.chunk, n, err)
		}
	}
	fb, pos := s.fb, s.fpos
	// Most frequencies take one byte: read inline (a call costs more under
	// wasm than the byte). take reads most postings without this call.
	var fh uint64
	if pos < len(fb) && fb[pos] < 0x80 {
		fh, pos = uint64(fb[pos]), pos+1
	} else {
		var k int
		if fh, k = binary.Uvarint(fb[pos:]); k <= 0 {
			return fmt.Errorf("bad frequency of document %d", n)
		}
		pos += k
	}
	nb, k := binary.Uvarint(fb[pos:])
	if k <= 0 {
		return fmt.Errorf("bad norm of document %d", n)
	}
	s.fpos, s.at = pos+k, s.rank+1
	s.freq, s.norm = int(fh>>1), float64(math.Float32frombits(uint32(nb)))
	s.locs = s.locs[:0]
	if s.lchunks != nil && fh&1 != 0 {
		if err := s.readLocations(); err != nil {
			return fmt.Errorf("locations of document %d: %w", n, err)
		}
	}
	return nil
}

// pass passes over the next k entries of the chunk.
func (s *skipIter) pass(k uint64) error {
	fb, pos := s.fb, s.fpos
	if s.lchunks == nil {
		// Two uvarints an entry: pass over the ends of 2k of them.
		for k *= 2; k > 0; pos++ {
			if pos >= len(fb) {
				return errors.New("frequencies end early")
			}
			if fb[pos] < 0x80 {
				k--
			}
		}
		s.fpos = pos
		return nil
	}
	// The entries with locations tell so in their frequency's first bit:
	// their locations are passed over by their length.
	for ; k > 0; k-- {
		fh, n := binary.Uvarint(fb[pos:])
		if n <= 0 {
			return errors.New("bad frequency")
		}
		pos += n
		for pos < len(fb) && fb[pos] >= 0x80 { // the norm
			pos++
		}
		if pos++; pos > len(fb) {
			return errors.New("frequencies end early")
		}
		if fh&1 != 0 {
			size, n := binary.Uvarint(s.lb[s.lpos:])
			if n <= 0 || size > uint64(len(s.lb)-s.lpos-n) {
				return errors.New("bad length of locations")
			}
			s.lpos += n + int(size)
		}
	}
	s.fpos = pos
	return nil
}

// readLocations reads the locations of the entry at lpos.
func (s *skipIter) readLocations() error {
	lb := s.lb
	size, n := binary.Uvarint(lb[s.lpos:])
	if n <= 0 || size > uint64(len(lb)-s.lpos-n) {
		return errors.New("bad length")
	}
	pos := s.lpos + n
	end := pos + int(size)
	for pos < end {
		var v [4]uint64 // field, position, start, end
		for i := range v {
			x, n := binary.Uvarint(lb[pos:end])
			if n <= 0 {
				return errors.New("bad location")
			}
			v[i], pos = x, pos+n
		}
		if v[0] >= uint64(len(s.l.fields)) {
			return fmt.Errorf("location in field %d of %d", v[0], len(s.l.fields))
		}
		s.locs = append(s.locs, location{field: s.l.fields[v[0]], pos: int(v[1]), start: int(v[2]), end: int(v[3])})
	}
	s.lpos = end
	return nil
}
