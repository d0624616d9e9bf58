package search

import (
	"fmt"
	"strings"
	"testing"

	segment "github.com/blugelabs/bluge_segment_api"
)

// TestPostingsAdvanceBackwards drives the sequence that made bluge's
// pooled iterators shared (see snapshot): an iterator read to its end and
// advanced backwards, then an iterator of another term of the field opened
// while the first is still in use. Each must read its own term's postings.
func TestPostingsAdvanceBackwards(t *testing.T) {
	var docs []Doc
	for i := range 40 {
		words := []string{"filler"}
		if i%2 == 0 {
			words = append(words, "alpha")
		}
		if i%3 == 0 {
			words = append(words, "beta")
		}
		docs = append(docs, Doc{Path: fmt.Sprintf("d/%02d.md", i), Content: strings.Join(words, " ")})
	}
	x := newIndex(t, Options{}, docs...)
	r := snapshot{Snapshot: x.reader}
	field := fieldNames[fContent]
	open := func(term string) segment.PostingsIterator {
		t.Helper()
		it, err := r.PostingsIterator([]byte(term), field, true, true, true)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	rest := func(it segment.PostingsIterator) []uint64 {
		t.Helper()
		var out []uint64
		for {
			p, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if p == nil {
				return out
			}
			out = append(out, p.Number())
		}
	}
	alpha := open("alpha")
	all := rest(alpha)
	if len(all) != 20 {
		t.Fatalf("alpha: %d postings, want 20", len(all))
	}
	p, err := alpha.Advance(all[3])
	if err != nil || p == nil || p.Number() != all[3] {
		t.Fatalf("alpha advanced back to %d: %v, %v", all[3], p, err)
	}
	beta := open("beta")
	betas := rest(beta)
	if len(betas) != 14 {
		t.Fatalf("beta: %d postings, want 14", len(betas))
	}
	if got, want := rest(alpha), all[4:]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("alpha after beta was read: %v, want %v", got, want)
	}
	for _, it := range []segment.PostingsIterator{alpha, beta} {
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
