package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
)

// randomCorpus is n documents of words drawn from a small vocabulary by a
// Zipf law, so that queries match many documents with many tied scores:
// copies of a few texts, fields left empty, contexts among the entries.
func randomCorpus(rng *rand.Rand, n int) []Doc {
	// Two joined words, which a compound of them matches ("kelp-forest"),
	// and CJK runs, matched by their bigrams.
	vocab := strings.Fields("otter kelp forest river stone cloud amber delta harbor lantern meadow quartz signal timber velvet willow barley canyon ember falcon kelpforest riverstone 東京都庁 数据库系统 검색엔진")
	zipf := rand.NewZipf(rng, 1.3, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	maybe := func(p float64, s string) string {
		if rng.Float64() < p {
			return s
		}
		return ""
	}
	var docs []Doc
	for i := 0; len(docs) < n; i++ {
		d := Doc{
			Path:    fmt.Sprintf("d%02d/%04d.md", i%7, i),
			Title:   maybe(0.7, words(1+rng.IntN(3))),
			Summary: maybe(0.3, words(2+rng.IntN(4))),
			Content: maybe(0.9, words(1+rng.IntN(25))),
			Aside:   maybe(0.2, words(3)),
		}
		if rng.Float64() < 0.2 {
			d.Tags = strings.Fields(words(1 + rng.IntN(2)))
		}
		if rng.Float64() < 0.1 {
			d.Keywords = strings.Fields(words(1))
		}
		if rng.Float64() < 0.1 {
			d.Kind = kindContext
		}
		docs = append(docs, d)
		// Copies tie with each other exactly.
		for k := rng.IntN(4); k > 0 && len(docs) < n; k-- {
			c := d
			c.Path = fmt.Sprintf("d%02d/%04d-%d.md", i%7, i, k)
			docs = append(docs, c)
		}
	}
	return docs
}

// randomQuery is a query of one to six words of the corpus's vocabulary,
// some misspelt (fuzzy expansions), cut short (prefix expansions), quoted
// together (phrases), joined by a hyphen (compounds: the joined word, or
// either part) or unknown.
func randomQuery(rng *rand.Rand, docs []Doc) string {
	var ws []string
	for k := 1 + rng.IntN(6); k > 0; k-- {
		d := docs[rng.IntN(len(docs))]
		fs := strings.Fields(d.Title + " " + d.Content)
		if len(fs) == 0 {
			continue
		}
		w := fs[rng.IntN(len(fs))]
		switch rng.IntN(10) {
		case 0:
			w = w[:len(w)-1] + "x" // one edit away
		case 1:
			w = w[:3] // a prefix
		case 2:
			w = "zanzibar"
		case 3:
			if k > 1 {
				w = `"` + w + " " + fs[rng.IntN(len(fs))] + `"`
			}
		case 4:
			w += "-" + fs[rng.IntN(len(fs))]
		}
		ws = append(ws, w)
	}
	return strings.Join(ws, " ")
}

// unpruned is q with every disjunction's pruning off.
func unpruned(q bluge.Query) bluge.Query {
	switch q := q.(type) {
	case *kindFilter:
		c := *q
		c.q = unpruned(q.q)
		return &c
	case *disjunction:
		c := *q
		c.prune = false
		c.clauses = make([]bluge.Query, len(q.clauses))
		for i, cl := range q.clauses {
			c.clauses[i] = unpruned(cl)
		}
		return &c
	case *conjunction:
		c := *q
		c.clauses = make([]bluge.Query, len(q.clauses))
		for i, cl := range q.clauses {
			c.clauses[i] = unpruned(cl)
		}
		return &c
	}
	return q
}

// The pruned collection of a pass keeps the same documents with the same
// scores and term locations as the brute-force ranking of every match
// and as bluge's own collector, ties by path included, and counts the
// same number of matches, on random indexes of several segments with
// replaced and deleted documents, for many random queries and limits, in
// windows of the whole index or a few documents.
func TestPruneAsUnpruned(t *testing.T) {
	for seed := range uint64(4) {
		width := []int{windowDocs, 64, 5, 1}[seed]
		t.Run(fmt.Sprintf("seed %d, windows of %d", seed, width), func(t *testing.T) {
			defer func(w int) { windowDocs = w }(windowDocs)
			windowDocs = width
			rng := rand.New(rand.NewPCG(seed, 7))
			docs := randomCorpus(rng, 400+rng.IntN(300))
			x := newSegmented(t, Options{})
			putShuffled(t, x, docs, 30+rng.IntN(60), seed)
			// Replaced and deleted documents stay in their segments until
			// merged, and must count nowhere.
			for i := 0; i < 40; i++ {
				d := docs[rng.IntN(len(docs))]
				d.Content += " " + randomQuery(rng, docs)
				if err := x.Put(d); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 20; i++ {
				if err := x.Delete(docs[rng.IntN(len(docs))].Path); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(x.reader.Segments()); n < 2 {
				t.Fatalf("%d segment(s): the test needs several", n)
			}
			pruned, visited, matched := 0, 0, 0
			for range 20 {
				query := randomQuery(rng, docs)
				qs := x.parse(query)
				if len(qs) == 0 {
					continue
				}
				wide := x.buildQuery(qs, false)
				passes := map[string]bluge.Query{
					"or":       wide,
					"entries":  &kindFilter{q: wide, kind: kindContext, exclude: true},
					"contexts": &kindFilter{q: wide, kind: kindContext},
					"and":      &kindFilter{q: x.buildQuery(qs, true), kind: kindContext, exclude: true},
				}
				for name, q := range passes {
					for _, n := range []int{1, 4, 50} {
						want, wantTotal := bruteTop(t, x, unpruned(q), n)
						ms, total := runTop(t, x, q, n)
						visited += seen(t, x, q, n)
						matched += total
						got := matchesOf(t, x, ms)
						gotScored := make([]scored, len(got))
						for i := range got {
							gotScored[i] = got[i].scored
						}
						if total != wantTotal {
							t.Errorf("%q %s, %d: total %d, want %d", query, name, n, total, wantTotal)
						}
						if len(want) > 0 && !reflect.DeepEqual(gotScored, want) || len(got) != len(want) {
							t.Fatalf("%q %s, %d:\n got %v\nwant %v", query, name, n, gotScored, want)
						}
						old, _ := blugeTop(t, x, unpruned(q), n)
						if len(old) > 0 && !reflect.DeepEqual(got, old) || len(got) != len(old) {
							t.Fatalf("%q %s, %d: not as bluge's collector:\n got %v\nwant %v", query, name, n, got, old)
						}
						if wantTotal > n {
							pruned++
						}
					}
				}
			}
			if pruned == 0 {
				t.Fatal("no query matched more documents than it kept: nothing to prune")
			}
			if visited >= matched {
				t.Fatalf("the collector was given %d documents of %d matches: nothing was pruned", visited, matched)
			}
			t.Logf("the collector was given %d documents of %d matches", visited, matched)
		})
	}
}

// A document whose score equals the n-th best is kept, to be ranked by
// path, even when the bounds of the clauses it matches add up to exactly
// that score (maxScore drops only documents whose bound is below it).
func TestPruneKeepsTies(t *testing.T) {
	// One term, in one field, of documents of one length: every document
	// scores the same, the most a document can score with that term.
	docs := copies("same", 60, Doc{Content: "otter"})
	docs = append(docs, copies("other", 60, Doc{Content: "kelp"})...)
	x := newIndex(t, Options{})
	putShuffled(t, x, docs, 17, 5)
	q := x.buildQuery(x.parse("otter kelp"), false)
	for _, n := range []int{1, 7, 59, 60, 61, 119, 120, 121} {
		want, wantTotal := bruteTop(t, x, unpruned(q), n)
		ms, total := runTop(t, x, q, n)
		got := matchesOf(t, x, ms)
		if total != wantTotal || len(got) != len(want) {
			t.Fatalf("%d: %d hits of %d, want %d of %d", n, len(got), total, len(want), wantTotal)
		}
		for i := range got {
			if got[i].scored != want[i] {
				t.Fatalf("%d: hit %d is %v, want %v", n, i, got[i].scored, want[i])
			}
		}
	}
}

// A term's bound holds for every document it matches, however its
// frequency and the length of the field, and is not infinitely loose.
func TestTermBound(t *testing.T) {
	for _, k1 := range []float64{0, 0.5, 1.2, 2} {
		for _, b := range []float64{0, 0.3, 0.75, 1} {
			stats := &fieldStats{docs: 1000, sum: 7000}
			sim := &bm25{stats: stats, k1: k1, b: b}
			for _, n := range []uint64{1, 10, 999} {
				bound := sim.bound(2, n)
				if math.IsInf(bound, 0) {
					t.Fatalf("k1 %v, b %v: no bound", k1, b)
				}
				sc := sim.Scorer(2, nil, docFreq(n))
				for _, tf := range []int{1, 2, 3, 10, 1000, 1 << 20} {
					for _, dl := range []uint32{1, 2, 7, 100, 1 << 20} {
						if s := sc.Score(tf, float64(math.Float32frombits(dl))); s > bound {
							t.Errorf("k1 %v, b %v, n %d, tf %d, dl %d: score %v above bound %v", k1, b, n, tf, dl, s, bound)
						}
					}
				}
			}
		}
	}
	if b := (&bm25{stats: &fieldStats{docs: 10, sum: 10}, k1: 1.2, b: 1.5}).bound(1, 1); !math.IsInf(b, 1) {
		t.Errorf("b > 1: bound %v, want none", b)
	}
}

// A pruning disjunction advanced to random documents between its steps,
// as filters drive it, returns each time the first match at or after
// the document, with the score and locations of the unpruned one, in
// windows of any width, and without locations (bare terms, whose
// postings a window reads without a DocumentMatch, beside phrases).
func TestMaxScoreAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	docs := randomCorpus(rng, 500)
	x := newSegmented(t, Options{})
	putShuffled(t, x, docs, 40, 11)
	for _, width := range []int{windowDocs, 16, 1} {
		for _, locs := range []bool{true, false} {
			t.Run(fmt.Sprintf("windows of %d, locations %v", width, locs), func(t *testing.T) {
				maxScoreAdvance(t, x, docs, rng, width, locs)
			})
		}
	}
}

func maxScoreAdvance(t *testing.T, x *Index, docs []Doc, rng *rand.Rand, width int, locs bool) {
	defer func(w int) { windowDocs = w }(windowDocs)
	windowDocs = width
	open := func(q bluge.Query) (bsearch.Searcher, error) {
		if locs {
			return x.searcher(q)
		}
		return bluge.NewAllMatches(q).Searcher(snapshot{Snapshot: x.reader}, x.cfg.search)
	}
	tested := 0
	for range 30 {
		query := randomQuery(rng, docs)
		qs := x.parse(query)
		if len(qs) == 0 {
			continue
		}
		q := x.buildQuery(qs, false)
		want := allMatches(t, unpruned(q), open)
		s, err := open(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*maxScore); !ok {
			_ = s.Close()
			continue
		}
		tested++
		ctx := bsearch.NewSearchContext(s.DocumentMatchPoolSize()+1, 0)
		var from uint64
		for step := 0; ; step++ {
			var d *bsearch.DocumentMatch
			if rng.IntN(3) == 0 {
				from += uint64(rng.IntN(2 * width))
				d, err = s.Advance(ctx, from)
			} else {
				d, err = s.Next(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			i := sort.Search(len(want), func(i int) bool { return want[i].Number >= from })
			if d == nil {
				if i < len(want) {
					t.Fatalf("%q, step %d: none at or after %d, want %d", query, step, from, want[i].Number)
				}
				break
			}
			d.Complete(nil)
			if i == len(want) || d.Number != want[i].Number || d.Score != want[i].Score || !reflect.DeepEqual(d.Locations, want[i].Locations) {
				t.Fatalf("%q, step %d: %d (%v) at or after %d, want %+v", query, step, d.Number, d.Score, from, want[i])
			}
			from = d.Number + 1
			ctx.DocumentMatchPool.Put(d)
		}
		_ = s.Close()
	}
	if tested == 0 {
		t.Fatal("no query opened a pruning disjunction")
	}
}

// allMatches returns every match of q, opened by open, in order, with its
// score and locations.
func allMatches(t *testing.T, q bluge.Query, open func(bluge.Query) (bsearch.Searcher, error)) []bsearch.DocumentMatch {
	t.Helper()
	s, err := open(q)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := bsearch.NewSearchContext(s.DocumentMatchPoolSize()+1, 0)
	var out []bsearch.DocumentMatch
	for {
		m, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			return out
		}
		m.Complete(nil)
		out = append(out, bsearch.DocumentMatch{Number: m.Number, Score: m.Score, Locations: m.Locations})
	}
}

// visits counts the documents a pruning searcher gives its collector.
type visits struct {
	pruner
	n int
}

func (v *visits) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	d, err := v.pruner.Next(ctx)
	if d != nil {
		v.n++
	}
	return d, err
}

// seen returns how many documents top is given to keep the n best of q.
func seen(t *testing.T, x *Index, q bluge.Query, n int) int {
	t.Helper()
	s, err := x.searcher(q)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.(pruner)
	if !ok {
		_, err := top(s, n)
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	v := &visits{pruner: p}
	if _, err := top(v, n); err != nil {
		t.Fatal(err)
	}
	return v.n
}
