package retrieve

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestQueryCacheIsBounded(t *testing.T) {
	c := newQueryCache(true)
	for i := range cacheSize + 10 {
		q := fmt.Sprint(i)
		c.put(q, q, 5, "", outcome{res: api.QueryResult{Query: q}})
	}
	if len(c.answers) != cacheSize || len(c.order) != cacheSize {
		t.Fatalf("cache holds %d answers (%d keys), want %d", len(c.answers), len(c.order), cacheSize)
	}
	if _, _, ok := c.lookup("0", "0", 5, nil); ok {
		t.Fatal("the oldest answer should have been dropped")
	}
	newest := fmt.Sprint(cacheSize + 9)
	if r, _, ok := c.lookup(newest, newest, 5, nil); !ok || r.res.Tier != api.TierExactCache {
		t.Fatal("the newest answer is missing")
	}
	c.put("5000", "5000", 5, "", outcome{res: api.QueryResult{}}) // replacing keeps the size
	c.put("5000", "5000", 5, "", outcome{res: api.QueryResult{}})
	if len(c.order) != cacheSize {
		t.Fatalf("re-putting a key grew the order to %d", len(c.order))
	}
}

func TestQueryTokensDropStopWords(t *testing.T) {
	got := queryTokens(normalizeQuery("How many times are the failed invoices retried? Retried!"))
	if want := "failed invoices many retried times"; strings.Join(got, " ") != want {
		t.Fatalf("tokens = %v, want %s", got, want)
	}
}

// The fuzzy tier serves a cached direct answer at Jaccard ≥ 0.6 of the
// stop-word-filtered words, for queries of two such words or more, at the
// same limit; it never serves lists or out-of-domain verdicts.
func TestFuzzyCacheBoundary(t *testing.T) {
	c := newQueryCache(true)
	direct := api.QueryResult{TierName: "direct", Reason: "direct answer: top score 0.95 ≥ 0.93"}
	put := func(q, answered string, r api.QueryResult) { c.put(q, normalizeQuery(q), 5, answered, outcome{res: r}) }
	look := func(q string, limit int) (api.QueryResult, bool) {
		o, _, ok := c.lookup(q, normalizeQuery(q), limit, nil)
		return o.res, ok
	}
	// {card, expiry, reminders, sent, customers}: 5 words.
	put("when are card expiry reminders sent to customers", "a.md", direct)

	// 3 shared of 5 ∪ {} = 3/5 = 0.6: a hit, exactly at the boundary.
	r, ok := look("card expiry reminders", 5)
	if !ok || r.Tier != api.TierFuzzyCache || r.TierName != "fuzzy-cache" {
		t.Fatalf("Jaccard 0.6: %+v, %v; want a tier-1 hit", r, ok)
	}
	if !strings.Contains(r.Reason, `"when are card expiry reminders sent to customers"`) || !strings.Contains(r.Reason, "Jaccard 0.60") {
		t.Fatalf("reason %q should name the cached query and the Jaccard value", r.Reason)
	}
	// 3 shared of 6 = 0.5: a miss.
	if r, ok := look("card expiry reminders schedule", 5); ok {
		t.Fatalf("Jaccard 0.5 hit: %+v", r)
	}
	// 4 shared of 6 ≈ 0.67 with stop words and punctuation ignored: a hit.
	if _, ok := look("Card expiry reminders: when are they sent?", 5); !ok {
		t.Fatal("Jaccard 0.67 missed")
	}
	// Another limit holds another number of results.
	if _, ok := look("card expiry reminders", 3); ok {
		t.Fatal("a hit for another limit")
	}
	// One-word queries never match fuzzily, though their words are the same (Jaccard 1).
	put("reminders", "a.md", direct)
	if _, ok := look("the reminders", 5); ok {
		t.Fatal("a one-word query was answered by the fuzzy tier")
	}
	// Lists and out-of-domain verdicts are not reused fuzzily.
	put("lisbon restaurant bookings policy", "", api.QueryResult{TierName: "results", NeedsLLM: true})
	if _, ok := look("lisbon restaurant bookings", 5); ok {
		t.Fatal("a listed-results answer was reused by the fuzzy tier")
	}
	// Clearing (any write to the tree) drops both tiers.
	c.clear()
	if _, ok := look("card expiry reminders", 5); ok {
		t.Fatal("hit after clear")
	}
}

// Queries differing only in case, spacing and punctuation share a cache
// slot; marks the analyzer reads (phrases, c++, v1.8, .net) keep them apart.
func TestNormalizeQuery(t *testing.T) {
	same := [][2]string{
		{"What's the pool size?", "what's the   pool size"},
		{"Is it written in C?", "is it written in c"},
		{"“connection pool”", `"connection pool"`},
		{"node.js, please", "node.js please"},
	}
	for _, p := range same {
		if a, b := normalizeQuery(p[0]), normalizeQuery(p[1]); a != b {
			t.Errorf("%q → %q and %q → %q, want one slot", p[0], a, p[1], b)
		}
	}
	apart := [][2]string{
		{"C++", "C"},
		{"C#", "C"},
		{`"connection pool"`, "connection pool"},
		{"v1.8", "v1 8"},
		{".NET", "net"},
		{"#billing", "billing"},
		{"gpt-4o", "gpt 4o"},
	}
	for _, p := range apart {
		if a, b := normalizeQuery(p[0]), normalizeQuery(p[1]); a == b {
			t.Errorf("%q and %q share the slot %q", p[0], p[1], a)
		}
	}
}

// A near-copy of a cached question that names someone or something else,
// or another number, is searched again; one naming the same is served.
func TestFuzzyCacheKeepsNames(t *testing.T) {
	c := newQueryCache(true)
	direct := api.QueryResult{TierName: "direct", Reason: "direct answer"}
	q := "What did Caroline paint for the art show in May?"
	c.put(q, normalizeQuery(q), 5, "chat/caroline.md", outcome{res: direct})
	for _, miss := range []string{
		"What did Melanie paint for the art show in May?",
		"What did Caroline paint for the art show in June?",
		"What did Caroline paint for the art show in 2023?",
	} {
		if r, _, ok := c.lookup(miss, normalizeQuery(miss), 5, nil); ok {
			t.Errorf("%q served from the cache: %s", miss, r.res.Reason)
		}
	}
	hit := "For the art show in May, what did Caroline paint?"
	if r, _, ok := c.lookup(hit, normalizeQuery(hit), 5, nil); !ok || r.res.Tier != api.TierFuzzyCache {
		t.Errorf("%q: want a fuzzy hit naming the same person and month", hit)
	}
}

func TestQueryNames(t *testing.T) {
	cases := map[string]string{
		"What did Caroline paint for the art show in May?": "caroline may",
		"Caroline's job? And Melanie's.":                   "melanie",
		"I think I'm going to Lisbon. Where should I eat?": "lisbon",
		"Is v1.8 out? Since 2023 or March 3rd?":            "2023 3rd march v1.8",
		"how do i take my coffee":                          "",
		"Which tokenizer did we pick for Korean":           "korean",
	}
	for q, want := range cases {
		if got := strings.Join(queryNames(q), " "); got != want {
			t.Errorf("queryNames(%q) = %q, want %q", q, got, want)
		}
	}
}

func FuzzQueryNames(f *testing.F) {
	f.Add("What did Caroline paint for the art show in May?")
	f.Add("I'm ’s 'S \xff É. Ünïcödé 2023? V1.8!")
	f.Fuzz(func(t *testing.T, q string) {
		names := queryNames(q)
		if !slices.IsSorted(names) {
			t.Fatalf("queryNames(%q) = %v, not sorted", q, names)
		}
		for _, n := range names {
			if n == "" || n != strings.ToLower(n) {
				t.Fatalf("queryNames(%q) = %v", q, names)
			}
		}
	})
}
