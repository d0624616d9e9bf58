package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
)

// termSearcher matches what bluge's TermSearcher matches, with the same
// scores, locations and count, over several segments with deleted and
// replaced documents, and for any order of Next and Advance (forwards,
// back, into other segments, past the end) returns the first match after
// the last one, or at or after the number advanced to. (bluge's own,
// advanced below a number it was advanced to before but past its last
// match, misses the matches in between.)
func TestTermSearcherAsBluge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	docs := randomCorpus(rng, 300)
	x := newSegmented(t, Options{})
	putShuffled(t, x, docs, 40, 3)
	var gone []string
	for i := 0; i < len(docs); i += 9 {
		gone = append(gone, docs[i].Path)
	}
	if err := x.Delete(gone...); err != nil {
		t.Fatal(err)
	}
	for i := 4; i < len(docs); i += 11 { // replaced: a new document number
		d := docs[i]
		d.Content += " otter"
		if err := x.Put(d); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(x.reader.Segments()); n < 3 {
		t.Fatalf("%d segment(s): the test needs several", n)
	}
	r := snapshot{Snapshot: x.reader}
	segs, _, offsets, err := segmentsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	last := offsets[len(offsets)-1] + segs[len(segs)-1].Count()
	for _, vectors := range []bool{false, true} {
		// The options a search gives its clauses.
		var opts bsearch.SearcherOptions
		var q bluge.Query = optsProbe{&opts}
		if !vectors {
			q = withoutLocations{q}
		}
		s, err := x.searcher(q)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		for _, term := range []string{"otter", "kelp", "willow", "ember", "absent"} {
			for f, field := range fieldNames {
				boost := x.boosts[f]
				theirs, err := searcher.NewTermSearcher(r, term, field, boost, nil, opts)
				if err != nil {
					t.Fatal(err)
				}
				ctx := bsearch.NewSearchContext(4, 0)
				var want []*bsearch.DocumentMatch // bluge's, read in order
				for {
					m, err := theirs.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if m == nil {
						break
					}
					want = append(want, m)
					ctx = bsearch.NewSearchContext(4, 0)
				}
				ours, err := newTermSearcher(r, r, term, field, boost, opts)
				if err != nil {
					t.Fatal(err)
				}
				if ours.Count() != theirs.Count() {
					t.Fatalf("%s:%s: count %d, bluge's %d", field, term, ours.Count(), theirs.Count())
				}
				closeSearchers([]bsearch.Searcher{theirs})
				next := 0 // in want
				for step := range 200 {
					var m *bsearch.DocumentMatch
					what := "next"
					if rng.IntN(3) == 0 {
						n := rng.Uint64N(last + 5)
						what = fmt.Sprint("advance to ", n)
						m, err = ours.Advance(ctx, n)
						next = sort.Search(len(want), func(i int) bool { return want[i].Number >= n })
					} else {
						m, err = ours.Next(ctx)
					}
					if err != nil {
						t.Fatal(err)
					}
					var w *bsearch.DocumentMatch
					if next < len(want) {
						w, next = want[next], next+1
					}
					if got, want := describe(m), describe(w); got != want {
						t.Fatalf("%s:%s, vectors %v, step %d, %s:\n got %s\nwant %s", field, term, vectors, step, what, got, want)
					}
				}
				closeSearchers([]bsearch.Searcher{ours})
			}
		}
	}
}

// describe is a document match as text: number, score bits, locations.
func describe(m *bsearch.DocumentMatch) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("%d %x %v", m.Number, math.Float64bits(m.Score), m.FieldTermLocations)
}

// optsProbe is a query that keeps the options it is opened with.
type optsProbe struct{ opts *bsearch.SearcherOptions }

func (p optsProbe) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	*p.opts = opts
	return searcher.NewMatchNoneSearcher(r, opts)
}
