package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// storedReader visits what ice's reader visits, field by field, for every
// document of an index's segments (bluge's wrappers, their data in memory)
// and of their merge read from memory and through a ReaderAt as the
// store's files are, and stops where the visitor says.
func TestStoredFieldsAsIce(t *testing.T) {
	if !storedFound {
		t.Fatal("ice.Segment lacks a field storedread.go reads: stored fields are read through ice")
	}
	docs := randomCorpus(rand.New(rand.NewPCG(17, 3)), 900)
	for i := range docs {
		if i%7 == 0 {
			docs[i].Summary = "" // a field left out of some documents
		}
	}
	x := newIndex(t, Options{})
	putShuffled(t, x, docs, 250, 4)
	c, err := x.counter()
	if err != nil {
		t.Fatal(err)
	}
	ices := c.r.memo.iceSegments()
	if len(ices) < 2 {
		t.Fatalf("%d segments: the test needs several", len(ices))
	}
	var total uint64
	for i, s := range ices {
		if s == nil {
			t.Fatalf("segment %d (%T) not found to be ice's", i, c.segs[i])
		}
		total += s.Count()
	}
	// Through the snapshot, by global number, against bluge's reader.
	for n := range total + 2 {
		compareStored(t, fmt.Sprintf("document %d", n), func(v segment.StoredFieldVisitor) error { return c.r.VisitStoredFields(n, v) },
			func(v segment.StoredFieldVisitor) error { return c.r.Snapshot.VisitStoredFields(n, v) })
	}
	// A merge of the segments, held and read by ranges.
	held, read := mergedSegments(t, c.segs)
	var r storedReader
	for name, s := range map[string]*ice.Segment{"held": held, "read": read} {
		if s.Count() != total {
			t.Fatalf("%s: %d documents, want %d", name, s.Count(), total)
		}
		for n := range total + 1 {
			compareStored(t, fmt.Sprintf("%s document %d", name, n), func(v segment.StoredFieldVisitor) error { return r.visit(s, n, v) },
				func(v segment.StoredFieldVisitor) error { return s.VisitStoredFields(n, v) })
		}
	}
}

// compareStored compares the fields two readers visit, whole and stopped
// after the first and the second field.
func compareStored(t *testing.T, what string, got, want func(segment.StoredFieldVisitor) error) {
	t.Helper()
	for _, stop := range []int{0, 1, 2} {
		visits := func(read func(segment.StoredFieldVisitor) error) []string {
			var out []string
			if err := read(func(field string, value []byte) bool {
				out = append(out, field+"="+string(value))
				return len(out) != stop
			}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return out
		}
		g, w := visits(got), visits(want)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s, stop after %d: visited\n%q\nwant\n%q", what, stop, g, w)
		}
	}
}

// A segment whose stored section is damaged is an error, not a panic nor
// values read out of bounds.
func TestStoredFieldsDamaged(t *testing.T) {
	x := newIndex(t, Options{}, randomCorpus(rand.New(rand.NewPCG(17, 4)), 40)...)
	c, err := x.counter()
	if err != nil {
		t.Fatal(err)
	}
	good, _ := mergedSegments(t, c.segs)
	var merged bytes.Buffer
	if _, err := good.WriteTo(&merged, nil); err != nil {
		t.Fatal(err)
	}
	// The stored section starts the segment: its first bytes are the first
	// document's lengths and metadata.
	b := bytes.Clone(merged.Bytes())
	for i := range 64 {
		b[i] = 0xff
	}
	bad, err := ice.Load(segment.NewDataBytes(b))
	if err != nil {
		t.Fatal(err)
	}
	var r storedReader
	if err := r.visit(good, 0, func(string, []byte) bool { return true }); err != nil {
		t.Fatal(err)
	}
	err = r.visit(bad.(*ice.Segment), 0, func(string, []byte) bool { return true })
	if err == nil {
		t.Fatal("a damaged document read without an error")
	}
	t.Log(err)
}
