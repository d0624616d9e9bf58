package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/agent"
)

func linked(title, summary string, related []string, text string) string {
	return "---\ntitle: " + title + "\nsummary: " + summary + "\nrelated: [" + strings.Join(related, ", ") + "]\n---\n\n## Narrative\n" + text + "\n"
}

// contextEngine opens a small graph: root relates to one and big, one to
// two, two to three; fan links to root; an unresolved link goes nowhere.
func contextEngine(t *testing.T) *Engine {
	t.Helper()
	fs := host.NewMemFS()
	for p, s := range map[string]string{
		"a/t/root.md":  linked("Root", "where it starts", []string{"a/t/one.md", "a/t/big.md", "a/t/nowhere.md"}, "The root entry."),
		"a/t/one.md":   linked("One", "first hop", []string{"a/t/two.md"}, "One hop away."),
		"a/t/big.md":   linked("Big", "a long entry", nil, strings.Repeat("Lots of words about capacity planning. ", 200)),
		"a/t/two.md":   linked("Two", "second hop", []string{"a/t/three.md"}, "Two hops away, about zebras."),
		"a/t/three.md": linked("Three", "third hop", nil, "Three hops away."),
		"b/x/fan.md":   linked("Fan", "links to root", []string{"a/t/root.md"}, "A fan of the root."),
	} {
		if err := fs.WriteFile(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	t.Cleanup(func() { e.Close() })
	return e
}

type walked struct {
	path, via, link, included string
	depth                     int
}

func walk(r api.ContextResult) []walked {
	var out []walked
	for _, x := range r.Entries {
		out = append(out, walked{x.Path, x.Via, x.Link, x.Included, x.Depth})
	}
	return out
}

func depth(n int) *int { return &n }

func TestContextWalk(t *testing.T) {
	e := contextEngine(t)
	res, err := e.Context(api.ContextParams{Path: "a/t/root.md", Budget: 10000})
	if err != nil {
		t.Fatal(err)
	}
	want := []walked{
		{"a/t/root.md", "", "", "full", 0},
		{"a/t/big.md", "a/t/root.md", "relation", "full", 1},
		{"a/t/one.md", "a/t/root.md", "relation", "full", 1},
		{"b/x/fan.md", "a/t/root.md", "backlink", "full", 1},
	}
	if got := walk(res); !reflect.DeepEqual(got, want) {
		t.Fatalf("depth 1 walk:\n got %v\nwant %v", got, want)
	}
	if res.Depth != 1 || res.Budget != 10000 || res.Path != "a/t/root.md" || res.Tokens != agent.EstimateTokens(res.Markdown) {
		t.Errorf("result: depth %d budget %d path %s tokens %d", res.Depth, res.Budget, res.Path, res.Tokens)
	}
	for _, part := range []string{"# Root\nPath: a/t/root.md\nSummary: where it starts\n\n## Narrative\nThe root entry.",
		"# Fan\nPath: b/x/fan.md (links to a/t/root.md)\nSummary: links to root", "# One\nPath: a/t/one.md (related from a/t/root.md)"} {
		if !strings.Contains(res.Markdown, part) {
			t.Errorf("markdown lacks %q:\n%s", part, res.Markdown)
		}
	}
	if !strings.HasPrefix(res.Markdown, "# Root\n") || strings.Index(res.Markdown, "# Big") > strings.Index(res.Markdown, "# One") {
		t.Errorf("markdown out of the walk's order:\n%s", res.Markdown)
	}
	sum := 0
	for _, x := range res.Entries {
		if x.Tokens != x.FullTokens || x.Tokens == 0 {
			t.Errorf("%s: tokens %d of %d", x.Path, x.Tokens, x.FullTokens)
		}
		sum += x.Tokens
	}
	if res.Tokens > sum+len(res.Entries) {
		t.Errorf("tokens %d over the parts' %d", res.Tokens, sum)
	}

	deep, err := e.Context(api.ContextParams{Path: "a/t/root.md", Depth: depth(3), Budget: 10000})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, walked{"a/t/two.md", "a/t/one.md", "relation", "full", 2}, walked{"a/t/three.md", "a/t/two.md", "relation", "full", 3})
	if got := walk(deep); !reflect.DeepEqual(got, want) {
		t.Fatalf("depth 3 walk:\n got %v\nwant %v", got, want)
	}
	alone, err := e.Context(api.ContextParams{Path: "a/t/root.md", Depth: depth(0)})
	if err != nil || len(alone.Entries) != 1 || alone.Budget != api.DefaultContextBudget {
		t.Fatalf("depth 0: %+v, %v", alone, err)
	}
	again, err := e.Context(api.ContextParams{Path: "a/t/root.md", Depth: depth(3), Budget: 10000})
	if err != nil {
		t.Fatal(err)
	}
	again.TookMs, deep.TookMs = 0, 0
	if !reflect.DeepEqual(again, deep) {
		t.Error("the same call answered differently")
	}
}

func TestContextBudget(t *testing.T) {
	e := contextEngine(t)
	res, err := e.Context(api.ContextParams{Path: "a/t/root.md", Budget: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens > 300 || res.Tokens != agent.EstimateTokens(res.Markdown) {
		t.Fatalf("tokens %d of a budget of 300", res.Tokens)
	}
	big := res.Entries[1]
	if big.Path != "a/t/big.md" || big.Included != api.ContextSummary || big.Reason != api.ContextReasonBudget || big.FullTokens <= 300 || big.Tokens >= 50 {
		t.Errorf("big entry: %+v", big)
	}
	if !strings.Contains(res.Markdown, "# Big\nPath: a/t/big.md (related from a/t/root.md)\nSummary: a long entry\n(its text is left out: over the token budget)") ||
		strings.Contains(res.Markdown, "capacity planning") {
		t.Errorf("big entry's part:\n%s", res.Markdown)
	}
	// The smaller entries after it still fit whole.
	if one := res.Entries[2]; one.Included != api.ContextFull {
		t.Errorf("one: %+v", one)
	}

	cut, err := e.Context(api.ContextParams{Path: "a/t/big.md", Budget: 100})
	if err != nil {
		t.Fatal(err)
	}
	root := cut.Entries[0]
	if root.Included != api.ContextTruncated || root.Reason != api.ContextReasonBudget || cut.Tokens > 100 || cut.Tokens < 90 ||
		!strings.HasPrefix(cut.Markdown, "# Big\nPath: a/t/big.md\n") || !strings.HasSuffix(cut.Markdown, "(cut here: the rest is over the token budget)") {
		t.Errorf("an entry over the budget: %+v\n%s", root, cut.Markdown)
	}
	// The backlink from root did not fit even by its summary, and so led nowhere.
	if len(cut.Entries) != 2 || cut.Entries[1].Path != "a/t/root.md" || cut.Entries[1].Included != api.ContextOmitted || cut.Entries[1].Reason != api.ContextReasonBudget {
		t.Errorf("after a cut root: %+v", cut.Entries)
	}
}

// TestContextWithinBudget walks examples/notes from every entry at every
// depth under budgets from the least to more than the tree: the markdown
// never goes over, and lists exactly the parts the entries say it holds.
func TestContextWithinBudget(t *testing.T) {
	fs := benchTree(t, 0)
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	t.Cleanup(func() { e.Close() })
	for _, p := range e.catalog.Paths() {
		for d := 0; d <= api.MaxContextDepth; d++ {
			for _, budget := range []int{100, 233, 700, 2000, 50000} {
				res, err := e.Context(api.ContextParams{Path: p, Depth: depth(d), Budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				if res.Tokens > budget || res.Tokens != agent.EstimateTokens(res.Markdown) {
					t.Fatalf("%s depth %d budget %d: %d tokens", p, d, budget, res.Tokens)
				}
				parts := 0
				for _, x := range res.Entries {
					if x.Included != api.ContextOmitted {
						parts++
					}
					if x.Depth > d {
						t.Fatalf("%s depth %d: %s at depth %d", p, d, x.Path, x.Depth)
					}
				}
				if got := strings.Count("\n"+res.Markdown, "\n# "); got < parts {
					t.Fatalf("%s depth %d budget %d: %d parts in the markdown, %d entries in it", p, d, budget, got, parts)
				}
			}
		}
	}
}

func TestContextQueryAndErrors(t *testing.T) {
	e := contextEngine(t)
	res, err := e.Context(api.ContextParams{Query: "zebras"})
	if err != nil || res.Path != "a/t/two.md" || res.Query != "zebras" {
		t.Fatalf("query: %+v, %v", res, err)
	}
	if got := walk(res); len(got) != 3 || got[1].path != "a/t/three.md" || got[2].path != "a/t/one.md" || got[2].link != "backlink" {
		t.Errorf("query's walk: %v", got)
	}
	for _, c := range []struct {
		p    api.ContextParams
		code string
		msg  string
	}{
		{api.ContextParams{}, api.CodeInvalidParams, "give a path or a query"},
		{api.ContextParams{Path: "a/t/root.md", Query: "root"}, api.CodeInvalidParams, "not both"},
		{api.ContextParams{Path: "a/t/root.md", Depth: depth(4)}, api.CodeInvalidParams, "depth 4: want 0 to 3"},
		{api.ContextParams{Path: "a/t/root.md", Depth: depth(-1)}, api.CodeInvalidParams, "depth -1"},
		{api.ContextParams{Path: "a/t/root.md", Budget: 99}, api.CodeInvalidParams, "budget 99: want 100 to 200000 tokens"},
		{api.ContextParams{Path: "a/t/missing.md"}, api.CodeNotFound, "no entry a/t/missing.md"},
		{api.ContextParams{Path: "a/t"}, api.CodeNotFound, "is a folder"},
		{api.ContextParams{Path: "../x.md"}, api.CodeInvalidPath, ".."},
		{api.ContextParams{Query: "quaternions"}, api.CodeNotFound, `no entry matches "quaternions"`},
		{api.ContextParams{Query: strings.Repeat("x ", api.MaxQueryBytes)}, api.CodeInvalidParams, "over the 4096-byte limit"},
	} {
		_, err := e.Context(c.p)
		if ae := asError(err); err == nil || ae.Code != c.code || !strings.Contains(ae.Message, c.msg) {
			t.Errorf("%+v: %v, want %s %q", c.p, err, c.code, c.msg)
		}
	}
}

func TestContextOverTheWire(t *testing.T) {
	s, _ := newSession(t, map[string]string{
		"a/t/root.md": linked("Root", "where it starts", []string{"a/t/one.md"}, "The root entry."),
		"a/t/one.md":  linked("One", "first hop", nil, "One hop away."),
	})
	mustOpen(t, s)
	res, errObj := call(t, s, "context", map[string]any{"path": "a/t/one.md", "budget": 500})
	if errObj != nil {
		t.Fatal(errObj)
	}
	entries := res["entries"].([]any)
	if len(entries) != 2 || fmt.Sprint(entries[1].(map[string]any)["link"]) != "backlink" || res["budget"].(float64) != 500 {
		t.Errorf("context: %v", res)
	}
	if _, errObj := call(t, s, "context", map[string]any{"path": "a/t/one.md", "depth": "two"}); errObj == nil || errObj["code"] != api.CodeInvalidParams {
		t.Errorf("a depth of the wrong type: %v", errObj)
	}
}

// BenchmarkContext builds the context of every entry of examples/notes at
// depth 3 with the default budget, beside a read of each entry with its
// relations and backlinks (what an agent would call instead, once per
// entry reached) as the baseline.
func BenchmarkContext(b *testing.B) {
	e, _ := openEngine(b, benchTree(b, 0), &clock{now: day0}, Options{})
	defer e.Close()
	paths := e.catalog.Paths()
	b.Run("context", func(b *testing.B) {
		for i := range b.N {
			if _, err := e.Context(api.ContextParams{Path: paths[i%len(paths)], Depth: depth(3)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		for i := range b.N {
			if _, err := e.Read(api.ReadParams{Path: paths[i%len(paths)]}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
