package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// filterEngine opens a tree of invoice entries across domains and topics,
// with tags, dates and seeded importance, the clock at day0 (2026-03-01).
func filterEngine(t *testing.T) (*Engine, *host.MemFS) {
	t.Helper()
	fs := host.NewMemFS()
	entry := func(title, tags, updated, importance string) string {
		return "---\ntitle: " + title + "\ntags: [" + tags + "]\ncreatedAt: 2026-01-01T00:00:00Z\nupdatedAt: " + updated +
			"\nimportance: " + importance + "\n---\n\n## Narrative\n" + title + ": invoice handling.\n"
	}
	for p, s := range map[string]string{
		"eng/billing/retry.md":    entry("Invoice retry", "billing, Payments", "2026-02-20T00:00:00Z", "90"),
		"eng/billing/dunning.md":  entry("Invoice dunning emails", "billing", "2026-01-10T00:00:00Z", "40"),
		"eng/auth/tokens.md":      entry("Invoice tokens", "security", "2026-02-27T00:00:00Z", "60"),
		"ops/billing/runbook.md":  entry("Invoice runbook", "payments", "2026-02-01T15:00:00Z", "70"),
		"ops/pager/invoice.md":    entry("Invoice pager", "", "2025-12-01T00:00:00Z", "50"),
		"eng/billing/context.md":  "---\ntitle: Billing\n---\n\nInvoices and payments.\n",
		"notes/misc/undated.md":   "# Undated invoice note\n\nNo front matter.\n",
		"eng/billing/sub/deep.md": entry("Invoice deep", "billing", "2026-02-28T00:00:00Z", "55"),
	} {
		if err := fs.WriteFile(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	t.Cleanup(func() { e.Close() })
	return e, fs
}

func hitPaths(hs []api.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Path
	}
	return out
}

func TestSearchFilters(t *testing.T) {
	e, _ := filterEngine(t)
	search := func(f api.Filters) ([]string, int) {
		t.Helper()
		r, err := e.Search(api.SearchParams{Query: "invoice", Filters: f})
		if err != nil {
			t.Fatal(err)
		}
		got := hitPaths(r.Results)
		slices.Sort(got)
		return got, r.Total
	}
	for _, c := range []struct {
		name string
		f    api.Filters
		want []string
	}{
		{"domain", api.Filters{Domain: "ops"}, []string{"ops/billing/runbook.md", "ops/pager/invoice.md"}},
		{"topic", api.Filters{Topic: "billing"}, []string{"eng/billing/context.md", "eng/billing/dunning.md", "eng/billing/retry.md", "eng/billing/sub/deep.md", "ops/billing/runbook.md"}},
		{"domain/topic", api.Filters{Topic: "eng/billing"}, []string{"eng/billing/context.md", "eng/billing/dunning.md", "eng/billing/retry.md", "eng/billing/sub/deep.md"}},
		{"tags, every one, any case", api.Filters{Tags: []string{"BILLING", "payments"}}, []string{"eng/billing/retry.md"}},
		{"since a span", api.Filters{Since: "7d"}, []string{"eng/auth/tokens.md", "eng/billing/sub/deep.md"}},
		{"until a day, whole", api.Filters{Until: "2026-02-01"}, []string{"eng/billing/dunning.md", "ops/billing/runbook.md", "ops/pager/invoice.md"}},
		{"since and until", api.Filters{Since: "2026-02-01", Until: "2026-02-20T00:00:00Z"}, []string{"eng/billing/retry.md", "ops/billing/runbook.md"}},
		{"maturity", api.Filters{Maturity: []api.Maturity{api.MaturityCore}}, []string{"eng/billing/retry.md"}},
		{"min importance", api.Filters{MinImportance: 60}, []string{"eng/auth/tokens.md", "eng/billing/retry.md", "ops/billing/runbook.md"}},
		{"together", api.Filters{Domain: "eng", Tags: []string{"billing"}, MinImportance: 50}, []string{"eng/billing/retry.md", "eng/billing/sub/deep.md"}},
		{"nothing kept", api.Filters{Domain: "nowhere"}, []string{}},
	} {
		got, total := search(c.f)
		if !slices.Equal(got, c.want) || total != len(c.want) {
			t.Errorf("%s: %v (total %d), want %v", c.name, got, total, c.want)
		}
	}
	for _, bad := range []api.Filters{
		{Domain: "eng/billing"}, {Topic: "a/b/c"}, {Domain: "ops", Topic: "eng/billing"}, {Tags: []string{" "}},
		{Since: "soon"}, {Until: "later"}, {Since: "2026-02-10", Until: "2026-02-01"},
		{Maturity: []api.Maturity{"gold"}}, {MinImportance: 101}, {MinImportance: -1}, {Sort: "title"}, {Domain: "../x"},
	} {
		_, err := e.Search(api.SearchParams{Query: "invoice", Filters: bad})
		var ae *api.Error
		if err == nil || !asAPIError(err, &ae) || ae.Code != api.CodeInvalidParams {
			t.Errorf("%+v: %v, want invalid_params", bad, err)
		}
	}
}

func asAPIError(err error, ae **api.Error) bool {
	e, ok := err.(*api.Error)
	*ae = e
	return ok
}

// The lifecycle filters read the signals as of the call: an entry that
// rises past the bound by being read is kept at once, without a reindex.
func TestLifecycleFilterFollowsUse(t *testing.T) {
	e, _ := filterEngine(t)
	min := api.Filters{MinImportance: 62}
	r, err := e.Search(api.SearchParams{Query: "invoice", Filters: min})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(hitPaths(r.Results), "eng/auth/tokens.md") {
		t.Fatalf("tokens (importance 60) kept at ≥ 62: %v", hitPaths(r.Results))
	}
	if _, err := e.Read(api.ReadParams{Path: "eng/auth/tokens.md"}); err != nil { // +3
		t.Fatal(err)
	}
	for _, method := range []string{"search", "query"} {
		var got []string
		if method == "search" {
			r, err := e.Search(api.SearchParams{Query: "invoice", Filters: min})
			if err != nil {
				t.Fatal(err)
			}
			got = hitPaths(r.Results)
		} else {
			q, err := e.Query(api.SearchParams{Query: "invoice", Limit: 10, Filters: min})
			if err != nil {
				t.Fatal(err)
			}
			got = hitPaths(q.Results)
		}
		if !slices.Contains(got, "eng/auth/tokens.md") {
			t.Errorf("%s: tokens (importance 63 after a read) not kept at ≥ 62: %v", method, got)
		}
	}
}

func TestSortRecentAndImportance(t *testing.T) {
	e, _ := filterEngine(t)
	for _, c := range []struct {
		sort string
		want []string
	}{
		// Newest first; the undated note and the context file after.
		{api.SortRecent, []string{"eng/billing/sub/deep.md", "eng/auth/tokens.md", "eng/billing/retry.md", "ops/billing/runbook.md", "eng/billing/dunning.md", "ops/pager/invoice.md"}},
		{api.SortImportance, []string{"eng/billing/retry.md", "ops/billing/runbook.md", "eng/auth/tokens.md", "eng/billing/sub/deep.md", "ops/pager/invoice.md"}},
	} {
		r, err := e.Search(api.SearchParams{Query: "invoice", Filters: api.Filters{Sort: c.sort}})
		if err != nil {
			t.Fatal(err)
		}
		if got := hitPaths(r.Results); !slices.Equal(got[:len(c.want)], c.want) {
			t.Errorf("search sorted by %s: %v, want %v first", c.sort, got, c.want)
		}
		q, err := e.Query(api.SearchParams{Query: "invoice", Limit: 3, Filters: api.Filters{Sort: c.sort, Domain: "eng"}})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range c.want {
			if strings.HasPrefix(p, "eng/") && len(want) < 3 {
				want = append(want, p)
			}
		}
		if got := hitPaths(q.Results); !slices.Equal(got, want) {
			t.Errorf("query sorted by %s in eng: %v, want %v", c.sort, got, want)
		}
	}
}

// A filtered query is answered from the filtered entries and is not
// answered from, or kept in, the cache of unfiltered answers.
func TestQueryFiltersAndCache(t *testing.T) {
	e, _ := filterEngine(t)
	all, err := e.Query(api.SearchParams{Query: "invoice retry"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Results) == 0 || all.Results[0].Path != "eng/billing/retry.md" {
		t.Fatalf("unfiltered: %v", hitPaths(all.Results))
	}
	ops, err := e.Query(api.SearchParams{Query: "invoice retry", Filters: api.Filters{Domain: "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	if ops.Tier != api.TierDirect {
		t.Errorf("a filtered query answered from tier %d (%s)", ops.Tier, ops.TierName)
	}
	for _, p := range hitPaths(ops.Results) {
		if !strings.HasPrefix(p, "ops/") {
			t.Errorf("domain ops: %s among %v", p, hitPaths(ops.Results))
		}
	}
	again, err := e.Query(api.SearchParams{Query: "invoice retry"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Tier != api.TierExactCache || !slices.Equal(hitPaths(again.Results), hitPaths(all.Results)) {
		t.Errorf("the unfiltered answer again: tier %d, %v", again.Tier, hitPaths(again.Results))
	}
}
