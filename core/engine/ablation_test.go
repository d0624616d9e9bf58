package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/internal/ablation"
)

type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

// openAblated opens an engine over fs with the mechanisms of off switched
// off, and switches them on again before it returns: the engine keeps what
// it was opened with.
func openAblated(t *testing.T, fs host.FS, clock host.Clock, off ablation.Set) *Engine {
	t.Helper()
	prev := ablation.SwitchOff(off)
	e, _, err := Open(Options{FS: fs, Clock: clock})
	ablation.SwitchOff(prev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// The benchmark's ablation switches reach search and the evidence rules
// of an engine opened while they are set, and only of that engine.
func TestAblationSwitches(t *testing.T) {
	clock := &stepClock{}
	fs := host.NewMemFS()
	e := openAblated(t, fs, clock, 0)
	add := func(day time.Time, path, title, text string) {
		clock.t = day
		res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: path, Title: title,
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "chat import"}}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate %s: %+v", path, res)
		}
	}
	d := func(m time.Month, day int) time.Time { return time.Date(2023, m, day, 12, 0, 0, 0, time.UTC) }
	add(d(5, 22), "chats/may/wedding_day.md", "Chat", "I was at my cousin's wedding today.")
	add(d(6, 20), "chats/june/wedding_plans.md", "Chat", "My cousin's wedding, the wedding planning, wedding dresses and the wedding cake.")
	// "harbor" in four entries below, "lantern" in two: the entry
	// saying only "lantern", in its title too, outscores the long one
	// saying both, and a query ranks by score, not full matches first.
	filler := strings.Repeat("the evening tide rolled over the stones while gulls circled ", 8)
	add(d(6, 20), "notes/sea/long_walk.md", "Walk", "A harbor lantern. "+filler)
	add(d(6, 20), "notes/sea/lantern.md", "Lantern", "The lantern, a lantern.")
	for _, p := range []string{"notes/sea/a.md", "notes/sea/b.md", "notes/sea/c.md"} {
		add(d(6, 20), p, "Note", "The harbor at dawn.")
	}
	if _, err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	clock.t = d(6, 22)
	first := func(e *Engine, q string) (string, string) {
		t.Helper()
		res, err := e.Query(api.SearchParams{Query: q, Limit: 5})
		if err != nil || len(res.Results) == 0 {
			t.Fatalf("query %q: %+v, %v", q, res, err)
		}
		return res.Results[0].Path, res.Reason
	}
	const timed, both = "my cousin's wedding a month ago", "harbor lantern"
	if p, why := first(e, timed); p != "chats/may/wedding_day.md" || !strings.Contains(why, `time "a month ago"`) {
		t.Errorf("every mechanism on, %q: first %s, reason %q", timed, p, why)
	}
	if p, _ := first(e, both); p != "notes/sea/lantern.md" {
		t.Errorf("every mechanism on, %q: first %s, want the best score", both, p)
	}
	off := openAblated(t, fs, clock, ablation.Of(ablation.TimeWindow))
	if p, why := first(off, timed); p != "chats/june/wedding_plans.md" || strings.Contains(why, "time") {
		t.Errorf("time window off, %q: first %s, reason %q", timed, p, why)
	}
	// Switched on again: an engine opened now has every mechanism.
	on := openAblated(t, fs, clock, 0)
	if p, why := first(on, timed); p != "chats/may/wedding_day.md" || !strings.Contains(why, `time "a month ago"`) {
		t.Errorf("switched on again, %q: first %s, reason %q", timed, p, why)
	}
}
