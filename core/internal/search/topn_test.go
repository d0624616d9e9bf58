package search

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
)

// putShuffled writes docs in a random order, in batches of size: each
// batch is a segment (until merged), and documents are numbered in neither
// path order nor the order of docs.
func putShuffled(t *testing.T, x *Index, docs []Doc, size int, seed uint64) {
	t.Helper()
	docs = slices.Clone(docs)
	rand.New(rand.NewPCG(seed, 1)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	for len(docs) > 0 {
		n := min(size, len(docs))
		if err := x.Put(docs[:n]...); err != nil {
			t.Fatal(err)
		}
		docs = docs[n:]
	}
}

// copies is n documents with the same fields under the paths
// dir/<number>.md, whose words match no query of these tests.
func copies(dir string, n int, d Doc) []Doc {
	out := make([]Doc, n)
	for i := range out {
		out[i] = d
		out[i].Path = fmt.Sprintf("%s/%03d.md", dir, i)
	}
	return out
}

// scored is a document a search matched: its path and score.
type scored struct {
	path  string
	score float64
}

// runTop runs q through the collector under test, and counts its matches
// as Search counts them.
func runTop(t *testing.T, x *Index, q bluge.Query, n int) ([]*bsearch.DocumentMatch, int) {
	t.Helper()
	s, err := x.searcher(q)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := top(s, n)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x.counter()
	if err != nil {
		t.Fatal(err)
	}
	total, err := c.count(q.(countable))
	if err != nil {
		t.Fatal(err)
	}
	return ms, total
}

// bruteTop runs q and reads every match, then sorts them all by score
// descending and path ascending and keeps the first n.
func bruteTop(t *testing.T, x *Index, q bluge.Query, n int) ([]scored, int) {
	t.Helper()
	s, err := x.searcher(q)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := bsearch.NewSearchContext(s.DocumentMatchPoolSize()+1, 0)
	var all []scored
	for {
		m, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			break
		}
		d := scored{score: m.Score}
		err = x.reader.VisitStoredFields(m.Number, func(field string, value []byte) bool {
			if field == idField {
				d.path = string(value)
			}
			return true
		})
		if err != nil || d.path == "" {
			t.Fatalf("path of document %d: %q, %v", m.Number, d.path, err)
		}
		all = append(all, d)
		ctx.DocumentMatchPool.Put(m)
	}
	total := len(all)
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.path, b.path)
	})
	return all[:min(n, len(all))], total
}

// match is what a collector returns of a document: enough to compare two
// collectors.
type match struct {
	scored
	locs bsearch.FieldTermLocationMap
}

func matchesOf(t *testing.T, x *Index, ms []*bsearch.DocumentMatch) []match {
	t.Helper()
	out := make([]match, len(ms))
	for i, m := range ms {
		out[i] = match{scored{score: m.Score}, m.Locations}
		err := x.reader.VisitStoredFields(m.Number, func(field string, value []byte) bool {
			if field == idField {
				out[i].path = string(value)
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// bluge's TopN collector sorted by score and path, as searches were run
// before top.
func blugeTop(t *testing.T, x *Index, q bluge.Query, n int) ([]match, int) {
	t.Helper()
	req := bluge.NewTopNSearch(n, q).SortBy([]string{"-_score", "_id"}).IncludeLocations().WithStandardAggregations()
	s, err := req.Searcher(x.reader, x.cfg.search)
	if err != nil {
		t.Fatal(err)
	}
	it, err := req.Collector().Collect(context.Background(), req.Aggregations(), s)
	if err != nil {
		t.Fatal(err)
	}
	var ms []*bsearch.DocumentMatch
	for {
		m, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			break
		}
		ms = append(ms, m)
	}
	return matchesOf(t, x, ms), int(it.Aggregations().Count())
}

// top keeps the n best documents by score then path, whatever the number
// of documents tying at the n-th score and the segments they are in: the
// brute-force ranking of every match, and bluge's collector sorted by
// score and path, locations included.
func TestTopTies(t *testing.T) {
	both := copies("both", 40, Doc{Title: "Sea", Content: "otter kelp forest"})
	one := copies("one", 30, Doc{Title: "Sea", Content: "otter swims"})
	// Scores between and around the groups; own/01 ties with both for
	// "otter kelp", since the title of both does not match.
	own := make([]Doc, 12)
	for i := range own {
		own[i] = Doc{Path: fmt.Sprintf("own/%02d.md", i), Content: "otter kelp" + strings.Repeat(" filler", i)}
	}
	// The lowest scores first, ties in path order: the first documents of
	// a group, which rank first, fill the collector before the better
	// documents that come later push some of them out.
	low := slices.Clone(own[2:])
	slices.Reverse(low)
	rising := slices.Concat(low, both, one, []Doc{own[1], own[0]})
	layouts := map[string]func(*testing.T, *Index){
		"rising": func(t *testing.T, x *Index) {
			for d := range slices.Chunk(rising, 7) {
				if err := x.Put(d...); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for seed := range uint64(3) {
		layouts[fmt.Sprint("shuffled ", seed)] = func(t *testing.T, x *Index) {
			putShuffled(t, x, slices.Concat(both, one, own), 7, seed)
		}
	}
	for layout, put := range layouts {
		t.Run(layout, func(t *testing.T) {
			x := newSegmented(t, Options{})
			put(t, x)
			if n := len(x.reader.Segments()); n < 2 {
				t.Fatalf("%d segment(s): the test needs ties across segments", n)
			}
			checkTop(t, x)
		})
	}
}

func checkTop(t *testing.T, x *Index) {
	t.Helper()
	queries := map[string]bluge.Query{
		"and": x.buildQuery(x.parse("otter kelp"), true),
		"or":  x.buildQuery(x.parse("otter kelp"), false),
		"one": x.buildQuery(x.parse("otter"), true),
	}
	for name, q := range queries {
		for _, n := range []int{1, 2, 5, 39, 40, 41, 45, 69, 70, 71, 81, 82, 83, 200} {
			want, wantTotal := bruteTop(t, x, q, n)
			ms, total := runTop(t, x, q, n)
			got := matchesOf(t, x, ms)
			if total != wantTotal {
				t.Errorf("%s, %d: total %d, want %d", name, n, total, wantTotal)
			}
			gotScored := make([]scored, len(got))
			for i := range got {
				gotScored[i] = got[i].scored
			}
			if !reflect.DeepEqual(gotScored, want) {
				t.Errorf("%s, %d:\n got %v\nwant %v", name, n, gotScored, want)
			}
			old, oldTotal := blugeTop(t, x, q, n)
			if oldTotal != total || !reflect.DeepEqual(got, old) {
				t.Errorf("%s, %d: not as bluge's collector (total %d, want %d):\n got %v\nwant %v", name, n, total, oldTotal, got, old)
			}
		}
	}
}

// The paths of the tied documents of one segment come from several chunks
// of doc values, which share a buffer.
func TestTopTiesInOneLargeSegment(t *testing.T) {
	docs := copies("same", 1300, Doc{Content: "otter kelp"})
	x := newIndex(t, Options{})
	putShuffled(t, x, docs, len(docs), 2)
	q := x.buildQuery(x.parse("otter kelp"), true)
	for _, n := range []int{3, 1100, 1300} {
		want, _ := bruteTop(t, x, q, n)
		ms, total := runTop(t, x, q, n)
		if total != len(docs) {
			t.Errorf("%d: total %d, want %d", n, total, len(docs))
		}
		got := matchesOf(t, x, ms)
		for i := range got {
			if got[i].scored != want[i] {
				t.Fatalf("%d: hit %d is %v, want %v", n, i, got[i].scored, want[i])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d: %d hits, want %d", n, len(got), len(want))
		}
	}
}

// Search breaks ties by path in each pass: the entries matching every
// term, those matching some (filling the slots the first leave), then the
// contexts, whether the limit falls before, on or after the end of a group
// of documents tying with each other.
func TestSearchTies(t *testing.T) {
	all := copies("all", 12, Doc{Title: "Sea", Content: "otter kelp forest"})
	some := copies("some", 9, Doc{Title: "Sea", Content: "otter forest"})
	ctxs := copies("ctx", 7, Doc{Kind: kindContext, Title: "Sea", Content: "otter kelp forest"})
	x := newSegmented(t, Options{})
	putShuffled(t, x, slices.Concat(all, some, ctxs), 5, 3)
	if n := len(x.reader.Segments()); n < 2 {
		t.Fatalf("%d segment(s): the test needs ties across segments", n)
	}
	paths := func(docs []Doc) []string {
		var out []string
		for _, d := range docs {
			out = append(out, d.Path)
		}
		return out
	}
	// copies are named in path order.
	order := slices.Concat(paths(all), paths(some), paths(ctxs))
	for _, limit := range []int{1, 5, 11, 12, 13, 18, 20, 21, 22, 25, 27, 28, 29, 40} {
		r := mustSearch(t, x, "otter kelp", limit)
		want := order[:min(limit, len(order))]
		if got := pathsOf(r); !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d:\n got %q\nwant %q", limit, got, want)
		}
		wantMode, wantTotal := ModeFill, len(order)
		if limit <= len(all) {
			wantMode, wantTotal = ModeAnd, len(all)+len(ctxs)
		}
		if r.Mode != wantMode || r.Total != wantTotal {
			t.Errorf("limit %d: mode %s, total %d; want %s, %d", limit, r.Mode, r.Total, wantMode, wantTotal)
		}
		// The copies must tie, or this tests nothing.
		for i := 1; i < len(r.Hits); i++ {
			h, p := r.Hits[i], r.Hits[i-1]
			if rankGroup(h) == rankGroup(p) && h.Path[:3] == p.Path[:3] && h.Raw != p.Raw {
				t.Fatalf("limit %d: copies %s (%v) and %s (%v) do not tie", limit, p.Path, p.Raw, h.Path, h.Raw)
			}
		}
	}
}
