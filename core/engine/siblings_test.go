package engine

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/curate"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/tree"
)

// Pieces of one exchange (entries whose raw concept has a flow) lift each
// other: the turn of the session holding the most evidence outranks a
// slightly better lone match from another session, and the reason says so.
// Whole sessions (no flow) in a shared folder are not reranked.
func TestQuerySiblings(t *testing.T) {
	e, _, err := Open(Options{FS: host.NewMemFS()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	add := func(path, text, flow string) {
		op := curate.Operation{Type: curate.OpAdd, Path: path, Title: "Turn",
			Content: curate.Content{Narrative: &curate.Narrative{Text: text}}, Reason: "chat import"}
		if flow != "" {
			op.Content.RawConcept = &tree.RawConcept{Task: "a turn", Flow: flow}
		}
		res := e.Curate(CurateParams{Operations: []curate.Operation{op}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	// Session 1 talks about the pottery class at length; session 2 has one
	// remark that matches the question a little better on its own.
	add("chat/session_01/turn_01.md", "I signed up for a pottery class downtown, with my sister.", "Hi!")
	add("chat/session_01/turn_02.md", "It meets on Tuesdays; I made a bowl in the pottery class.", "How nice.")
	add("chat/session_01/turn_03.md", "My teacher says the bowl needs glazing before it is done.", "Show me!")
	add("chat/session_02/turn_01.md", "Glazing class at the pottery studio is sold out.", "Hello again.")
	add("chat/session_02/turn_02.md", "Let us talk about the weather.", "Sold out, sadly.")
	q := "pottery bowl glazing class"
	res, err := e.Query(SearchParams{Query: q, Limit: 5})
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
	w, _, err := Open(Options{FS: host.NewMemFS()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	e = w
	add("chats/2023_05/session_01.md", "I signed up for a pottery class downtown, with my sister.", "")
	add("chats/2023_05/session_02.md", "It meets on Tuesdays; I made a bowl in the pottery class.", "")
	add("chats/2023_05/session_03.md", "My teacher says the bowl needs glazing before it is done.", "")
	add("chats/2023_06/session_04.md", "Glazing class at the pottery studio is sold out.", "")
	res, err = e.Query(SearchParams{Query: q, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Reason, "siblings") || res.Results[0].Path != "chats/2023_06/session_04.md" {
		t.Errorf("whole sessions: order %v, reason %q", paths(res), res.Reason)
	}
}
