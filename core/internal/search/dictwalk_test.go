package search

import (
	"reflect"
	"slices"
	"testing"

	segment "github.com/blugelabs/bluge_segment_api"
)

// termsOnly sets a field of ice's iterator found by name: it must still be
// there, and the walk must list the same terms without their counts (a
// count is what reading a term's postings gives).
func TestDictionaryTermsOmitsCounts(t *testing.T) {
	if !omitCountFound {
		t.Fatal("ice.DictionaryIterator has no omitCount (or no d): expansions read every candidate's postings again")
	}
	x := newIndex(t, Options{},
		Doc{Path: "a.md", Content: "quorum quorate quota quoted"},
		Doc{Path: "b.md", Content: "quorum quotient"})
	walk := func(seg segment.Segment, only bool) (terms []string, counts []uint64) {
		d, err := seg.Dictionary(fieldNames[fContent])
		if err != nil {
			t.Fatal(err)
		}
		it := d.Iterator(nil, []byte("quo"), prefixEnd("quo"))
		if only {
			it = termsOnly(it)
		}
		for {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				return terms, counts
			}
			terms = append(terms, e.Term())
			counts = append(counts, e.Count())
		}
	}
	for _, ss := range x.reader.Segments() {
		seg, err := segmentOf(ss)
		if err != nil {
			t.Fatal(err)
		}
		all, counts := walk(seg, false)
		terms, none := walk(seg, true)
		if len(all) == 0 || !reflect.DeepEqual(terms, all) {
			t.Fatalf("terms only %q, with counts %q", terms, all)
		}
		if slices.Contains(counts, 0) || slices.ContainsFunc(none, func(n uint64) bool { return n != 0 }) {
			t.Fatalf("counts %v with them, %v without", counts, none)
		}
	}
}

// An expansion skips a candidate whose documents are all deleted, in
// whichever segments hold it, and takes the next one in its place; a
// candidate deleted in one segment and live in another stays.
func TestExpansionSkipsDeletedCandidates(t *testing.T) {
	x := newSegmented(t, Options{MaxExpansions: 1})
	put := func(docs ...Doc) {
		t.Helper()
		if err := x.Put(docs...); err != nil {
			t.Fatal(err)
		}
	}
	// Three segments: "quorat" in the first (deleted below) and the third,
	// "quorum" in the second; "quorat" sorts first.
	put(Doc{Path: "a.md", Content: "quorate"}, Doc{Path: "keep1.md", Content: "filler one"})
	put(Doc{Path: "b.md", Content: "quorum"}, Doc{Path: "keep2.md", Content: "filler two"})
	put(Doc{Path: "c.md", Content: "quorate"}, Doc{Path: "keep3.md", Content: "filler three"})
	if n := len(x.reader.Segments()); n < 2 {
		t.Fatalf("%d segment(s): the test needs several", n)
	}
	if got := pathsOf(mustSearch(t, x, "quo", 0)); !reflect.DeepEqual(got, []string{"a.md", "c.md"}) {
		t.Fatalf("quo: %q, want the documents of its first expansion", got)
	}
	if err := x.Delete("a.md"); err != nil {
		t.Fatal(err)
	}
	if got := pathsOf(mustSearch(t, x, "quo", 0)); !reflect.DeepEqual(got, []string{"c.md"}) {
		t.Fatalf("quo with a.md deleted: %q, want c.md", got)
	}
	if err := x.Delete("c.md"); err != nil {
		t.Fatal(err)
	}
	if got := pathsOf(mustSearch(t, x, "quo", 0)); !reflect.DeepEqual(got, []string{"b.md"}) {
		t.Fatalf("quo with a.md and c.md deleted: %q, want b.md of the next expansion", got)
	}
}
