package retrieve

import (
	"math"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
)

// The tier-2 rule: a direct answer needs a high top score clearly ahead of
// the next; near the top of the ŝ scale "ahead" is a raw-score ratio, and
// a document that is the only full match is not by itself enough.
func TestDecideDirect(t *testing.T) {
	hit := func(path string, raw float64, all bool) search.Hit {
		return search.Hit{Hit: api.Hit{Path: path, Score: math.Round(raw/(1+raw)*1e4) / 1e4}, Raw: raw, AllTerms: all}
	}
	tests := []struct {
		name   string
		r      search.Result
		direct bool
	}{
		{"only match", search.Result{Total: 1, Hits: []search.Hit{hit("a.md", 6, true)}}, true},
		{"only match, weak", search.Result{Total: 1, Hits: []search.Hit{hit("a.md", 4, true)}}, false},
		{"lone full match, close fill", search.Result{Total: 2, Hits: []search.Hit{hit("a.md", 6, true), hit("b.md", 5.9, false)}}, false},
		{"lone full match, far ahead", search.Result{Total: 2, Hits: []search.Hit{hit("a.md", 6, true), hit("b.md", 2, false)}}, true},
		{"limit 1 of several", search.Result{Total: 5, Hits: []search.Hit{hit("a.md", 20, true)}}, false},
		{"strong, close", search.Result{Total: 2, Hits: []search.Hit{hit("a.md", 20, true), hit("b.md", 18, true)}}, false},
		{"strong, ahead", search.Result{Total: 2, Hits: []search.Hit{hit("a.md", 20, true), hit("b.md", 15, true)}}, true},
		{"gap", search.Result{Total: 2, Hits: []search.Hit{hit("a.md", 8, true), hit("b.md", 3, true)}}, true},
	}
	for _, tc := range tests {
		tc.r.Terms = []string{"x"}
		res := decide("q", tc.r).res
		if (res.TierName == "direct") != tc.direct {
			t.Errorf("%s: tier %s (%s), want direct %v", tc.name, res.TierName, res.Reason, tc.direct)
		}
	}
}
