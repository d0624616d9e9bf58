package search

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/index/mergeplan"
	bsearch "github.com/blugelabs/bluge/search"
)

// newSegmented is newIndex whose segments are never merged, for the tests
// that need several: under load the merger had run before they looked,
// and left one.
func newSegmented(t testing.TB, opts Options) *Index {
	t.Helper()
	x := newIndexOf(opts)
	never := buildPolicy
	never.CalcBudget = func(int64, int64, *mergeplan.Options) int { return math.MaxInt }
	if err := x.start(func() index.Directory { return index.NewInMemoryDirectory() }, never); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// newIndex returns an index holding docs, closed when the test ends.
func newIndex(t testing.TB, opts Options, docs ...Doc) *Index {
	t.Helper()
	x, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if err := x.Put(docs...); err != nil {
		t.Fatal(err)
	}
	return x
}

func mustSearch(t testing.TB, x *Index, query string, limit int) Result {
	t.Helper()
	r, err := x.Search(query, limit)
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	checkResult(t, query, r)
	return r
}

// checkResult checks the invariants every result must keep.
func checkResult(t testing.TB, query string, r Result) {
	t.Helper()
	if r.Mode != ModeAnd && r.Mode != ModeFill && r.Mode != ModeOr {
		t.Errorf("%q: mode %q", query, r.Mode)
	}
	if len(r.Hits) > r.Total {
		t.Errorf("%q: %d hits but total %d", query, len(r.Hits), r.Total)
	}
	for i, h := range r.Hits {
		if h.Score < 0.0001 || h.Score > 0.9999 {
			t.Errorf("%q: %s: score %v outside [0.0001, 0.9999]", query, h.Path, h.Score)
		}
		if h.Score != math.Round(h.Score*1e4)/1e4 {
			t.Errorf("%q: %s: score %v not rounded to 4 decimals", query, h.Path, h.Score)
		}
		if want := normalize01(h.Raw); h.Score != want {
			t.Errorf("%q: %s: score %v, want s/(1+s) of raw %v = %v", query, h.Path, h.Score, h.Raw, want)
		}
		// Matched counts terms matched in part (one part of "gpt-4o"), so
		// a fill hit may list every term without matching them all; contexts
		// come from the OR pass whenever it ran.
		if h.AllTerms && len(h.Matched) != len(r.Terms) || r.Mode == ModeAnd && !h.AllTerms && h.Kind != kindContext || r.Mode == ModeOr && h.AllTerms {
			t.Errorf("%q: %s: AllTerms %v in mode %s, matched %q", query, h.Path, h.AllTerms, r.Mode, h.Matched)
		}
		if i > 0 {
			// Entries matching every term, then other entries, then
			// contexts; by score, then path, within each group.
			p := r.Hits[i-1]
			if g, pg := rankGroup(h), rankGroup(p); pg > g {
				t.Errorf("%q: %s (group %d) before %s (group %d)", query, p.Path, pg, h.Path, g)
			} else if pg == g && (p.Raw < h.Raw || p.Raw == h.Raw && p.Path >= h.Path) {
				t.Errorf("%q: hits out of order: %s (%v) before %s (%v)", query, p.Path, p.Raw, h.Path, h.Raw)
			}
		}
		for _, m := range h.Matched {
			if !slices.Contains(r.Terms, m) {
				t.Errorf("%q: %s: matched %q is not a query term %q", query, h.Path, m, r.Terms)
			}
		}
	}
	seen := map[string]bool{}
	for _, term := range r.Terms {
		if seen[term] {
			t.Errorf("%q: duplicate term %q in %q", query, term, r.Terms)
		}
		seen[term] = true
	}
	for _, u := range r.Unmatched {
		if !seen[u] {
			t.Errorf("%q: unmatched %q is not a query term %q", query, u, r.Terms)
		}
	}
}

func pathsOf(r Result) []string {
	out := []string{}
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

func hitOf(t testing.TB, r Result, path string) Hit {
	t.Helper()
	for _, h := range r.Hits {
		if h.Path == path {
			return h
		}
	}
	t.Fatalf("no hit %s in %q", path, pathsOf(r))
	return Hit{}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The boost of a field multiplies the BM25 score of a term found in it: two
// documents with the same field lengths, one with the word in the field, the
// other with it in the content, score in the ratio of the boosts.
func TestFieldBoosts(t *testing.T) {
	custom := Options{TitleBoost: 5, PathBoost: 0.5, SummaryBoost: 4, ContentBoost: 2, TagBoost: 1, KeywordBoost: 3, AsideBoost: 3}
	tests := []struct {
		field string
		opts  Options
		ratio float64
	}{
		{"title", Options{}, 3},
		{"path", Options{}, 1.5},
		{"summary", Options{}, 1},
		{"content", Options{}, 1},
		{"tags", Options{}, 2},
		{"keywords", Options{}, 2},
		{"aside", Options{}, 0.5},
		{"title", custom, 2.5},
		{"path", custom, 0.25},
		{"summary", custom, 2},
		{"content", custom, 1},
		{"tags", custom, 0.5},
		{"keywords", custom, 1.5},
		{"aside", custom, 1.5},
	}
	// doc has "alpha bravo" in every field (the path is "<id>/alpha.md")
	// except field, which has "zebra bravo".
	doc := func(id, field string) Doc {
		d := Doc{Path: id + "/alpha.md", Title: "alpha bravo", Summary: "alpha bravo", Content: "alpha bravo",
			Tags: []string{"alpha", "bravo"}, Keywords: []string{"alpha", "bravo"}, Aside: "alpha bravo"}
		switch field {
		case "title":
			d.Title = "zebra bravo"
		case "path":
			d.Path = "zebra/bravo.md"
		case "summary":
			d.Summary = "zebra bravo"
		case "content":
			d.Content = "zebra bravo"
		case "tags":
			d.Tags = []string{"zebra", "bravo"}
		case "keywords":
			d.Keywords = []string{"zebra", "bravo"}
		case "aside":
			d.Aside = "zebra bravo"
		}
		return d
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%v", tc.field, tc.ratio), func(t *testing.T) {
			in, ref := doc("d1", tc.field), doc("d2", "content")
			x := newIndex(t, tc.opts, in, ref)
			r := mustSearch(t, x, "zebra", 0)
			if r.Total != 2 || len(r.Hits) != 2 || r.Mode != ModeAnd {
				t.Fatalf("got %+v, want both documents in the and pass", r)
			}
			a, b := hitOf(t, r, in.Path), hitOf(t, r, ref.Path)
			if got := a.Raw / b.Raw; !near(got, tc.ratio) {
				t.Errorf("score in %s / score in content = %v, want %v", tc.field, got, tc.ratio)
			}
			if tc.ratio > 1 && r.Hits[0].Path != in.Path || tc.ratio < 1 && r.Hits[0].Path != ref.Path {
				t.Errorf("order %q", pathsOf(r))
			}
			if !reflect.DeepEqual(a.Matched, []string{"zebra"}) || !reflect.DeepEqual(b.Matched, []string{"zebra"}) {
				t.Errorf("matched %q and %q, want [zebra]", a.Matched, b.Matched)
			}
		})
	}
}

// An aside (what an entry quotes or the assistant said) is found, ranks
// below the same words said in the content, and gives the excerpt when it
// holds the match.
func TestAside(t *testing.T) {
	said := Doc{Path: "chats/said.md", Title: "Chat", Content: "User: I adopted a greyhound named Pixel.", Aside: "Assistant: Congratulations!"}
	quoted := Doc{Path: "chats/quoted.md", Title: "Chat", Content: "User: which breed suits a flat?", Aside: "Assistant: A greyhound is calm indoors, Pixel."}
	x := newIndex(t, Options{}, said, quoted)
	r := mustSearch(t, x, "greyhound Pixel", 0)
	if got := pathsOf(r); !reflect.DeepEqual(got, []string{"chats/said.md", "chats/quoted.md"}) {
		t.Fatalf("order %q", got)
	}
	h := hitOf(t, r, "chats/quoted.md")
	if !reflect.DeepEqual(h.Matched, []string{"greyhound", "pixel"}) || !strings.Contains(h.Excerpt, "greyhound is calm") {
		t.Errorf("aside hit: matched %q, excerpt %q", h.Matched, h.Excerpt)
	}
	if r := mustSearch(t, x, "congratulations", 0); len(r.Unmatched) != 0 || len(r.Hits) != 1 {
		t.Errorf("a word only in an aside: %+v", r)
	}
}

// The same comparison on ordinary documents of unequal lengths. Every
// document has one tag and one keyword: BM25's idf is per field, so a word
// in the only tagged document would weigh little.
func TestFieldRanking(t *testing.T) {
	docs := []Doc{
		{Path: "notes/meeting.md", Title: "Weekly meeting", Content: "We talked about the invoice backlog and the new hires."},
		{Path: "billing/overview.md", Title: "Invoice overview", Content: "How billing works, from the order to the payment."},
		{Path: "billing/dunning.md", Title: "Dunning", Content: "Failed payments are retried on day 1, 3 and 7.", Tags: []string{"invoice"}},
		{Path: "billing/invoice.md", Title: "Numbering", Content: "Numbers are sequential per legal entity."},
		{Path: "ops/deploys.md", Title: "Deploys", Content: "Deploys go out on Tuesdays.", Keywords: []string{"release"}},
		{Path: "ops/calendar.md", Title: "Calendar", Content: "See the release calendar for the dates of each release."},
	}
	for i := range docs {
		if docs[i].Tags == nil {
			docs[i].Tags = []string{fmt.Sprintf("tag%d", i)}
		}
		if docs[i].Keywords == nil {
			docs[i].Keywords = []string{fmt.Sprintf("keyword%d", i)}
		}
	}
	x := newIndex(t, Options{}, docs...)
	tests := []struct {
		query string
		want  []string
	}{
		// title ×3 > tags ×2 > path ×1.5 > content ×1
		{"invoice", []string{"billing/overview.md", "billing/dunning.md", "billing/invoice.md", "notes/meeting.md"}},
		// a keyword (×2) beats two occurrences in a longer content
		{"release", []string{"ops/deploys.md", "ops/calendar.md"}},
		// path words are searchable
		{"dunning", []string{"billing/dunning.md"}},
		{"ops", []string{"ops/calendar.md", "ops/deploys.md"}},
	}
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		if got := pathsOf(r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.query, got, tc.want)
		}
		if r.Total != len(tc.want) {
			t.Errorf("%q: total %d, want %d", tc.query, r.Total, len(tc.want))
		}
	}
}

// The raw score is textbook BM25 (Robertson's tf form) over live documents.
func TestBM25Formula(t *testing.T) {
	docs := []Doc{
		{Path: "d1", Content: "zebra zebra alpha alpha"},               // tf 2, dl 4
		{Path: "d2", Content: "zebra bravo"},                           // tf 1, dl 2
		{Path: "d3", Content: "charlie delta echo foxtrot golf hotel"}, // dl 6
	}
	bm25 := func(k1, b, tf, dl float64) float64 {
		const N, n, avg = 3, 2, 4
		idf := math.Log(1 + (N-n+0.5)/(n+0.5))
		return idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
	}
	tests := []struct {
		opts  Options
		k1, b float64
	}{
		{Options{}, 1.2, 0.75},
		{Options{K1: 2, B: 0.5}, 2, 0.5},
		{Options{B: -1}, 1.2, 0},
		{Options{ContentBoost: 2}, 1.2, 0.75},
	}
	for _, tc := range tests {
		x := newIndex(t, tc.opts, docs...)
		r := mustSearch(t, x, "zebra", 0)
		if !reflect.DeepEqual(pathsOf(r), []string{"d1", "d2"}) {
			t.Fatalf("%+v: got %q", tc.opts, pathsOf(r))
		}
		boost := 1.0
		if tc.opts.ContentBoost != 0 {
			boost = tc.opts.ContentBoost
		}
		for i, want := range []float64{boost * bm25(tc.k1, tc.b, 2, 4), boost * bm25(tc.k1, tc.b, 1, 2)} {
			h := r.Hits[i]
			if !near(h.Raw, want) {
				t.Errorf("%+v: %s raw %v, want %v", tc.opts, h.Path, h.Raw, want)
			}
			if s := math.Round(want/(1+want)*1e4) / 1e4; h.Score != s {
				t.Errorf("%+v: %s score %v, want %v", tc.opts, h.Path, h.Score, s)
			}
		}
	}
}

func corpus() []Doc {
	return []Doc{
		{Path: "engineering/billing/invoice_retry_policy.md", Title: "Invoice retry policy",
			Summary: "Failed invoices are retried three times.",
			Content: "When a payment fails the invoice is retried on day 1, day 3 and day 7. After the third failure the subscription is paused.",
			Tags:    []string{"billing", "dunning"}},
		{Path: "engineering/billing/invoice_numbering.md", Title: "Invoice numbering",
			Content: "Invoice numbers are sequential per legal entity and never reused."},
		{Path: "engineering/platform/http_retries.md", Title: "HTTP retries",
			Content:  "Outgoing HTTP calls are retried with exponential backoff and jitter.",
			Keywords: []string{"backoff", "jitter"}},
		{Path: "engineering/platform/config.md", Title: "Configuration",
			Content: "Settings live in config.yaml; the current schema is v1.8 and pi is 3.14 in the examples."},
		{Path: "product/catalog.md", Title: "Catalog", Content: "The catalog lists every plan."},
		{Path: "product/catamaran.md", Title: "Boats", Content: "A catamaran has two hulls."},
		{Path: "context.md", Kind: "context", Title: "Company knowledge", Summary: "Engineering and product notes."},
	}
}

// firstPass lists the paths of the hits of the pass that ran first: those
// matching every term, or all hits when none does (Mode "or").
func firstPass(r Result) []string {
	out := []string{}
	for _, h := range r.Hits {
		if h.AllTerms {
			out = append(out, h.Path)
		}
	}
	if len(out) == 0 {
		return pathsOf(r)
	}
	return out
}

// rankGroup is the group of a hit in Search's order.
func rankGroup(h Hit) int {
	switch {
	case h.Kind == kindContext:
		return 2
	case h.AllTerms:
		return 0
	}
	return 1
}

func TestAndOr(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	tests := []struct {
		query string
		mode  string
		total int
		paths []string // of the first pass, sorted; nil to skip
	}{
		// one document has both; the others fill the slots left
		{"invoice retry", ModeFill, 3, []string{"engineering/billing/invoice_retry_policy.md"}},
		{"invoice", ModeAnd, 2, []string{"engineering/billing/invoice_numbering.md", "engineering/billing/invoice_retry_policy.md"}},
		{"retries", ModeAnd, 2, []string{"engineering/billing/invoice_retry_policy.md", "engineering/platform/http_retries.md"}},
		// no document has both: any term
		{"numbering jitter", ModeOr, 2, nil},
		{"invoice jitter", ModeOr, 3, nil},
		// a word found nowhere turns the and pass into the or pass
		{"invoice zanzibar", ModeOr, 2, nil},
		{"zanzibar", ModeAnd, 0, []string{}},
		{"", ModeAnd, 0, []string{}},
		{"the of and", ModeAnd, 0, []string{}},
	}
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		if r.Mode != tc.mode || r.Total != tc.total || len(r.Hits) != tc.total {
			t.Errorf("%q: mode %s total %d hits %q, want mode %s total %d", tc.query, r.Mode, r.Total, pathsOf(r), tc.mode, tc.total)
		}
		if got := sorted(firstPass(r)); tc.paths != nil && !reflect.DeepEqual(got, tc.paths) {
			t.Errorf("%q: got %q, want %q", tc.query, got, tc.paths)
		}
	}
	// In the or pass, documents matching more terms come first and Matched
	// tells which terms each one has.
	r := mustSearch(t, x, "invoice numbering jitter", 0)
	if r.Mode != ModeOr || r.Total != 3 {
		t.Fatalf("got %+v", r)
	}
	if h := r.Hits[0]; h.Path != "engineering/billing/invoice_numbering.md" || !reflect.DeepEqual(h.Matched, []string{"invoic", "number"}) {
		t.Errorf("first hit %s matched %q", h.Path, h.Matched)
	}
	if h := hitOf(t, r, "engineering/platform/http_retries.md"); !reflect.DeepEqual(h.Matched, []string{"jitter"}) {
		t.Errorf("http_retries matched %q", h.Matched)
	}
}

func TestLimitAndTotal(t *testing.T) {
	var docs []Doc
	for i := range 15 {
		docs = append(docs, Doc{Path: fmt.Sprintf("notes/%02d.md", i), Title: "Invoice", Content: strings.Repeat("invoice ", i+1)})
	}
	x := newIndex(t, Options{}, docs...)
	for _, tc := range []struct{ limit, hits int }{{0, DefaultLimit}, {-1, DefaultLimit}, {3, 3}, {15, 15}, {100, 15}} {
		r := mustSearch(t, x, "invoice", tc.limit)
		if len(r.Hits) != tc.hits || r.Total != 15 {
			t.Errorf("limit %d: %d hits, total %d; want %d hits, total 15", tc.limit, len(r.Hits), r.Total, tc.hits)
		}
	}
	// A smaller limit returns the head of a larger one.
	all := mustSearch(t, x, "invoice", 15)
	top := mustSearch(t, x, "invoice", 4)
	if !reflect.DeepEqual(top.Hits, all.Hits[:4]) {
		t.Errorf("top 4 %q, want %q", pathsOf(top), pathsOf(all)[:4])
	}
}

// An uncounted ranking ranks as a counted one, and its Total is the
// documents it ranked: every match when fewer than limit match, else a
// lower bound of the count.
func TestUncountedTotal(t *testing.T) {
	var docs []Doc
	for i := range 15 {
		docs = append(docs, Doc{Path: fmt.Sprintf("notes/%02d.md", i), Title: "Invoice", Content: strings.Repeat("invoice ", i+1) + fmt.Sprintf("month%d", i%3)})
	}
	docs = append(docs, Doc{Path: "notes/context.md", Kind: "context", Title: "Notes", Content: "every invoice of the year"})
	x := newIndex(t, Options{}, docs...)
	for _, query := range []string{"invoice", "invoice month1", "month2 receipts"} {
		for _, limit := range []int{3, 15, 16, 100} {
			counted, err := x.RankIn(query, limit, ByScore, Scope{})
			if err != nil {
				t.Fatal(err)
			}
			uncounted, err := x.RankIn(query, limit, ByScore, Scope{Uncounted: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(uncounted.Hits, counted.Hits) || uncounted.Mode != counted.Mode {
				t.Errorf("%q, limit %d: uncounted %q (%s), counted %q (%s)", query, limit, pathsOf(uncounted.Result), uncounted.Mode, pathsOf(counted.Result), counted.Mode)
			}
			want := counted.Total
			if counted.Total >= limit {
				want = len(counted.Hits)
			}
			if uncounted.Total != want || uncounted.Total != len(uncounted.Hits) {
				t.Errorf("%q, limit %d: uncounted total %d with %d hits, counted %d", query, limit, uncounted.Total, len(uncounted.Hits), counted.Total)
			}
		}
	}
}

func TestPrefix(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	exact := mustSearch(t, x, "invoice", 0)
	tests := []struct {
		query string
		mode  string
		paths []string
	}{
		{"invo", ModeAnd, []string{"engineering/billing/invoice_numbering.md", "engineering/billing/invoice_retry_policy.md"}},
		{"retry invo", ModeFill, []string{"engineering/billing/invoice_retry_policy.md"}},
		{"inv", ModeAnd, []string{"engineering/billing/invoice_numbering.md", "engineering/billing/invoice_retry_policy.md"}},
		// not the last word: no prefix, so "invo" matches nothing
		{"invo retry", ModeOr, []string{"engineering/billing/invoice_retry_policy.md", "engineering/platform/http_retries.md"}},
		// too short for a prefix
		{"in", ModeAnd, []string{}},
		{"ca", ModeAnd, []string{}},
	}
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		if r.Mode != tc.mode || !reflect.DeepEqual(sorted(firstPass(r)), tc.paths) {
			t.Errorf("%q: mode %s %q, want mode %s %q", tc.query, r.Mode, firstPass(r), tc.mode, tc.paths)
		}
	}
	// A prefix expansion scores PrefixBoost (0.4) of the exact word.
	r := mustSearch(t, x, "invo", 0)
	for i, h := range r.Hits {
		if e := exact.Hits[i]; h.Path != e.Path || !near(h.Raw, 0.4*e.Raw) || h.Raw >= e.Raw {
			t.Errorf("invo: %s raw %v, want 0.4 × %v (%s)", h.Path, h.Raw, e.Raw, e.Path)
		}
		if !reflect.DeepEqual(h.Matched, []string{"invo"}) {
			t.Errorf("invo: %s matched %q", h.Path, h.Matched)
		}
	}
	if len(r.Unmatched) != 0 {
		t.Errorf("invo: unmatched %q; prefix matches count", r.Unmatched)
	}

	// Prefix expansions only go to the MaxExpansions shortest words.
	for _, tc := range []struct {
		opts  Options
		paths []string
	}{
		{Options{}, []string{"product/catalog.md", "product/catamaran.md"}},
		{Options{MaxExpansions: 1}, []string{"product/catalog.md"}},
		{Options{PrefixBoost: -1}, []string{}},
		{Options{PrefixMinLen: 5}, []string{}},
	} {
		x := newIndex(t, tc.opts, corpus()...)
		if r := mustSearch(t, x, "cata", 0); !reflect.DeepEqual(pathsOf(r), tc.paths) {
			t.Errorf("%+v: cata: %q, want %q", tc.opts, pathsOf(r), tc.paths)
		}
	}
}

func TestFuzzy(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	exact := mustSearch(t, x, "invoice", 0)
	r := mustSearch(t, x, "invoise", 0)
	if !reflect.DeepEqual(pathsOf(r), pathsOf(exact)) || r.Mode != ModeAnd {
		t.Fatalf("invoise: %q (%s), want %q", pathsOf(r), r.Mode, pathsOf(exact))
	}
	for i, h := range r.Hits {
		// one edit away: FuzzyBoost (0.3) of the exact word
		if e := exact.Hits[i]; !near(h.Raw, 0.3*e.Raw) || h.Score >= e.Score {
			t.Errorf("invoise: %s raw %v score %v, want 0.3 × %v, below %v", h.Path, h.Raw, h.Score, e.Raw, e.Score)
		}
		if !reflect.DeepEqual(h.Matched, []string{"invois"}) {
			t.Errorf("invoise: %s matched %q", h.Path, h.Matched)
		}
	}
	// A fuzzy match is not a match for Unmatched.
	if !reflect.DeepEqual(r.Unmatched, []string{"invois"}) {
		t.Errorf("invoise: unmatched %q, want [invois]", r.Unmatched)
	}
	// An exact match outranks a fuzzy one of the same word.
	y := newIndex(t, Options{}, Doc{Path: "a.md", Content: "invoise"}, Doc{Path: "b.md", Content: "invoice"})
	r = mustSearch(t, y, "invoice", 0)
	if !reflect.DeepEqual(pathsOf(r), []string{"b.md", "a.md"}) || r.Hits[0].Raw <= r.Hits[1].Raw {
		t.Errorf("invoice over {invoise, invoice}: %q", pathsOf(r))
	}

	tests := []struct {
		opts  Options
		query string
		paths []string
	}{
		// deletion, insertion, substitution and transposition-free edits
		{Options{}, "catalogg", []string{"product/catalog.md"}},
		{Options{}, "catlog", []string{"product/catalog.md"}},
		{Options{}, "catalig", []string{"product/catalog.md"}},
		// two edits: nothing
		{Options{}, "cotalig", []string{}},
		// short words are not fuzzed
		{Options{}, "plen", []string{}},
		{Options{FuzzyMinLen: 4}, "plen", []string{"product/catalog.md"}},
		{Options{FuzzyBoost: -1}, "invoise", []string{}},
	}
	for _, tc := range tests {
		x := newIndex(t, tc.opts, corpus()...)
		if r := mustSearch(t, x, tc.query, 0); !reflect.DeepEqual(pathsOf(r), tc.paths) {
			t.Errorf("%+v: %q: %q, want %q", tc.opts, tc.query, pathsOf(r), tc.paths)
		}
	}
}

func TestUnmatched(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	tests := []struct {
		query     string
		unmatched []string
	}{
		{"invoice retry", nil},
		{"invoice zanzibar", []string{"zanzibar"}},
		{"zanzibar quokka invoice", []string{"zanzibar", "quokka"}},
		// short words are not significant
		{"invoice xyz", nil},
		{"invoice qux", nil},
		// prefix matches count, but only for the last word
		{"retry invo", nil},
		{"invo retry", []string{"invo"}},
		// fuzzy matches do not count
		{"invoise", []string{"invois"}},
		{"retry catalig", []string{"catalig"}},
		// CJK: two characters or more are significant
		{"税", nil},
		{"税务", []string{"税务"}},
		{"가치관", []string{"가치관"}},
	}
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		if !reflect.DeepEqual(r.Unmatched, tc.unmatched) {
			t.Errorf("%q: unmatched %q, want %q", tc.query, r.Unmatched, tc.unmatched)
		}
	}
	// A term found only in documents beyond the limit is not unmatched.
	r := mustSearch(t, x, "invoice numbering", 1)
	if r.Mode != ModeAnd || len(r.Unmatched) != 0 {
		t.Errorf("limit 1: %+v", r)
	}
	r = mustSearch(t, x, "catalog jitter", 1)
	if r.Mode != ModeOr || r.Total != 2 || len(r.Hits) != 1 || len(r.Unmatched) != 0 {
		t.Errorf("or pass, limit 1: mode %s total %d hits %q unmatched %q", r.Mode, r.Total, pathsOf(r), r.Unmatched)
	}
}

func TestTerms(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	tests := []struct {
		query string
		terms []string
	}{
		{"Invoices retried", []string{"invoic", "retri"}},
		{"retry retries retried", []string{"retri"}},
		{"the invoice_retry_policy of config.yaml", []string{"invoic", "retri", "polici", "config-yaml"}},
		{"v1.8 3.14", []string{"v1.8", "3.14"}},
		{"中文 搜索 가치관이", []string{"中文", "搜索", "가치관이"}},
		{"", []string{}},
	}
	for _, tc := range tests {
		if got := mustSearch(t, x, tc.query, 0).Terms; !reflect.DeepEqual(got, tc.terms) {
			t.Errorf("%q: terms %q, want %q", tc.query, got, tc.terms)
		}
	}
}

func TestAnalysisInSearch(t *testing.T) {
	docs := []Doc{
		{Path: "webhooks.md", Content: "All webhooks have automatic retries."},
		{Path: "engineering/billing/invoice_retry_policy.md", Title: "Dunning"},
		{Path: "config.md", Content: "Edit config.yaml then restart."},
		{Path: "release.md", Content: "Version v1.8 ships the new parser; pi is 3.14 here."},
		{Path: "stop.md", Content: "The and of is to be."},
		{Path: "possessive.md", Content: "The team's calendar."},
		{Path: "hyphen.md", Content: "The rate-limit/backoff settings."},
	}
	x := newIndex(t, Options{}, docs...)
	tests := []struct {
		query string
		paths []string
	}{
		// the policy's path has "retry" in it
		{"retry", []string{"webhooks.md", "engineering/billing/invoice_retry_policy.md"}},
		{"retried", []string{"webhooks.md", "engineering/billing/invoice_retry_policy.md"}},
		{"retrying", []string{"webhooks.md", "engineering/billing/invoice_retry_policy.md"}},
		{"automatically retried webhook", []string{"webhooks.md"}},
		{"invoice_retry_policy", []string{"engineering/billing/invoice_retry_policy.md"}},
		{"invoice policy", []string{"engineering/billing/invoice_retry_policy.md"}},
		{"billing", []string{"engineering/billing/invoice_retry_policy.md"}},
		{"yaml", []string{"config.md"}},
		{"config.yaml", []string{"config.md"}},
		{"v1.8", []string{"release.md"}},
		{"3.14", []string{"release.md"}},
		{"v1", []string{}},
		{"14", []string{}},
		// stop words are neither indexed nor searched
		{"the", []string{}},
		{"team's", []string{"possessive.md"}},
		{"team", []string{"possessive.md"}},
		{"limit", []string{"hyphen.md"}},
		{"rate-limit", []string{"hyphen.md"}},
		{"RATE LIMIT", []string{"hyphen.md"}},
	}
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		if !reflect.DeepEqual(firstPass(r), tc.paths) {
			t.Errorf("%q: %q, want %q", tc.query, firstPass(r), tc.paths)
		}
		if len(tc.paths) > 0 && r.Mode == ModeOr {
			t.Errorf("%q: mode %s", tc.query, r.Mode)
		}
	}
}

func TestCJK(t *testing.T) {
	docs := []Doc{
		{Path: "zh/search.md", Title: "搜索", Content: "搜索引擎的索引结构很重要。"},
		{Path: "zh/billing.md", Title: "账单", Content: "发票在付款失败后会重试三次。"},
		{Path: "ko/culture.md", Title: "팀 가치관", Content: "우리 팀의 가치관은 정직입니다."},
		{Path: "ja/retry.md", Title: "再試行", Content: "請求書はカタカナでインボイスと書きます。"},
		{Path: "en/values.md", Title: "Values", Content: "Our values are honesty and care."},
	}
	x := newIndex(t, Options{}, docs...)
	tests := []struct {
		query string
		mode  string
		paths []string
	}{
		{"索引", ModeAnd, []string{"zh/search.md"}},
		{"搜索引擎", ModeAnd, []string{"zh/search.md"}},
		// 3 of 5 bigrams are enough for the and pass
		{"搜索引擎优化", ModeAnd, []string{"zh/search.md"}},
		// a single character inside a longer run
		{"擎", ModeAnd, []string{"zh/search.md"}},
		{"票", ModeAnd, []string{"zh/billing.md"}},
		{"发票 重试", ModeAnd, []string{"zh/billing.md"}},
		// 2 of 3 bigrams (发票, 重试; not 票重)
		{"发票重试", ModeAnd, []string{"zh/billing.md"}},
		{"发票重试三次", ModeAnd, []string{"zh/billing.md"}},
		// 1 of 3 bigrams: only in the or pass
		{"发票打印", ModeOr, []string{"zh/billing.md"}},
		// Korean with a particle finds the bare word (2 of 3 bigrams)
		{"가치관이", ModeAnd, []string{"ko/culture.md"}},
		{"가치관", ModeAnd, []string{"ko/culture.md"}},
		{"가치", ModeAnd, []string{"ko/culture.md"}},
		{"정직", ModeAnd, []string{"ko/culture.md"}},
		{"インボイス", ModeAnd, []string{"ja/retry.md"}},
		{"再試行", ModeAnd, []string{"ja/retry.md"}},
		// mixed with English
		{"values 가치관이", ModeOr, []string{"en/values.md", "ko/culture.md"}},
		{"values 가치관이 zanzibar", ModeOr, []string{"en/values.md", "ko/culture.md"}},
	}
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		got := pathsOf(r)
		if tc.mode == ModeOr {
			sort.Strings(got)
		}
		if r.Mode != tc.mode || !reflect.DeepEqual(got, tc.paths) {
			t.Errorf("%q: mode %s %q, want mode %s %q", tc.query, r.Mode, pathsOf(r), tc.mode, tc.paths)
		}
		for _, h := range r.Hits {
			if len(h.Matched) == 0 {
				t.Errorf("%q: %s has no matched terms", tc.query, h.Path)
			}
		}
		if len(r.Hits) > 0 && len(r.Unmatched) != 0 && !strings.Contains(tc.query, "zanzibar") {
			t.Errorf("%q: unmatched %q", tc.query, r.Unmatched)
		}
	}
	// With or without its particle, the Korean word matches whole.
	whole := hitOf(t, mustSearch(t, x, "가치관", 0), "ko/culture.md")
	part := hitOf(t, mustSearch(t, x, "가치관이", 0), "ko/culture.md")
	if whole.Raw != part.Raw {
		t.Errorf("가치관 raw %v, 가치관이 raw %v: both should match the word whole", whole.Raw, part.Raw)
	}
}

func TestScaffolding(t *testing.T) {
	x := newIndex(t, Options{}, append(corpus(), Doc{Path: "notes/times.md", Title: "Many times", Content: "How many times did it happen?"})...)
	tests := []struct{ question, plain string }{
		{"how many times are invoices retried", "invoices retried"},
		{"How many times are invoices retried?", "invoices retried"},
		{"can you tell me the invoice retry policy", "invoice retry policy"},
		{"please remind me how often HTTP calls are retried", "HTTP calls are retried"},
		{"do you remember the catalog", "catalog"},
	}
	for _, tc := range tests {
		q, p := mustSearch(t, x, tc.question, 0), mustSearch(t, x, tc.plain, 0)
		if !reflect.DeepEqual(q, p) {
			t.Errorf("%q: %+v\nwant the result of %q: %+v", tc.question, q, tc.plain, p)
		}
	}
	// Only scaffolding: its words are searched.
	r := mustSearch(t, x, "how many times", 0)
	if !reflect.DeepEqual(r.Terms, []string{"mani", "time"}) || !reflect.DeepEqual(firstPass(r), []string{"notes/times.md"}) || r.Mode != ModeFill {
		t.Errorf("how many times: terms %q hits %q mode %s", r.Terms, pathsOf(r), r.Mode)
	}
}

func TestKindAndStoredFields(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	r := mustSearch(t, x, "knowledge", 0)
	if len(r.Hits) != 1 {
		t.Fatalf("got %q", pathsOf(r))
	}
	h := r.Hits[0]
	if h.Path != "context.md" || h.Kind != "context" || h.Title != "Company knowledge" || h.Summary != "Engineering and product notes." {
		t.Errorf("hit %+v", h)
	}
	h = mustSearch(t, x, "catamaran", 0).Hits[0]
	if h.Kind != "entry" || h.Title != "Boats" || h.Summary != "" || h.Excerpt != "A catamaran has two hulls." {
		t.Errorf("hit %+v", h)
	}
}

var queries = []string{
	"invoice", "invoice retry", "retried", "invo", "invoise", "retry jitter zanzibar", "cata",
	"config.yaml", "v1.8", "engineering", "how many times are invoices retried", "payment subscription",
}

// allResults runs queries and returns their results for comparison.
func allResults(t *testing.T, x *Index) []Result {
	t.Helper()
	var out []Result
	for _, q := range queries {
		out = append(out, mustSearch(t, x, q, 0))
	}
	return out
}

func diffResults(t *testing.T, name string, got, want []Result) {
	t.Helper()
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: %q:\n got %+v\nwant %+v", name, queries[i], got[i], want[i])
		}
	}
}

// The same documents give the same results whatever the order and batches
// they were put in: scores are bit-identical and ties go by path.
func TestDeterministic(t *testing.T) {
	docs := corpus()
	// duplicates of one document under other paths, to have ties
	for _, p := range []string{"zz/copy.md", "aa/copy.md", "mm/copy.md"} {
		d := docs[0]
		d.Path = p
		docs = append(docs, d)
	}
	want := allResults(t, newIndex(t, Options{}, docs...))

	rev := slices.Clone(docs)
	slices.Reverse(rev)
	diffResults(t, "reversed batch", allResults(t, newIndex(t, Options{}, rev...)), want)

	for _, order := range [][]Doc{docs, rev} {
		x := newIndex(t, Options{})
		for _, d := range order {
			if err := x.Put(d); err != nil {
				t.Fatal(err)
			}
		}
		diffResults(t, "one at a time", allResults(t, x), want)
	}

	// Interleaved order in two batches.
	var odd, even []Doc
	for i, d := range docs {
		if i%2 == 0 {
			even = append(even, d)
		} else {
			odd = append(odd, d)
		}
	}
	x := newIndex(t, Options{}, odd...)
	if err := x.Put(even...); err != nil {
		t.Fatal(err)
	}
	diffResults(t, "two batches", allResults(t, x), want)

	// Searching twice gives the same answer.
	diffResults(t, "again", allResults(t, x), want)

	// Ties by path: the copies (whose path words match no query) score the
	// same and come one after the other in path order; the original also
	// matches by path, so it ranks above them.
	r := want[1] // "invoice retry"
	wantOrder := []string{docs[0].Path, "aa/copy.md", "mm/copy.md", "zz/copy.md"}
	if got := pathsOf(r); len(got) < 4 || !reflect.DeepEqual(got[:4], wantOrder) {
		t.Fatalf("ties: %q, want %q first", got, wantOrder)
	}
	if r.Hits[0].Raw <= r.Hits[1].Raw {
		t.Errorf("original %v not above its copies %v", r.Hits[0].Raw, r.Hits[1].Raw)
	}
	if r.Hits[1].Raw != r.Hits[2].Raw || r.Hits[2].Raw != r.Hits[3].Raw || r.Hits[1].Score != r.Hits[3].Score {
		t.Errorf("copies do not tie: %v %v %v", r.Hits[1].Raw, r.Hits[2].Raw, r.Hits[3].Raw)
	}
}

// Put replaces a document by path: its old words no longer match it, and
// the BM25 statistics are those of the live documents only.
func TestPutReplaces(t *testing.T) {
	docs := corpus()
	x := newIndex(t, Options{}, docs...)
	old := docs[0]
	repl := Doc{Path: old.Path, Title: "Payment reminders", Content: "Customers get a reminder e-mail before each payment attempt."}
	extra := Doc{Path: "engineering/billing/extra.md", Title: "Extra", Content: "Another invoice note about retry jitter."}
	if err := x.Put(repl); err != nil {
		t.Fatal(err)
	}
	if err := x.Put(extra); err != nil {
		t.Fatal(err)
	}
	if err := x.Put(extra); err != nil { // a second identical put changes nothing
		t.Fatal(err)
	}
	if err := x.Delete(docs[2].Path, "no/such/path.md"); err != nil {
		t.Fatal(err)
	}
	final := append([]Doc{repl, extra}, docs[1], docs[3], docs[4], docs[5], docs[6])
	if got, want := x.Count(), len(final); got != want {
		t.Errorf("count %d, want %d", got, want)
	}
	r := mustSearch(t, x, "dunning", 0)
	if len(r.Hits) != 0 || !reflect.DeepEqual(r.Unmatched, []string{"dun"}) {
		t.Errorf("old tag still matches: %q unmatched %q", pathsOf(r), r.Unmatched)
	}
	r = mustSearch(t, x, "reminder", 0)
	if !reflect.DeepEqual(pathsOf(r), []string{old.Path}) || r.Hits[0].Title != "Payment reminders" {
		t.Errorf("new words: %+v", r)
	}
	// Scores equal those of an index built fresh with the final documents.
	diffResults(t, "replaced vs fresh", allResults(t, x), allResults(t, newIndex(t, Options{}, final...)))
}

func TestPutDuplicatesInOneBatch(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "a.md", Content: "first version"},
		Doc{Path: "b.md", Content: "other"},
		Doc{Path: "a.md", Content: "second version"},
	)
	if x.Count() != 2 {
		t.Errorf("count %d, want 2", x.Count())
	}
	if r := mustSearch(t, x, "first", 0); len(r.Hits) != 0 {
		t.Errorf("first: %q", pathsOf(r))
	}
	if r := mustSearch(t, x, "second", 0); !reflect.DeepEqual(pathsOf(r), []string{"a.md"}) {
		t.Errorf("second: %q", pathsOf(r))
	}
	diffResults(t, "duplicates vs fresh", allResults(t, x),
		allResults(t, newIndex(t, Options{}, Doc{Path: "b.md", Content: "other"}, Doc{Path: "a.md", Content: "second version"})))
}

// TestPutInBatches puts more text than one bluge batch holds: every
// document is indexed, a path repeated across batches keeps its last
// version, and scores are those of documents put one at a time.
func TestPutInBatches(t *testing.T) {
	filler := strings.Repeat("ledger entry reconciled ", maxBatchBytes/24/3)
	var docs []Doc
	for i := range 8 {
		docs = append(docs, Doc{Path: fmt.Sprintf("d/t/p%d.md", i), Title: fmt.Sprintf("Part %d", i), Content: fmt.Sprintf("marker%d %s", i, filler)})
	}
	docs = append(docs, Doc{Path: "d/t/p0.md", Title: "Part 0", Content: "marker0 rewritten " + filler})
	x := newIndex(t, Options{}, docs...)
	if x.Count() != 8 {
		t.Fatalf("count %d, want 8", x.Count())
	}
	for i := range 8 {
		if r := mustSearch(t, x, fmt.Sprintf("marker%d", i), 0); !reflect.DeepEqual(pathsOf(r), []string{fmt.Sprintf("d/t/p%d.md", i)}) {
			t.Errorf("marker%d: %q", i, pathsOf(r))
		}
	}
	if r := mustSearch(t, x, "rewritten", 0); !reflect.DeepEqual(pathsOf(r), []string{"d/t/p0.md"}) {
		t.Errorf("the last version of p0: %q", pathsOf(r))
	}
	one := newIndex(t, Options{})
	for _, d := range docs[1:] {
		if err := one.Put(d); err != nil {
			t.Fatal(err)
		}
	}
	diffResults(t, "batched vs one at a time", allResults(t, x), allResults(t, one))
}

func TestDeleteAndCount(t *testing.T) {
	docs := corpus()
	x := newIndex(t, Options{})
	if x.Count() != 0 {
		t.Fatalf("empty count %d", x.Count())
	}
	if r := mustSearch(t, x, "invoice", 0); r.Total != 0 || len(r.Hits) != 0 || !reflect.DeepEqual(r.Unmatched, []string{"invoic"}) {
		t.Errorf("empty index: %+v", r)
	}
	if err := x.Put(); err != nil {
		t.Fatal(err)
	}
	if err := x.Put(docs...); err != nil {
		t.Fatal(err)
	}
	if x.Count() != len(docs) {
		t.Errorf("count %d, want %d", x.Count(), len(docs))
	}
	if err := x.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete("no/such.md"); err != nil {
		t.Fatal(err)
	}
	if x.Count() != len(docs) {
		t.Errorf("count %d after deleting nothing, want %d", x.Count(), len(docs))
	}
	if err := x.Delete(docs[0].Path, docs[0].Path, docs[1].Path); err != nil {
		t.Fatal(err)
	}
	if x.Count() != len(docs)-2 {
		t.Errorf("count %d, want %d", x.Count(), len(docs)-2)
	}
	r := mustSearch(t, x, "invoice", 0)
	if len(r.Hits) != 0 || r.Total != 0 || !reflect.DeepEqual(r.Unmatched, []string{"invoic"}) {
		t.Errorf("deleted documents still found: %+v", r)
	}
	// Prefix expansions of deleted words find nothing either.
	if r := mustSearch(t, x, "invo", 0); len(r.Hits) != 0 || !reflect.DeepEqual(r.Unmatched, []string{"invo"}) {
		t.Errorf("invo after delete: %+v", r)
	}
	diffResults(t, "deleted vs fresh", allResults(t, x), allResults(t, newIndex(t, Options{}, docs[2:]...)))

	// Put back: found again.
	if err := x.Put(docs[0]); err != nil {
		t.Fatal(err)
	}
	if r := mustSearch(t, x, "invoice", 0); !reflect.DeepEqual(pathsOf(r), []string{docs[0].Path}) {
		t.Errorf("after put back: %q", pathsOf(r))
	}
}

func TestPutEmptyPath(t *testing.T) {
	x := newIndex(t, Options{})
	err := x.Put(Doc{Path: "a.md", Content: "alpha"}, Doc{Content: "no path"})
	if err == nil {
		t.Fatal("put of a document without path succeeded")
	}
	// The batch is rejected as a whole.
	if x.Count() != 0 {
		t.Errorf("count %d after a failed put", x.Count())
	}
}

func TestClose(t *testing.T) {
	x, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Put(corpus()...); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := x.Search("invoice", 0); !errors.Is(err, ErrClosed) {
		t.Errorf("search after close: %v", err)
	}
	if err := x.Put(Doc{Path: "a.md"}); !errors.Is(err, ErrClosed) {
		t.Errorf("put after close: %v", err)
	}
	if err := x.Delete("a.md"); !errors.Is(err, ErrClosed) {
		t.Errorf("delete after close: %v", err)
	}
}

// Searches run in parallel with writes (run with -race to check locking).
func TestConcurrent(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				r, err := x.Search(queries[(g+i)%len(queries)], 5)
				if err != nil {
					t.Error(err)
					return
				}
				checkResult(t, queries[(g+i)%len(queries)], r)
			}
		}()
	}
	for i := range 20 {
		p := fmt.Sprintf("tmp/%d.md", i%3)
		if err := x.Put(Doc{Path: p, Content: "invoice retry note"}); err != nil {
			t.Fatal(err)
		}
		if i%4 == 3 {
			if err := x.Delete(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
}

// When fewer documents than the limit match every term, documents matching
// some terms fill the slots left, after the full matches even when they
// score higher, and never beyond the limit.
func TestOrFill(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "both.md", Title: "Notes", Content: "The invoice retry schedule, described at length in a long paragraph about many unrelated matters of billing and accounting."},
		Doc{Path: "invoice.md", Title: "Invoice", Content: "invoice invoice invoice"},
		Doc{Path: "retry.md", Title: "Retry", Content: "retry retry"},
		Doc{Path: "other.md", Title: "Other", Content: "nothing to see"},
	)
	r := mustSearch(t, x, "invoice retry", 0)
	if r.Mode != ModeFill || r.Total != 3 || !reflect.DeepEqual(pathsOf(r)[:1], []string{"both.md"}) || len(r.Hits) != 3 {
		t.Fatalf("mode %s total %d hits %q, want and+or, 3, both.md first", r.Mode, r.Total, pathsOf(r))
	}
	if !r.Hits[0].AllTerms || r.Hits[1].AllTerms || r.Hits[2].AllTerms {
		t.Errorf("AllTerms %v %v %v, want only the first", r.Hits[0].AllTerms, r.Hits[1].AllTerms, r.Hits[2].AllTerms)
	}
	if r.Hits[1].Raw <= r.Hits[0].Raw {
		t.Errorf("the fill hit %s (%v) does not outscore %s (%v): the test no longer shows the order", r.Hits[1].Path, r.Hits[1].Raw, r.Hits[0].Path, r.Hits[0].Raw)
	}
	if r := mustSearch(t, x, "invoice retry", 2); len(r.Hits) != 2 || r.Hits[0].Path != "both.md" || r.Total != 3 {
		t.Errorf("limit 2: hits %q total %d", pathsOf(r), r.Total)
	}
	// The AND pass fills the limit: no OR pass.
	if r := mustSearch(t, x, "invoice retry", 1); r.Mode != ModeAnd || !reflect.DeepEqual(pathsOf(r), []string{"both.md"}) {
		t.Errorf("limit 1: mode %s hits %q", r.Mode, pathsOf(r))
	}
}

// A context.md repeats its folder's words; it ranks after every matching
// entry, fills the slots they leave, and is found when no entry matches.
func TestContextsLast(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "billing/context.md", Kind: kindContext, Title: "Billing invoices", Content: "Invoices: invoice numbering, invoice retries, invoice archive."},
		Doc{Path: "billing/numbering.md", Title: "Numbering", Content: "Each invoice gets the next number."},
		Doc{Path: "billing/retries.md", Title: "Retries", Content: "A failed invoice is retried after an hour."},
		Doc{Path: "context.md", Kind: kindContext, Title: "Overview", Content: "This memory holds billing notes and an archive."},
	)
	r := mustSearch(t, x, "invoice", 0)
	if got := pathsOf(r); !reflect.DeepEqual(got, []string{"billing/numbering.md", "billing/retries.md", "billing/context.md"}) && !reflect.DeepEqual(got, []string{"billing/retries.md", "billing/numbering.md", "billing/context.md"}) {
		t.Errorf("invoice: %q, want both entries, then the context", got)
	}
	if h := hitOf(t, r, "billing/context.md"); h.Raw <= r.Hits[0].Raw {
		t.Errorf("the context (%v) does not outscore the entries (%v): the test no longer shows the order", h.Raw, r.Hits[0].Raw)
	}
	if r.Total != 3 {
		t.Errorf("invoice: total %d, want 3 (contexts count)", r.Total)
	}
	if r := mustSearch(t, x, "invoice", 2); len(r.Hits) != 2 || r.Hits[0].Kind == kindContext || r.Hits[1].Kind == kindContext || r.Total != 3 {
		t.Errorf("invoice, limit 2: %q total %d, want the two entries of 3 matches", pathsOf(r), r.Total)
	}
	if r := mustSearch(t, x, "archive", 0); !reflect.DeepEqual(sorted(pathsOf(r)), []string{"billing/context.md", "context.md"}) {
		t.Errorf("archive: %q, want the contexts", pathsOf(r))
	}
}

// Rank gives Search's hits, scores, Total, Mode and Unmatched without
// building excerpts, and Materialize gives any hits kept from it, reordered
// and cut as a caller's reranking does, the matched terms and excerpt
// Search gives them.
func TestRankThenMaterialize(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	tests := []struct {
		query     string
		unmatched []string
	}{
		{"invoice retry", nil},    // and+or fill
		{"numbering jitter", nil}, // or pass
		{"invoice zanzibar", []string{"zanzibar"}},
		{"invoise", []string{"invois"}},          // matched within one edit only
		{"boats zanzibar", []string{"zanzibar"}}, // "boat" is only in a title
		{"retries backoff", nil},                 // "backoff" is also a keyword
		{"engineering product notes", nil},       // the context
		{`"legal entity" numbers`, nil},
		{"cata", nil},
		{"zanzibar", []string{"zanzibar"}},
		{"numbers dunning", nil}, // "dunning" is only a tag
		// "entr" is a prefix of the kind of every entry, which is no word
		// of theirs.
		{"invoice entr", []string{"entr"}},
	}
	const pool = 50
	for _, tc := range tests {
		full := mustSearch(t, x, tc.query, pool)
		if !reflect.DeepEqual(full.Unmatched, tc.unmatched) {
			t.Errorf("%q: unmatched %q, want %q", tc.query, full.Unmatched, tc.unmatched)
		}
		r, err := x.Rank(tc.query, pool, FullMatchesFirst)
		if err != nil {
			t.Fatalf("Rank(%q): %v", tc.query, err)
		}
		bare := full
		bare.Hits = slices.Clone(full.Hits)
		for i := range bare.Hits {
			bare.Hits[i].Matched, bare.Hits[i].Excerpt = nil, ""
		}
		if !reflect.DeepEqual(r.Result, bare) {
			t.Errorf("%q: ranked\n got %+v\nwant %+v", tc.query, r.Result, bare)
		}
		for keep := 1; keep <= len(r.Hits); keep++ {
			kept := slices.Clone(r.Hits)
			slices.Reverse(kept)
			kept = kept[:keep]
			r.Materialize(kept)
			for _, h := range kept {
				if want := hitOf(t, full, h.Path); !reflect.DeepEqual(h, want) {
					t.Errorf("%q, %d kept: got %+v\nwant %+v", tc.query, keep, h, want)
				}
			}
		}
		// The hits of a smaller limit are the first of the pool's, and
		// Unmatched does not depend on how many hits are returned.
		for limit := 1; limit <= len(full.Hits); limit++ {
			small := mustSearch(t, x, tc.query, limit)
			if !reflect.DeepEqual(small.Hits, full.Hits[:limit]) || !reflect.DeepEqual(small.Unmatched, full.Unmatched) {
				t.Errorf("%q, limit %d: hits %+v unmatched %q, want %+v and %q", tc.query, limit, small.Hits, small.Unmatched, full.Hits[:limit], full.Unmatched)
			}
		}
	}
}

// Says counts the query's terms a text holds as written: stems and
// compounds count, a prefix or fuzzy expansion does not, a phrase counts by
// all of its words.
func TestRankedSays(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	tests := []struct {
		query, text string
		want        int
	}{
		{"pottery class", "Pottery classes on Tuesdays!", 2},
		{"pottery class", "A classic pottery course.", 1}, // "class" is expanded as a prefix in the search, not here
		{"invoice retries", "The invoice was retried twice.", 2},
		{"import-cycle", "an import cycle again", 1},
		{"import-cycle", "an import again", 0}, // a compound needs every part
		{`"blue bowl" glaze`, "a blue bowl with no glaze", 2},
		{`"blue bowl" glaze`, "a bowl, blue", 1}, // a phrase's words, in any order
		{`"blue bowl" glaze`, "a blue cup", 0},
		{"invoise", "invoice", 0}, // within one edit only
		{"pottery", "", 0},
	}
	for _, tc := range tests {
		r, err := x.Rank(tc.query, 10, FullMatchesFirst)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Says(Analyze(tc.text)); got != tc.want {
			t.Errorf("%q says of %q: %d, want %d", tc.text, tc.query, got, tc.want)
		}
	}
}

// Rank by score puts the entries matching some terms among those matching
// all of them, by score alone, context files still last; the same hits as
// Search's OR pass, and the same total.
func TestRankByScore(t *testing.T) {
	x := newIndex(t, Options{}, corpus()...)
	grouped := mustSearch(t, x, "invoice retry", 0)
	r, err := x.Rank("invoice retry", 0, ByScore)
	if err != nil {
		t.Fatal(err)
	}
	if grouped.Mode != ModeFill || r.Mode != ModeOr || r.Total != grouped.Total || len(r.Hits) != len(grouped.Hits) {
		t.Fatalf("modes %s, %s; totals %d, %d; hits %d, %d", grouped.Mode, r.Mode, grouped.Total, r.Total, len(grouped.Hits), len(r.Hits))
	}
	for i, h := range r.Hits {
		if h.AllTerms || i > 0 && rankGroup(r.Hits[i-1]) == rankGroup(h) && r.Hits[i-1].Raw < h.Raw {
			t.Errorf("hit %d %s: AllTerms %v, raw %v after %v: want one group by score", i, h.Path, h.AllTerms, h.Raw, r.Hits[max(i-1, 0)].Raw)
		}
		if i > 0 && r.Hits[i-1].Kind == kindContext && h.Kind != kindContext {
			t.Errorf("hit %d %s after a context", i, h.Path)
		}
	}
	// A single term: every match holds it, as in Search.
	one, err := x.Rank("invoice", 0, ByScore)
	if err != nil {
		t.Fatal(err)
	}
	if all := mustSearch(t, x, "invoice", 0); !reflect.DeepEqual(pathsOf(one.Result), pathsOf(all)) || one.Mode != ModeAnd {
		t.Errorf("one term: %q (%s), want %q", pathsOf(one.Result), one.Mode, pathsOf(all))
	}
}

// A pass ranks without the terms' locations and reads them for the
// documents it keeps alone: the same documents, scores and locations as a
// search collecting locations for every match (as run did), with words,
// prefixes, fuzzy words and phrases, in one segment and in several.
func TestRunLocationsAsOnePass(t *testing.T) {
	docs, vocab := chatCorpus(600)
	for _, segs := range []int{1, 3} {
		x := newIndex(t, Options{})
		for i := range segs {
			if err := x.Put(docs[i*len(docs)/segs : (i+1)*len(docs)/segs]...); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(5, uint64(segs)))
		for range 40 {
			words := []string{vocab[rng.IntN(300)], vocab[rng.IntN(1500)]}
			switch rng.IntN(3) {
			case 0:
				words[1] = words[1][:len(words[1])-1] + "x" // one edit away
			case 1:
				words = []string{`"` + strings.Join(strings.Fields(docs[rng.IntN(len(docs))].Content)[2:4], " ") + `"`}
			}
			q := strings.Join(words, " ")
			x.mu.RLock()
			c, err := x.counter()
			if err != nil {
				t.Fatal(err)
			}
			for _, and := range []bool{true, false} {
				bq := x.buildQuery(x.parse(q), and)
				got, err := x.run(bq, 20, c)
				if err != nil {
					t.Fatal(err)
				}
				s, err := x.searcher(bq)
				if err != nil {
					t.Fatal(err)
				}
				want, err := top(s, 20)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%q (and %v): %d documents, want %d", q, and, len(got), len(want))
				}
				for i, m := range want {
					// The locations as bluge gathers them for a match, by
					// field and term, without repeats.
					var gathered bsearch.DocumentMatch
					gathered.FieldTermLocations = slices.Clone(got[i].locs)
					gathered.Complete(nil)
					if got[i].raw != m.Score || !reflect.DeepEqual(gathered.Locations, m.Locations) {
						t.Errorf("%q (and %v), document %d (%s): score %v and locations %s, want %v and %s", q, and, i, got[i].path, got[i].raw, showLocs(gathered.Locations), m.Score, showLocs(m.Locations))
					}
				}
			}
			x.mu.RUnlock()
		}
	}
}

func showLocs(locs bsearch.FieldTermLocationMap) string {
	var b strings.Builder
	for _, f := range slices.Sorted(maps.Keys(locs)) {
		for _, term := range slices.Sorted(maps.Keys(locs[f])) {
			fmt.Fprintf(&b, "%s:%s", f, term)
			for _, l := range locs[f][term] {
				fmt.Fprintf(&b, " %+v", *l)
			}
			b.WriteString("; ")
		}
	}
	return b.String()
}

// A word's expansions are kept from one question to the next (Index.words)
// only while the index stays as it was: a write since, adding a word the
// expansion reaches or deleting the one it used, is seen by the next
// question.
func TestExpansionsFollowWrites(t *testing.T) {
	x := newIndex(t, Options{}, Doc{Path: "a.md", Title: "Invoices", Content: "invoice retries"})
	paths := func(q string) []string {
		var ps []string
		for _, h := range mustSearch(t, x, q, 10).Hits {
			ps = append(ps, h.Path)
		}
		sort.Strings(ps)
		return ps
	}
	if got := paths("invo"); !reflect.DeepEqual(got, []string{"a.md"}) {
		t.Fatalf("invo: %v, want a.md", got)
	}
	if got := paths("harbours"); len(got) != 0 {
		t.Fatalf("harbours: %v, want nothing", got)
	}
	if err := x.Put(Doc{Path: "b.md", Title: "Calls", Content: "an invocation failed"}, Doc{Path: "c.md", Title: "Ports", Content: "the harbour"}); err != nil {
		t.Fatal(err)
	}
	if got := paths("invo"); !reflect.DeepEqual(got, []string{"a.md", "b.md"}) {
		t.Errorf("invo after a write: %v, want a.md and b.md", got)
	}
	if got := paths("harbours"); !reflect.DeepEqual(got, []string{"c.md"}) {
		t.Errorf("harbours after a write: %v, want c.md (a fuzzy expansion)", got)
	}
	if err := x.Delete("c.md"); err != nil {
		t.Fatal(err)
	}
	if got := paths("harbours"); len(got) != 0 {
		t.Errorf("harbours after c.md was deleted: %v, want nothing", got)
	}
}
