package retrieve

import (
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time { return c.t }

// A question about a time ranks the entries stored then first, says so in
// its reason, and is cached per day it resolves to.
func TestQueryTime(t *testing.T) {
	clock := &testClock{}
	e := openMemory(t, clock)
	add := func(day time.Time, path, text string) {
		clock.t = day
		res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: path, Title: "Chat",
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "chat import"}}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	d := func(m time.Month, day int) time.Time { return time.Date(2023, m, day, 12, 0, 0, 0, time.UTC) }
	// The recent entry says more about weddings: it wins without a time.
	add(d(5, 22), "chats/may/wedding_day.md", "I was at my cousin's wedding today.")
	add(d(6, 20), "chats/june/wedding_plans.md", "My cousin's wedding, the wedding planning, wedding dresses and the wedding cake.")
	add(d(6, 20), "chats/june/gardening.md", "I planted tomatoes in the garden.")
	clock.t = d(6, 22)
	plain, err := e.Query(api.SearchParams{Query: "cousin's wedding", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Results[0].Path != "chats/june/wedding_plans.md" || strings.Contains(plain.Reason, "time") {
		t.Fatalf("without a time: first %s, reason %q", plain.Results[0].Path, plain.Reason)
	}
	res, err := e.Query(api.SearchParams{Query: "my cousin's wedding a month ago", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutOfDomain || res.Results[0].Path != "chats/may/wedding_day.md" {
		t.Errorf("a month ago: order %v", paths(res))
	}
	if want := `time "a month ago" → 2023-05-07..2023-06-06: 1 of the 50 best matches dated within it, their scores ×2`; !strings.Contains(res.Reason, want) {
		t.Errorf("reason %q lacks %q", res.Reason, want)
	}
	// The same words a month later mean another month: no cached answer.
	clock.t = d(7, 22)
	later, err := e.Query(api.SearchParams{Query: "my cousin's wedding a month ago", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if later.Tier == api.TierExactCache || later.Results[0].Path != "chats/june/wedding_plans.md" || !strings.Contains(later.Reason, "2023-06-07..2023-07-07: 1 of") {
		t.Errorf("a month later: tier %d, order %v, reason %q", later.Tier, paths(later), later.Reason)
	}
	// A range that frames the question is no search term: the gardening
	// entry matches "garden" alone and is found.
	clock.t = d(6, 22)
	r, err := e.Query(api.SearchParams{Query: "garden in the past two weeks", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || r.Results[0].Path != "chats/june/gardening.md" || r.OutOfDomain {
		t.Errorf("range: %v, reason %q", paths(r), r.Reason)
	}
}

func paths(r api.QueryResult) []string {
	var out []string
	for _, h := range r.Results {
		out = append(out, h.Path)
	}
	return out
}

// The words asking for a duration ("how many days ago") are not searched:
// an entry saying "days" and "ago" often does not outrank the one naming
// the person asked about, and their absence never makes a question out of
// domain.
func TestQueryDurationWords(t *testing.T) {
	e := openMemory(t, nil)
	for path, text := range map[string]string{
		"chats/april/networking.md": "Two days ago I called a designer; a few days ago I called a writer; days ago, days ago, I meet people all the time.",
		"chats/april/lunch.md":      "Lunch with Emma, a freelance writer, today; Emma may join the project.",
	} {
		res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: path, Title: "Chat",
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "chat import"}}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	plain, err := e.index.Search("days ago meet Emma", 5)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Hits[0].Path != "chats/april/networking.md" {
		t.Fatalf("plain search: first %s; the test needs the duration words to decide it", plain.Hits[0].Path)
	}
	res, err := e.Query(api.SearchParams{Query: "How many days ago did I meet Emma?", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutOfDomain || res.Results[0].Path != "chats/april/lunch.md" {
		t.Fatalf("first %v (out of domain %t), want the entry naming Emma", paths(res), res.OutOfDomain)
	}
}

// Words that shape a question ("attributes", "describe", "in common") never
// make it out of domain; a content word the tree lacks still does.
func TestQueryFrameWords(t *testing.T) {
	e := openMemory(t, nil)
	res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "people/friends/john.md", Title: "John",
		Content: api.Content{Narrative: &api.Narrative{Text: "John is patient, generous and funny; he plays the drums."}}, Reason: "note"}}})
	if res.Summary.Added != 1 {
		t.Fatalf("curate: %+v", res)
	}
	for q, ood := range map[string]bool{
		"What attributes describe John?":          false,
		"Which types of drums does John play?":    false,
		"What does John have in common with Tom?": false,
		"What guitars does John collect?":         true,
	} {
		r, err := e.Query(api.SearchParams{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if r.OutOfDomain != ood {
			t.Errorf("%q: out of domain %t (%s), want %t", q, r.OutOfDomain, r.Reason, ood)
		}
	}
}

// A question about a time goes by when a thing was said (the raw concept's
// timestamp), not by when it was stored: a year of chats ingested today is
// not all "a week ago".
func TestQueryTimeByTimestamp(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	e := openMemory(t, clock)
	for path, turn := range map[string]struct{ said, text string }{
		"ana_and_bo/session_01/turn_001.md": {"2025-06-01T00:00:00Z", "The kiln cracked my bowl, and the kiln is old."},
		"ana_and_bo/session_09/turn_001.md": {"2026-02-22", "The kiln finally fired my vase."},
		"ana_and_bo/session_05/turn_001.md": {"", "A kiln costs more than a car."},
	} {
		op := api.Operation{Type: api.OpAdd, Path: path, Title: "Ana",
			Content: api.Content{Narrative: &api.Narrative{Text: turn.text},
				RawConcept: &api.RawConcept{Task: "a turn", Author: "Ana", Timestamp: turn.said}}, Reason: "chat import"}
		if res := e.Curate(api.CurateParams{Operations: []api.Operation{op}}); res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	res, err := e.Query(api.SearchParams{Query: "what about the kiln a week ago", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Results[0].Path != "ana_and_bo/session_09/turn_001.md" {
		t.Errorf("order %v: want the turn said a week ago first", paths(res))
	}
	// The entry without a timestamp was stored today: outside the week
	// before, like the one said last June.
	if !strings.Contains(res.Reason, "1 of the 50 best matches dated within it") {
		t.Errorf("reason %q: want exactly the turn of 22 February dated within", res.Reason)
	}
}

// TestWithoutFramingLong cuts the duration words of a question as long as
// a query may be, each once, and keeps the rest, time ranges included.
func TestWithoutFramingLong(t *testing.T) {
	unit := "what changed in the past two weeks, how many days ago did it ship? "
	n := api.MaxQueryBytes / len(unit)
	q := strings.Repeat(unit, n)
	got := withoutFraming(q, Off{})
	if want := strings.Repeat("what changed in the past two weeks,   did it ship? ", n); got != want {
		t.Errorf("withoutFraming:\n got %q\nwant %q", got, want)
	}
}

// A time window re-ranks, it never puts a whole stretch of time ahead of
// the rest: a window holding most of the pool leaves the scores as they
// were, and a time not named with confidence ("as of May 2023", a state up
// to then, not an event in May) raises nothing.
func TestQueryTimeRerankOnly(t *testing.T) {
	clock := &testClock{}
	e := openMemory(t, clock)
	add := func(day time.Time, path, text string) {
		clock.t = day
		res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: path, Title: "Chat",
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "chat import"}}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	d := func(m time.Month, day int) time.Time { return time.Date(2023, m, day, 12, 0, 0, 0, time.UTC) }
	add(d(3, 10), "chats/pottery/firing.md", "The kiln, the old kiln: the kiln fired my vase and the kiln glazed it.")
	add(d(5, 10), "chats/pottery/shop.md", "A shop sells a kiln and a thousand other tools for potters, painters and weavers.")
	add(d(5, 12), "chats/pottery/class.md", "Our class visited a kiln, then a museum, a park, a bakery and a bookshop downtown.")
	clock.t = d(6, 22)
	plain, err := e.Query(api.SearchParams{Query: "the kiln", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Results) != 3 || plain.Results[0].Path != "chats/pottery/firing.md" {
		t.Fatalf("without a time: %v", paths(plain))
	}
	// ×2 would lift both May entries over the March one.
	if m, may := plain.Results[0].Score, plain.Results[1].Score; m/(1-m) >= 2*may/(1-may) {
		t.Fatalf("raw scores %v: the test needs ×2 to reorder them", paths(plain))
	}
	wide, err := e.Query(api.SearchParams{Query: "the kiln in May 2023", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if wide.Results[0].Path != "chats/pottery/firing.md" || !strings.Contains(wide.Reason, "2 of the 3 entries in the pool dated within it, more than 0.5 of them: scores left as they were") {
		t.Errorf("a window holding most of the pool: order %v, reason %q", paths(wide), wide.Reason)
	}
	asOf, err := e.Query(api.SearchParams{Query: "the kiln as of May 2023", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if asOf.Results[0].Path != "chats/pottery/firing.md" || strings.Contains(asOf.Reason, "time") {
		t.Errorf("a time not named with confidence: order %v, reason %q", paths(asOf), asOf.Reason)
	}
}
