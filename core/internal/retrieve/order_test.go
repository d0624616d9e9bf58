package retrieve

import (
	"slices"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
)

func hitPaths(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Path
	}
	return out
}

// The evidence rules multiply raw scores, so hits that search ranked apart
// can tie afterwards (2 = 1 × timeBoost): the tie goes by path, not by the
// order search left them in.
func TestRerankBreaksTiesByPath(t *testing.T) {
	r := search.Result{Hits: []search.Hit{
		{Hit: api.Hit{Path: "b.md"}, Raw: 2},
		{Hit: api.Hit{Path: "a.md"}, Raw: 2},
		{Hit: api.Hit{Path: "c.md"}, Raw: 3},
		{Hit: api.Hit{Path: "ctx/context.md", Kind: "context"}, Raw: 9},
		{Hit: api.Hit{Path: "e.md"}, Raw: 1},
		{Hit: api.Hit{Path: "d.md"}, Raw: 1},
	}}
	rerank(&r, 5)
	if want := []string{"c.md", "a.md", "b.md", "d.md", "e.md"}; !slices.Equal(hitPaths(r.Hits), want) {
		t.Errorf("rerank: %v, want %v", hitPaths(r.Hits), want)
	}
}

// The lifecycle ordering too: hits with the same compound score (the same
// relevance, signals and age) go by path, after a better one.
func TestAnswerBreaksTiesByPath(t *testing.T) {
	m := openMemory(t, &testClock{time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	o := outcome{hits: []search.Hit{
		{Hit: api.Hit{Path: "z.md"}, Raw: 5},
		{Hit: api.Hit{Path: "m.md"}, Raw: 5},
		{Hit: api.Hit{Path: "a.md"}, Raw: 5},
		{Hit: api.Hit{Path: "q.md"}, Raw: 7},
	}}
	got := m.answer(o, "", time.Now())
	if want := []string{"q.md", "a.md", "m.md", "z.md"}; !slices.Equal(hitPaths(got.hits), want) {
		t.Errorf("answer: %v, want %v", hitPaths(got.hits), want)
	}
	// The entry a direct answer presents stays first.
	got = m.answer(o, "m.md", time.Now())
	if want := []string{"m.md", "q.md", "a.md", "z.md"}; !slices.Equal(hitPaths(got.hits), want) {
		t.Errorf("answer presenting m.md: %v, want %v", hitPaths(got.hits), want)
	}
}
