package retrieve

import (
	"maps"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
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

// The persons a question asks about are those it names other than only
// as an owner; a chat role is no person.
func TestSubjects(t *testing.T) {
	tests := []struct {
		q     string
		named map[string]bool
		want  map[string]bool
	}{
		{"What does Melanie think about Caroline's decision to adopt?", map[string]bool{"Melanie": true, "Caroline": true},
			map[string]bool{"Melanie": true, "Caroline": false}},
		{"How long does John usually hold the yoga pose he shared with Tim?", map[string]bool{"John": true, "Tim": true},
			map[string]bool{"John": true, "Tim": true}},
		{"What sparked John’s interest in education?", map[string]bool{"John": true, "Maria": false},
			map[string]bool{"John": false}},
		{"Did Ana Lopez and the user meet Ben Ruiz' sister?", map[string]bool{"Ana Lopez": true, "Ben Ruiz": true, "user": true},
			map[string]bool{"Ana Lopez": true, "Ben Ruiz": false}},
	}
	for _, tc := range tests {
		if got := subjects(tc.q, tc.named); !maps.Equal(got, tc.want) {
			t.Errorf("subjects(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// Through the index: a reply that asks what the question asks is asking;
// a turn that states it, or states more than it asks, or opens the
// exchange, is not. Of the authors, only one the question does not ask
// about is another's.
func TestAsksAndOtherAuthor(t *testing.T) {
	e := openMemory(t, nil)
	addTurn(t, e, "chat/s1/turn_01.md", "John", "Did you know? I hold the yoga pose every morning now.", "")
	addTurn(t, e, "chat/s1/turn_02.md", "Tim", "That's a tough one! How long do you usually hold that yoga pose?", "In reply to John: I hold the yoga pose every morning now.")
	addTurn(t, e, "chat/s1/turn_03.md", "John", "I usually hold the yoga pose for a minute. How long do you?", "In reply to Tim: How long do you usually hold that yoga pose?")
	addTurn(t, e, "chat/s1/turn_04.md", "Tim", "Nice, a minute of the pose is long.", "In reply to John: I usually hold the yoga pose for a minute.")
	q := "How long does John usually hold the yoga pose?"
	ranked, err := e.index.RankIn(q, 10, search.ByScore, search.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	asks := e.asks(ranked.Hits, ranked.Says)
	other := e.otherAuthor(ranked.Hits, subjects(q, e.named(&ranked.Result)))
	for i, h := range ranked.Hits {
		if got, want := asks(i), h.Path == "chat/s1/turn_02.md"; got != want {
			t.Errorf("asks(%s) = %v, want %v", h.Path, got, want)
		}
		want := ""
		if h.Path == "chat/s1/turn_02.md" || h.Path == "chat/s1/turn_04.md" {
			want = "Tim"
		}
		if got := other(i); got != want {
			t.Errorf("otherAuthor(%s) = %q, want %q", h.Path, got, want)
		}
	}
	if len(ranked.Hits) != 4 {
		t.Errorf("%d hits, want the 4 turns", len(ranked.Hits))
	}
	// Neighbours: turns next to each other in the exchange's folder.
	addTurn(t, e, "chat/s2/turn_01.md", "John", "A yoga pose a day.", "")
	ranked, err = e.index.RankIn("yoga pose", 10, search.ByScore, search.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	for i, h := range ranked.Hits {
		at[h.Path] = i
	}
	beside := e.neighbours(ranked.Hits, e.episodes(ranked.Hits))
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"chat/s1/turn_02.md", "chat/s1/turn_03.md", true},
		{"chat/s1/turn_04.md", "chat/s1/turn_03.md", true},
		{"chat/s1/turn_02.md", "chat/s1/turn_04.md", false},
		{"chat/s1/turn_01.md", "chat/s1/turn_02.md", false}, // an opener replies to nothing: no piece
		{"chat/s1/turn_01.md", "chat/s2/turn_01.md", false},
	} {
		i, okI := at[tc.a]
		j, okJ := at[tc.b]
		if !okI || !okJ {
			t.Fatalf("%s or %s not among the matches %v", tc.a, tc.b, at)
		}
		if got := beside(i, j); got != tc.want {
			t.Errorf("neighbours(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
