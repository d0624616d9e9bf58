package retrieve

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// A short reaction that matches a question only through the turn it
// replies to ranks after the turn that holds the fact; a short curated entry
// without a flow keeps its score.
func TestQueryShortRemarks(t *testing.T) {
	e := openMemory(t, nil)
	fact := "I adopted a rescue greyhound named Pixie from the shelter on Elm Street last spring; she is shy with strangers but already knows her name and sleeps on the sofa all day."
	addTurn(t, e, "chat/session_01/turn_01.md", "Audrey", fact, "In reply to Andrew: any news?")
	addTurn(t, e, "chat/session_01/turn_02.md", "Andrew", "Pixie the greyhound, wow!", "In reply to Audrey: "+fact)

	plain, err := e.index.Search("greyhound Pixie shelter", 5)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Hits[0].Path != "chat/session_01/turn_02.md" {
		t.Fatalf("plain search: first %s; the test needs the short reaction to rank first on its own", plain.Hits[0].Path)
	}
	res, err := e.Query(api.SearchParams{Query: "greyhound Pixie shelter", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Results[0].Path != "chat/session_01/turn_01.md" {
		t.Errorf("order %v: want the turn holding the fact first", paths(res))
	}
	if !strings.Contains(res.Reason, "short remarks: 1 of the 2 best matches") {
		t.Errorf("reason %q lacks the short-remarks certificate", res.Reason)
	}

	// Without flows the same texts are curated entries: no prior.
	w := openMemory(t, nil)
	for path, text := range map[string]string{"home/pets/pixie.md": fact, "home/pets/note.md": "Pixie the greyhound, wow! " + fact} {
		op := api.Operation{Type: api.OpAdd, Path: path, Title: "Pet",
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "note"}
		if r := w.Curate(api.CurateParams{Operations: []api.Operation{op}}); r.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, r)
		}
	}
	res, err = w.Query(api.SearchParams{Query: "greyhound Pixie shelter", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Reason, "short remarks") {
		t.Errorf("reason %q: entries without a flow are no remarks", res.Reason)
	}
}

func TestWordCount(t *testing.T) {
	for _, s := range []string{"", "  ", "one", " two  words ", "tab\tand\nnew line", "价格 \u00a0nbsp\u2003em", "\xff\xfe bad", "**Caroline:** hi"} {
		if got, want := wordCount(s), len(strings.Fields(s)); got != want {
			t.Errorf("wordCount(%q) = %d, want %d", s, got, want)
		}
	}
}
