package retrieve

import (
	"math"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
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
