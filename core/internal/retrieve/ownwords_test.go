package retrieve

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// rescored ranks query over e, gives every hit the same raw score and
// applies rule, so that the rule's multipliers can be read off the scores
// it leaves (by path), with its reason code.
func rescored(t *testing.T, e *memory, query string, rule func(search.Ranked, *search.Result) string) (map[string]float64, string) {
	t.Helper()
	ranked, err := e.index.Rank(query, rerankPool, search.ByScore)
	if err != nil {
		t.Fatal(err)
	}
	r := ranked.Result
	for i := range r.Hits {
		r.Hits[i].Raw = 10
	}
	reason := rule(ranked, &r)
	out := map[string]float64{}
	for _, h := range r.Hits {
		out[h.Path] = h.Raw / 10
	}
	return out, reason
}

// A turn that says the question's words itself outweighs the reply that
// only follows them, by the share of the question's terms it says; the
// speaker's name, provenance and flow are not its own words, and an entry
// whose flow is no reply (a process) is left alone.
func TestQueryOwnWords(t *testing.T) {
	e := openMemory(t, nil)
	addTurn(t, e, "chat/session_01/turn_02.md", "Ana", "We finished the mosaic table for the garden.", "In reply to Bo: any news?")
	addTurn(t, e, "chat/session_01/turn_03.md", "Bo", "So proud of you two, send a photo!", "In reply to Ana: We finished the mosaic table for the garden.")
	addTurn(t, e, "chat/session_01/turn_04.md", "Ana", "The mosaic took us a month.", "In reply to Bo: So proud of you two, send a photo!")
	op := api.Operation{Type: api.OpAdd, Path: "garden/tables/mosaic_table_build.md", Title: "Mosaic table build",
		Content: api.Content{
			Narrative:  &api.Narrative{Text: "Tiles were laid on the table over a mosaic mesh."},
			RawConcept: &api.RawConcept{Task: "build notes", Flow: "mesh -> tiles -> grout -> seal"},
		}, Reason: "notes"}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{op}}); res.Summary.Added != 1 {
		t.Fatalf("curate: %+v", res)
	}

	got, reason := rescored(t, e, "Ana mosaic table", func(ranked search.Ranked, r *search.Result) string {
		return e.ownWords(r, ranked.Says)
	})
	for path, want := range map[string]float64{
		// "ana" is the author, not said: mosaic and table, 2 of 3 terms.
		"chat/session_01/turn_02.md":          1 + ownWeight*2/3,
		"chat/session_01/turn_03.md":          1,
		"chat/session_01/turn_04.md":          1 + ownWeight*1/3,
		"garden/tables/mosaic_table_build.md": 1,
	} {
		if math.Abs(got[path]-want) > 1e-9 {
			t.Errorf("%s: score ×%.4f, want ×%.4f", path, got[path], want)
		}
	}
	if reason == "" {
		t.Error("no reason code")
	}

	res, err := e.Query(api.SearchParams{Query: "Ana mosaic table", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Reason, "own words: 3 of the 5 best matches are pieces of an exchange") {
		t.Errorf("reason %q lacks the own-words certificate", res.Reason)
	}
}

// Hand-written entries whose flow is a process are no pieces of an
// exchange: none of the exchange rules touches them.
func TestQueryProcessFlowIsNoExchange(t *testing.T) {
	e := openMemory(t, nil)
	for i, text := range []string{"Refresh tokens rotate on every use.", "Rotate the signing key yearly.", "Tokens expire after 15 minutes."} {
		op := api.Operation{Type: api.OpAdd, Path: "engineering/auth", Title: []string{"Refresh rotation", "Key rotation", "Token expiry"}[i],
			Content: api.Content{
				Narrative:  &api.Narrative{Text: text},
				RawConcept: &api.RawConcept{Task: "design", Author: "Jonas", Flow: "client -> token service -> store"},
			}, Reason: "notes"}
		if res := e.Curate(api.CurateParams{Operations: []api.Operation{op}}); res.Summary.Added != 1 {
			t.Fatalf("curate: %+v", res)
		}
	}
	res, err := e.Query(api.SearchParams{Query: "rotate tokens", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{"own words", "siblings", "openers"} {
		if strings.Contains(res.Reason, rule+":") {
			t.Errorf("reason %q: a process flow made an exchange (%s)", res.Reason, rule)
		}
	}
}

// What an entry says itself is analyzed as it is indexed, and follows it:
// an update is answered from its new words, never from a stale cache, and
// a deleted entry leaves the cache.
func TestOwnWordsFollowTheEntry(t *testing.T) {
	e := openMemory(t, nil)
	const path = "chat/session_01/turn_01.md"
	addTurn(t, e, path, "Ana", "We glazed the pottery bowl.", "In reply to Bo: news?")
	if _, ok := e.own.cur[path]; !ok {
		t.Fatal("the entry's own words were not analyzed as it was indexed")
	}
	says := func(word string) bool {
		t.Helper()
		en, ok := e.catalog.Get(path)
		if !ok {
			t.Fatalf("%s is gone", path)
		}
		ranked, err := e.index.Rank(word, 1, search.ByScore)
		if err != nil {
			t.Fatal(err)
		}
		return ranked.Says(e.ownOf(en)) == 1
	}
	if !says("pottery") || says("mosaic") {
		t.Fatal("own words before the update: want pottery, not mosaic")
	}
	up := api.Operation{Type: api.OpUpdate, Path: path, Content: api.Content{Narrative: &api.Narrative{Text: "We laid the mosaic table."}}, Reason: "fix"}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{up}}); res.Summary.Updated != 1 {
		t.Fatalf("update: %+v", res)
	}
	if says("pottery") || !says("mosaic") {
		t.Fatal("own words after the update: want mosaic, not pottery")
	}
	del := api.Operation{Type: api.OpDelete, Path: path, Reason: "gone"}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{del}}); res.Summary.Deleted != 1 {
		t.Fatalf("delete: %+v", res)
	}
	if _, ok := e.own.cur[path]; ok {
		t.Fatal("a deleted entry's own words stay cached")
	}
}

// The cache of own words holds at most its budget of terms in each of its
// two generations, and what is asked again moves back to the current one.
func TestOwnCacheBounded(t *testing.T) {
	c := ownCache{budget: 100}
	entries := make([]*tree.Entry, 30)
	for i := range entries {
		words := make([]string, 10)
		for j := range words {
			words[j] = fmt.Sprintf("w%dx%d", i, j)
		}
		entries[i] = &tree.Entry{Path: fmt.Sprintf("e%02d.md", i), Narrative: api.Narrative{Text: strings.Join(words, " ")}}
		c.put(entries[i].Path, analyzeOwn(entries[i]))
		held := 0
		for _, m := range []map[string]ownCached{c.cur, c.old} {
			for _, oc := range m {
				held += oc.stated.Len()
			}
		}
		if c.terms > c.budget || held > 2*c.budget {
			t.Fatalf("after %d entries: %d terms in the current generation, %d in all; budget %d", i+1, c.terms, held, c.budget)
		}
	}
	if _, ok := c.get(entries[0]); ok {
		t.Error("the first entry outlived two generations")
	}
	old := entries[len(entries)-1-len(c.cur)]
	if _, ok := c.old[old.Path]; !ok {
		t.Fatalf("%s is not in the old generation", old.Path)
	}
	if _, ok := c.get(old); !ok {
		t.Fatalf("%s, in the old generation, was not found", old.Path)
	}
	if _, ok := c.cur[old.Path]; !ok {
		t.Errorf("%s, asked again, did not move to the current generation", old.Path)
	}
	// Another parse of the same file is another entry: not its words.
	again := *entries[len(entries)-1]
	if _, ok := c.get(&again); ok {
		t.Error("a cached entry's words served another *tree.Entry at its path")
	}
}

// The cache holds entries weakly: it does not keep alive the parsed
// entries the catalog let go (catalog.maxParsed bounds those).
func TestOwnCacheHoldsEntriesWeakly(t *testing.T) {
	c := ownCache{budget: ownBudget}
	func() {
		en := &tree.Entry{Path: "a.md", Narrative: api.Narrative{Text: strings.Repeat("words of a long entry ", 1000)}}
		c.put(en.Path, analyzeOwn(en))
	}()
	runtime.GC()
	if c.cur["a.md"].en.Value() != nil {
		t.Error("the cache keeps an entry nothing else holds alive")
	}
}

// The reason a turn was written for is not its own words: an import's
// reason names its source file ("ingest inbox/ana_bo.json"), which would
// make every turn of it say both speakers' names.
func TestOwnWordsLeaveTheReasonOut(t *testing.T) {
	e := openMemory(t, nil)
	op := api.Operation{Type: api.OpAdd, Path: "ana_and_bo/session_01/turn_002.md", Title: "Bo on 3 May 2026",
		Content: api.Content{
			Narrative:  &api.Narrative{Text: "A blue bowl, though the glaze cracked."},
			RawConcept: &api.RawConcept{Task: "a turn", Author: "Bo", Flow: "In reply to Ana: What did you make?"},
		}, Reason: "ingest inbox/ana_bo.json"}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{op}}); res.Summary.Added != 1 {
		t.Fatalf("curate: %+v", res)
	}
	got, _ := rescored(t, e, "Ana bowl", func(ranked search.Ranked, r *search.Result) string {
		return e.ownWords(r, ranked.Says)
	})
	// "bowl" is said, "ana" is in the flow and the reason only: 1 of 2.
	if want := 1 + ownWeight/2; math.Abs(got[op.Path]-want) > 1e-9 {
		t.Errorf("score ×%.4f, want ×%.4f", got[op.Path], want)
	}
}
