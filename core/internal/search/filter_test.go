package search

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring"
	bsearch "github.com/blugelabs/bluge/search"
)

// filterCorpus is randomCorpus with topics, tags and dates: the paths
// d<i>/<n>.md of randomCorpus become d<i>/t<j>/<n>.md for two documents of
// three.
func filterCorpus(rng *rand.Rand, n int) []Doc {
	docs := randomCorpus(rng, n)
	tags := []string{"Red", "blue", "GREEN", "e-Mail"}
	day0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range docs {
		d := &docs[i]
		if i%3 != 0 {
			dom, file, _ := strings.Cut(d.Path, "/")
			d.Path = fmt.Sprintf("%s/t%d/%s", dom, i%4, file)
		}
		if rng.Float64() < 0.5 {
			d.Tags = append(d.Tags, tags[rng.IntN(len(tags))])
		}
		if d.Kind != kindContext && rng.Float64() < 0.8 {
			d.Date = day0.Add(time.Duration(rng.IntN(365*24)) * time.Hour)
		}
	}
	return docs
}

// oracle is what a filter keeps, written apart from the index's code: the
// path's folders, the tags as written but for case, the date as a time.
func oracle(f Filter, d Doc) bool {
	parts := strings.Split(d.Path, "/")
	if f.Domain != "" && (len(parts) < 2 || parts[0] != f.Domain) {
		return false
	}
	if f.Topic != "" && (len(parts) < 3 || parts[1] != f.Topic) {
		return false
	}
	for _, t := range f.Tags {
		if !slices.ContainsFunc(d.Tags, func(u string) bool { return strings.EqualFold(u, t) }) {
			return false
		}
	}
	if (!f.Since.IsZero() || !f.Until.IsZero()) && d.Date.IsZero() {
		return false
	}
	if !f.Since.IsZero() && d.Date.Before(f.Since) || !f.Until.IsZero() && d.Date.After(f.Until) {
		return false
	}
	return f.Keep == nil || f.Keep[d.Path]
}

// randomFilter is a filter of one to three random criteria.
func randomFilter(rng *rand.Rand, docs []Doc) Filter {
	var f Filter
	for k := 1 + rng.IntN(3); k > 0; k-- {
		switch rng.IntN(6) {
		case 0:
			f.Domain = fmt.Sprintf("d%02d", rng.IntN(7))
		case 1:
			f.Topic = fmt.Sprintf("t%d", rng.IntN(4))
		case 2:
			f.Tags = append(f.Tags, []string{"red", "BLUE", "green", "E-MAIL", "otter"}[rng.IntN(5)])
		case 3:
			f.Since = time.Date(2025, time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
		case 4:
			f.Until = time.Date(2025, time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
		case 5:
			// Few paths kept, or most (the index then looks up those left
			// out), or all.
			share := []float64{0.1, 0.9, 1}[rng.IntN(3)]
			f.Keep = map[string]bool{}
			for _, d := range docs {
				if rng.Float64() < share {
					f.Keep[d.Path] = true
				}
			}
		}
	}
	return f
}

// A filtered search's n best are the n best of the documents the filter
// keeps, found by ranking every match unfiltered and keeping those the
// filter keeps, on indexes of several segments with replaced and deleted
// documents, in both orders, by score and by a key, with pruning at work.
func TestFilteredAsBruteForce(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			docs := filterCorpus(rng, 500+rng.IntN(300))
			x := newSegmented(t, Options{})
			putShuffled(t, x, docs, 40+rng.IntN(60), seed)
			live := map[string]Doc{}
			for _, d := range docs {
				live[d.Path] = d
			}
			for i := 0; i < 30; i++ {
				d := docs[rng.IntN(len(docs))]
				d.Content += " " + randomQuery(rng, docs)
				d.Tags = []string{"blue"}
				if err := x.Put(d); err != nil {
					t.Fatal(err)
				}
				live[d.Path] = d
			}
			for i := 0; i < 20; i++ {
				p := docs[rng.IntN(len(docs))].Path
				if err := x.Delete(p); err != nil {
					t.Fatal(err)
				}
				delete(live, p)
			}
			if n := len(x.reader.Segments()); n < 2 {
				t.Fatalf("%d segment(s): the test needs several", n)
			}
			key := func(p string) (float64, bool) {
				d := live[p]
				if d.Date.IsZero() {
					return 0, false
				}
				return float64(d.Date.Unix()), true
			}
			checked, narrowed := 0, 0
			for range 25 {
				query := randomQuery(rng, docs)
				f := randomFilter(rng, docs)
				for _, order := range []Order{FullMatchesFirst, ByScore} {
					all, err := x.Rank(query, len(docs)+1, order)
					if err != nil {
						t.Fatal(err)
					}
					var want []Hit
					for _, h := range all.Hits {
						if oracle(f, live[h.Path]) {
							want = append(want, h)
						}
					}
					if len(want) < len(all.Hits) {
						narrowed++
					}
					for _, n := range []int{1, 5, 50} {
						got, err := x.RankIn(query, n, order, Scope{Filter: f})
						if err != nil {
							t.Fatal(err)
						}
						if !sameHits(got.Hits, want[:min(n, len(want))]) {
							t.Fatalf("%q %+v order %d, %d:\n got %v\nwant %v", query, f, order, n, paths(got.Hits), paths(want[:min(n, len(want))]))
						}
						if order == ByScore && got.Total != len(want) {
							t.Errorf("%q %+v, %d: total %d, want %d", query, f, n, got.Total, len(want))
						}
						checked++
					}
					if order != ByScore {
						continue
					}
					// By a key: every match the filter keeps, by the key, then
					// score, then path (entries before contexts).
					byKey := slices.Clone(want)
					slices.SortStableFunc(byKey, func(a, b Hit) int {
						if c := cmp.Compare(group(a), group(b)); c != 0 {
							return c
						}
						ka, oka := key(a.Path)
						kb, okb := key(b.Path)
						if oka != okb {
							if oka {
								return -1
							}
							return 1
						}
						if c := cmp.Compare(kb, ka); c != 0 {
							return c
						}
						if c := cmp.Compare(b.Raw, a.Raw); c != 0 {
							return c
						}
						return strings.Compare(a.Path, b.Path)
					})
					for _, n := range []int{1, 5, 50} {
						got, err := x.RankIn(query, n, ByScore, Scope{Filter: f, By: key})
						if err != nil {
							t.Fatal(err)
						}
						if !sameHits(got.Hits, byKey[:min(n, len(byKey))]) {
							t.Fatalf("%q %+v by key, %d:\n got %v\nwant %v", query, f, n, paths(got.Hits), paths(byKey[:min(n, len(byKey))]))
						}
					}
				}
			}
			if narrowed == 0 {
				t.Fatal("no filter left out a match")
			}
			t.Logf("%d filtered searches, %d filters left matches out", checked, narrowed)
		})
	}
}

func group(h Hit) int {
	if h.Kind == kindContext {
		return 1
	}
	return 0
}

func sameHits(a, b []Hit) bool {
	return slices.EqualFunc(a, b, func(x, y Hit) bool { return x.Path == y.Path && x.Raw == y.Raw })
}

func paths(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s %.4g", h.Path, h.Raw)
	}
	return out
}

// A filter that keeps few documents walks only those: the query's
// searcher is advanced from one kept document to the next, and returns
// about as many documents as the filter keeps, not every match.
func TestFilterNarrowsTheWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	docs := filterCorpus(rng, 2000)
	x := newIndex(t, Options{})
	putShuffled(t, x, docs, 500, 5)
	keep := map[string]bool{}
	for _, d := range docs[:40] {
		keep[d.Path] = true
	}
	c, err := x.counter()
	if err != nil {
		t.Fatal(err)
	}
	allow, err := x.allowed(c, Filter{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	wide := x.buildQuery(x.parse("otter kelp forest"), false)
	walk := func(filter bool) (returned, walked int) {
		s, err := x.searcher(wide)
		if err != nil {
			t.Fatal(err)
		}
		inner := &counting{Searcher: s}
		var outer bsearch.Searcher = inner
		if filter {
			its := make([]roaring.IntPeekable, len(allow.segs))
			for i, bm := range allow.segs {
				its[i] = bm.Iterator()
			}
			outer = &filteredSearcher{inner: inner, allow: allow, its: its}
		}
		defer func() { _ = outer.Close() }()
		ctx := bsearch.NewSearchContext(1+outer.DocumentMatchPoolSize(), 0)
		for {
			d, err := outer.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				return returned, inner.n
			}
			returned++
			ctx.DocumentMatchPool.Put(d)
		}
	}
	all, allWalked := walk(false)
	kept, keptWalked := walk(true)
	if kept == 0 || kept > len(keep) || keptWalked > 2*len(keep) || allWalked < 10*keptWalked {
		t.Fatalf("filtered: %d matches, %d documents walked (%d kept); whole: %d matches, %d walked", kept, keptWalked, len(keep), all, allWalked)
	}
	t.Logf("filtered: %d matches, %d documents walked; whole: %d", kept, keptWalked, allWalked)
}

// counting counts the documents a searcher returns.
type counting struct {
	bsearch.Searcher
	n int
}

func (c *counting) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	d, err := c.Searcher.Next(ctx)
	if d != nil {
		c.n++
	}
	return d, err
}

func (c *counting) Advance(ctx *bsearch.Context, n uint64) (*bsearch.DocumentMatch, error) {
	d, err := c.Searcher.Advance(ctx, n)
	if d != nil {
		c.n++
	}
	return d, err
}

// Admits agrees with the oracle (and so with the index) on every document.
func TestAdmitsAsTheOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	docs := filterCorpus(rng, 300)
	for range 30 {
		f := randomFilter(rng, docs)
		for _, d := range docs {
			if got, want := f.Admits(d.Path, d.Tags, d.Date), oracle(f, d); got != want {
				t.Fatalf("%+v admits %s: %v, want %v", f, d.Path, got, want)
			}
		}
	}
}

// HoldsDomain answers from the live documents: a domain whose documents
// were all deleted is held no more, so that a tree whose archive was
// emptied searches unfiltered again.
func TestHoldsDomain(t *testing.T) {
	x := newIndex(t, Options{})
	if err := x.Put(Doc{Path: "notes/a.md", Kind: "entry", Content: "otter"}, Doc{Path: "_archive/notes/b.md", Kind: "entry", Content: "kelp"}); err != nil {
		t.Fatal(err)
	}
	holds := func(d string) bool {
		t.Helper()
		ok, err := x.HoldsDomain(d)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !holds("_archive") || !holds("notes") || holds("other") {
		t.Fatalf("holds _archive %v, notes %v, other %v: want true, true, false", holds("_archive"), holds("notes"), holds("other"))
	}
	if err := x.Delete("_archive/notes/b.md"); err != nil {
		t.Fatal(err)
	}
	if holds("_archive") {
		t.Error("a domain whose only document was deleted is still held")
	}
}
