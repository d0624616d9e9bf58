package retrieve

import (
	"math"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
)

// Pieces of one exchange (entries whose flow holds the turns they reply to) lift each
// other: the turn of the session holding the most evidence outranks a
// slightly better lone match from another session, and the reason says so.
// Whole sessions (no flow) in a shared folder are not reranked.
func TestQuerySiblings(t *testing.T) {
	e := openMemory(t, nil)
	// The turns replied to would borrow from the best turn (replied.go):
	// off, so that the order is the sibling rule's alone.
	e.off.RepliedTo = true
	add := func(path, text, flow string) {
		op := api.Operation{Type: api.OpAdd, Path: path, Title: "Turn",
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "chat import"}
		if flow != "" {
			op.Content.RawConcept = &api.RawConcept{Task: "a turn", Flow: flow}
		}
		res := e.Curate(api.CurateParams{Operations: []api.Operation{op}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	// Session 1 talks about the pottery class at length; session 2 has one
	// remark that matches the question a little better on its own.
	add("chat/session_01/turn_01.md", "I signed up for a pottery class downtown, with my sister.", "In reply to Ann: Hi!")
	add("chat/session_01/turn_02.md", "It meets on Tuesdays; I made a bowl in the pottery class.", "In reply to Ann: How nice.")
	add("chat/session_01/turn_03.md", "My teacher says the bowl needs glazing before it is done.", "In reply to Ann: Show me!")
	add("chat/session_02/turn_01.md", "Glazing class at the pottery studio is sold out.", "In reply to Ann: Hello again.")
	add("chat/session_02/turn_02.md", "Let us talk about the weather.", "In reply to Ann: Sold out, sadly.")
	q := "pottery bowl glazing class"
	res, err := e.Query(api.SearchParams{Query: q, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Reason, "siblings: ") || !strings.Contains(res.Reason, "chat/session_01") {
		t.Errorf("reason %q lacks the sibling certificate", res.Reason)
	}
	plain, err := e.index.Search(q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Hits[0].Path != "chat/session_02/turn_01.md" {
		t.Fatalf("plain search: first %s; the test needs the lone remark to rank first on its own", plain.Hits[0].Path)
	}
	if res.Results[0].Path != "chat/session_01/turn_02.md" {
		t.Errorf("order %v: want the best turn of session_01, the episode with the most evidence, first", paths(res))
	}

	// The same texts as whole sessions without a flow: plain ranking.
	w := openMemory(t, nil)
	e = w
	add("chats/2023_05/session_01.md", "I signed up for a pottery class downtown, with my sister.", "")
	add("chats/2023_05/session_02.md", "It meets on Tuesdays; I made a bowl in the pottery class.", "")
	add("chats/2023_05/session_03.md", "My teacher says the bowl needs glazing before it is done.", "")
	add("chats/2023_06/session_04.md", "Glazing class at the pottery studio is sold out.", "")
	res, err = e.Query(api.SearchParams{Query: q, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Reason, "siblings") || res.Results[0].Path != "chats/2023_06/session_04.md" {
		t.Errorf("whole sessions: order %v, reason %q", paths(res), res.Reason)
	}
}

// The turn that opens a session (no flow, beside pieces that reply) scores
// openerBoost times its siblings' multiplier; an entry without a flow in a
// folder of no exchange is left alone.
func TestQueryOpeners(t *testing.T) {
	e := openMemory(t, nil)
	addTurn(t, e, "chat/session_01/turn_01.md", "Ana", "Guess what, I adopted a kitten named Miso!", "")
	addTurn(t, e, "chat/session_01/turn_02.md", "Bo", "A kitten! What does Miso look like?", "In reply to Ana: Guess what, I adopted a kitten named Miso!")
	addTurn(t, e, "notes/pets/miso.md", "Ana", "Miso the kitten needs her shots in May.", "")

	got, reason := rescored(t, e, "kitten Miso", func(_ search.Ranked, r *search.Result) string { return e.siblings(r.Hits) })
	sibling := got["chat/session_01/turn_02.md"]
	if sibling <= 1 {
		t.Fatalf("the reply's score ×%.4f: no sibling evidence", sibling)
	}
	if o := got["chat/session_01/turn_01.md"]; math.Abs(o-sibling*openerBoost) > 1e-9 {
		t.Errorf("opener ×%.4f, want ×%.4f (its sibling's ×%g)", o, sibling*openerBoost, openerBoost)
	}
	if n := got["notes/pets/miso.md"]; n != 1 {
		t.Errorf("a note outside any exchange ×%.4f, want ×1", n)
	}
	if !strings.Contains(reason, "pieces of 1 episode (folder),") || !strings.Contains(reason, "openers: 1 of them open their episode") {
		t.Errorf("reason %q lacks the sibling or openers certificate", reason)
	}
}
