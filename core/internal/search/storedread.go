package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"sync"
	"unsafe"

	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
	"github.com/golang/snappy"
)

// A document's stored fields, read where ice keeps them. ice's reader
// (Segment.VisitStoredFields in v1.0.0) makes five reads of the segment's
// Data for a document: its offset in the stored index, the two lengths
// that head it (a read of ten bytes each), its fields' metadata and its
// compressed values, each into a slice it allocates. A question reads the
// stored fields of the documents it keeps and of those tied in score
// (tiedPaths): at 1,000 entries about 400 of those slices a question, a
// fifth of what it allocated, and under WebAssembly each read is a call
// through the segment's blocks (segFile). storedReader reads the same
// bytes in three reads into buffers kept from one document to the next,
// and decodes them as ice does: the metadata is, for each field, three
// uvarints (the field's number in the segment, the offset and the length
// of its value), the values one snappy block.

// storedFields are the offsets of ice.Segment's footer and of the footer's
// fields a reader needs; storedFound is false when one is missing or has
// another type (an upgrade of ice; TestStoredFieldsAsIce fails then), and
// ice's own reader is used.
var storedFields, storedFound = func() (struct{ footer, storedIndex, numDocs uintptr }, bool) {
	var f struct{ footer, storedIndex, numDocs uintptr }
	sf, ok := reflect.TypeFor[ice.Segment]().FieldByName("footer")
	if !ok || sf.Type.Kind() != reflect.Pointer || !listFieldsFound {
		return f, false
	}
	f.footer = sf.Offset
	u64 := reflect.TypeFor[uint64]()
	for _, want := range []struct {
		name string
		at   *uintptr
	}{{"storedIndexOffset", &f.storedIndex}, {"numDocs", &f.numDocs}} {
		sf, ok := sf.Type.Elem().FieldByName(want.name)
		if !ok || sf.Type != u64 {
			return f, false
		}
		*want.at = sf.Offset
	}
	return f, true
}()

// storedReader reads documents' stored fields; not safe for concurrent
// use (storedReaders pools them).
type storedReader struct {
	head  [2 * binary.MaxVarintLen64]byte // a document's offset, then its lengths
	buf   []byte                          // its metadata and compressed values
	plain []byte                          // its values
}

var storedReaders = sync.Pool{New: func() any { return new(storedReader) }}

// VisitStoredFields implements bluge's search.MatchReader for the
// documents a ranking's searchers match: their stored fields read by a
// storedReader where the snapshot's segments are known (its memo) and are
// ice's, by bluge otherwise.
func (s snapshot) VisitStoredFields(number uint64, visitor segment.StoredFieldVisitor) error {
	if s.memo == nil || !storedFound || len(s.memo.offsets) == 0 {
		return s.Snapshot.VisitStoredFields(number, visitor)
	}
	offs, ices := s.memo.offsets, s.memo.iceSegments()
	i := sort.Search(len(offs), func(x int) bool { return offs[x] > number }) - 1
	if i < 0 || ices[i] == nil {
		return s.Snapshot.VisitStoredFields(number, visitor)
	}
	seg := ices[i]
	r := storedReaders.Get().(*storedReader)
	defer storedReaders.Put(r)
	return r.visit(seg, number-offs[i], visitor)
}

// iceSegments returns the ice segment under each of m's segments (bluge
// wraps them), nil for one that is not ice's: found once per ranking.
func (m *lookups) iceSegments() []*ice.Segment {
	m.icesOnce.Do(func() {
		m.ices = make([]*ice.Segment, len(m.segs))
		for i, seg := range m.segs {
			m.ices[i] = iceOf(seg)
		}
	})
	return m.ices
}

// iceOf returns the ice segment seg is or wraps (in the embedded field
// Segment, as bluge's segmentWrapper does), or nil.
func iceOf(seg segment.Segment) *ice.Segment {
	for range 2 {
		if s, ok := seg.(*ice.Segment); ok {
			return s
		}
		v := reflect.ValueOf(seg)
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil
		}
		f := v.FieldByName("Segment")
		if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() || !f.CanInterface() {
			return nil
		}
		if seg, _ = f.Interface().(segment.Segment); seg == nil {
			return nil
		}
	}
	return nil
}

// visit calls visitor with each stored field of document num of seg, in
// the order ice stored them, until it returns false. A value is only
// valid during its call. A number past the segment's documents has none,
// as with ice.
func (r *storedReader) visit(seg *ice.Segment, num uint64, visitor segment.StoredFieldVisitor) error {
	p := unsafe.Pointer(seg)
	foot := *(*unsafe.Pointer)(unsafe.Add(p, storedFields.footer))
	if foot == nil {
		return errors.New("stored fields of a segment without a footer")
	}
	if num >= *(*uint64)(unsafe.Add(foot, storedFields.numDocs)) {
		return nil
	}
	data := *(**dataLayout)(unsafe.Add(p, listFields.data))
	if data == nil {
		return errors.New("stored fields of a segment without data")
	}
	head := r.head[:]
	at := *(*uint64)(unsafe.Add(foot, storedFields.storedIndex)) + 8*num
	b, err := readData(data, head[:0], at, at+8)
	if err != nil || len(b) < 8 {
		return storedErr(num, "its offset", err)
	}
	at = binary.BigEndian.Uint64(b)
	if b, err = readData(data, head[:0], at, at+uint64(len(head))); err != nil {
		return storedErr(num, "its lengths", err)
	}
	metaLen, k1 := binary.Uvarint(b)
	dataLen, k2 := uint64(0), 0
	if k1 > 0 {
		dataLen, k2 = binary.Uvarint(b[k1:])
	}
	if k1 <= 0 || k2 <= 0 || metaLen+dataLen < metaLen {
		return storedErr(num, "its lengths", errors.New("not uvarints"))
	}
	at += uint64(k1 + k2)
	n := metaLen + dataLen
	if n > uint64(dataSize(data)) {
		return storedErr(num, "its fields", fmt.Errorf("%d bytes past the segment's end", n))
	}
	if data.mem == nil && cap(r.buf) < int(n) {
		r.buf = make([]byte, n)
	}
	if b, err = readData(data, r.buf[:0], at, at+n); err != nil || uint64(len(b)) < n {
		return storedErr(num, "its fields", err)
	}
	meta, compressed := b[:metaLen], b[metaLen:n]
	plain, err := snappy.Decode(r.plain[:cap(r.plain)], compressed)
	if err != nil {
		return storedErr(num, "its values", err)
	}
	r.plain = plain
	names := seg.Fields()
	for len(meta) > 0 {
		var v [3]uint64
		for j := range v {
			x, k := binary.Uvarint(meta)
			if k <= 0 {
				return storedErr(num, "its metadata", errors.New("not uvarints"))
			}
			v[j], meta = x, meta[k:]
		}
		field, off, l := v[0], v[1], v[2]
		if field >= uint64(len(names)) || off > uint64(len(plain)) || l > uint64(len(plain))-off {
			return storedErr(num, "its metadata", errors.New("a field or value out of range"))
		}
		if !visitor(names[field], plain[off:off+l]) {
			return nil
		}
	}
	return nil
}

func storedErr(num uint64, what string, err error) error {
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("stored fields of document %d: %s: %w", num, what, err)
}
