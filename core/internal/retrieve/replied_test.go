package retrieve

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
)

// The turns a best match replies to borrow repliedShare of its score, the
// one before that repliedShare·repliedDecay, as far back as its flow
// quotes: a turn among the matches has the credit added, a turn that
// matches no word of the question is brought in with it, and a turn its
// flow does not quote, or one a filter leaves out, gets nothing.
func TestQueryRepliedTo(t *testing.T) {
	e := openMemory(t, nil)
	addTurn(t, e, "chat/session_01/turn_001.md", "Ana", "Hello there, long time!", "")
	addTurn(t, e, "chat/session_01/turn_002.md", "Bo", "Good to see you. Any news?", "In reply to Ana: Hello there, long time!")
	addTurn(t, e, "chat/session_01/turn_003.md", "Ana", "I made my first video game and released it last week.", "In reply to Ana: Hello there, long time!\nIn reply to Bo: Good to see you. Any news?")
	addTurn(t, e, "chat/session_01/turn_004.md", "Bo", "Congrats on the release! Players will love it.", "In reply to Bo: Good to see you. Any news?\nIn reply to Ana: I made my first video game and released it last week.")
	addTurn(t, e, "chat/session_01/turn_005.md", "Ana", "Thanks, the players already sent fan mail.", "In reply to Ana: I made my first video game and released it last week.\nIn reply to Bo: Congrats on the release! Players will love it.")

	// "congrats" and "fan" are said by turns 4 and 5 only (turn 5's flow
	// quotes turn 4), so turn 3 is no match: it comes in through them.
	got, reason := rescored(t, e, "congrats fan", func(rk search.Ranked, r *search.Result) string {
		if slices.ContainsFunc(r.Hits, func(h search.Hit) bool { return h.Path == "chat/session_01/turn_003.md" }) {
			t.Fatalf("turn 3 matches the question itself; the test needs it out of the matches")
		}
		return e.replied(r, rk.Says, func(string) bool { return true })
	})
	// Each raw score is 10 before the rule (rescored): turn 4 lends 5 to
	// turn 3 and 2.5 to turn 2; turn 5 lends 5 to turn 4 (a match) and 2.5
	// to turn 3, which keeps the larger credit.
	want := map[string]float64{
		"chat/session_01/turn_003.md": 0.5,
		"chat/session_01/turn_002.md": 0.25,
		"chat/session_01/turn_004.md": 1.5,
		"chat/session_01/turn_005.md": 1,
	}
	for p, w := range want {
		if g, ok := got[p]; !ok || math.Abs(g-w) > 1e-9 {
			t.Errorf("%s: score ×%.4f (present %v), want ×%g", p, g, ok, w)
		}
	}
	if _, ok := got["chat/session_01/turn_001.md"]; ok {
		t.Errorf("turn 1 got credit: no best match's flow quotes it")
	}
	if !strings.Contains(reason, "replied-to: ") || !strings.Contains(reason, "1 among the matches, 2 brought in") {
		t.Errorf("reason %q", reason)
	}

	// A filter that leaves turn 3 out keeps it out.
	got, _ = rescored(t, e, "congrats fan", func(rk search.Ranked, r *search.Result) string {
		return e.replied(r, rk.Says, func(p string) bool { return p != "chat/session_01/turn_003.md" })
	})
	if _, ok := got["chat/session_01/turn_003.md"]; ok {
		t.Errorf("turn 3 brought in although the filter leaves it out")
	}

	// Switched off, nothing changes.
	e.off.RepliedTo = true
	got, reason = rescored(t, e, "congrats fan", func(rk search.Ranked, r *search.Result) string {
		return e.replied(r, rk.Says, func(string) bool { return true })
	})
	if reason != "" || len(got) != 2 || got["chat/session_01/turn_004.md"] != 1 {
		t.Errorf("off: %v, reason %q", got, reason)
	}
}

// Through Query: the turn that holds the news, in other words than the
// question, is among the results on its reply's credit, and only then.
func TestQueryRepliedToRanks(t *testing.T) {
	for _, off := range []bool{false, true} {
		e := openMemory(t, nil)
		e.off.RepliedTo = off
		addTurn(t, e, "chat/session_01/turn_001.md", "Ana", "I made my first video game and released it last week.", "")
		addTurn(t, e, "chat/session_01/turn_002.md", "Bo", "Congrats! Players will love it.", "In reply to Ana: I made my first video game and released it last week.")
		addTurn(t, e, "chat/session_02/turn_001.md", "Bo", "My cat knocked the plant over again.", "")
		res, err := e.Query(api.SearchParams{Query: "congrats players", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"chat/session_01/turn_002.md", "chat/session_01/turn_001.md"}
		if off {
			want = want[:1]
		}
		if got := paths(res); !slices.Equal(got, want) {
			t.Errorf("off %v: results %v, want %v (reason %q)", off, got, want, res.Reason)
		}
	}
}

// A best match that says none of the question's terms itself (it matched
// through the turns it quotes) lends nothing: those turns match the words
// themselves.
func TestQueryRepliedToNotThroughFlow(t *testing.T) {
	e := openMemory(t, nil)
	addTurn(t, e, "chat/session_01/turn_001.md", "Ana", "I started a pottery class downtown.", "")
	addTurn(t, e, "chat/session_01/turn_002.md", "Bo", "What did you make there?", "In reply to Ana: I started a pottery class downtown.")
	addTurn(t, e, "chat/session_01/turn_003.md", "Ana", "A blue bowl, though the glaze cracked.", "In reply to Ana: I started a pottery class downtown.\nIn reply to Bo: What did you make there?")
	got, reason := rescored(t, e, "pottery class make", func(rk search.Ranked, r *search.Result) string {
		// Only turn 3, which says none of the terms, lends.
		for i := range r.Hits {
			if r.Hits[i].Path != "chat/session_01/turn_003.md" {
				r.Hits[i].Raw = 1
			}
		}
		return e.replied(r, rk.Says, func(string) bool { return true })
	})
	if reason != "" || got["chat/session_01/turn_003.md"] != 1 || got["chat/session_01/turn_002.md"] != 0.1 {
		t.Errorf("scores %v, reason %q: want nothing lent", got, reason)
	}
}
