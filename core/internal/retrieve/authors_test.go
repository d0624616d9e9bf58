package retrieve

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// addTurn writes one turn of a chat as ingestion does, the speaker as the
// author and the turn replied to as the flow, under a title that names
// nobody.
func addTurn(t *testing.T, e *memory, path, author, text, flow string) {
	t.Helper()
	op := api.Operation{Type: api.OpAdd, Path: path, Title: "Turn",
		Content: api.Content{
			Narrative:  &api.Narrative{Text: text},
			RawConcept: &api.RawConcept{Task: "a turn", Author: author, Flow: flow},
		}, Reason: "chat import"}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{op}}); res.Summary.Added != 1 {
		t.Fatalf("curate %s: %+v", path, res)
	}
}

// A question naming one of the people of a conversation ranks what that
// person said first, even where the other one's remark matches the words a
// little better; naming both people, or nobody, changes nothing.
func TestQueryAuthors(t *testing.T) {
	e := openMemory(t, nil)
	// Maria's remark, which Caroline's turn replies to, would borrow from
	// it (replied.go): off, so that the order is the author rule's alone.
	e.off.RepliedTo = true
	addTurn(t, e, "chat/session_01/turn_01.md", "Maria", "Caroline, your pottery class bowl with the blue glaze is lovely, is the pottery class hard?", "In reply to Caroline: hello")
	addTurn(t, e, "chat/session_01/turn_02.md", "Caroline", "Thanks! The pottery class is on Tuesdays and I finally finished a bowl there.", "In reply to Maria: hi")
	addTurn(t, e, "chat/session_01/turn_03.md", "Maria", "Glad to hear it, Caroline. See you soon, and good luck with everything at work.", "In reply to Caroline: thanks")

	plain, err := e.index.Search("Caroline pottery class bowl", 5)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Hits[0].Path != "chat/session_01/turn_01.md" {
		t.Fatalf("plain search: first %s; the test needs Maria's remark to rank first on its words", plain.Hits[0].Path)
	}
	res, err := e.Query(api.SearchParams{Query: "What did Caroline make in her pottery class? A bowl?", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Results[0].Path != "chat/session_01/turn_02.md" {
		t.Errorf("order %v: want Caroline's own turn first", paths(res))
	}
	if !strings.Contains(res.Reason, "authors: the question names Caroline; 1 of the") {
		t.Errorf("reason %q lacks the authors certificate", res.Reason)
	}
	for _, q := range []string{"Caroline and Maria pottery class bowl", "pottery class bowl"} {
		res, err := e.Query(api.SearchParams{Query: q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Reason, "authors:") {
			t.Errorf("%q: reason %q: no author should be singled out", q, res.Reason)
		}
	}
}
