package retrieve

import (
	"math"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/internal/search"
)

// A piece's score grows with the share of the question's terms its whole
// episode says, in any of its entries and whether or not they are among
// the matches; an entry outside any exchange is left alone, and episodes
// beyond the entries a question may read are left alone too.
func TestQueryEpisodeCoverage(t *testing.T) {
	e := openMemory(t, nil)
	// Session 1 tells it in pieces: the class, the bowl, the glaze.
	addTurn(t, e, "chat/session_01/turn_01.md", "Ana", "I started a pottery class on Tuesdays.", "")
	addTurn(t, e, "chat/session_01/turn_02.md", "Bo", "Nice! What did you make?", "In reply to Ana: I started a pottery class on Tuesdays.")
	addTurn(t, e, "chat/session_01/turn_03.md", "Ana", "A bowl, and the glaze came out blue.", "In reply to Bo: Nice! What did you make?")
	// Session 2 mentions the class alone.
	addTurn(t, e, "chat/session_02/turn_01.md", "Ana", "The pottery class was cancelled this week.", "")
	addTurn(t, e, "chat/session_02/turn_02.md", "Bo", "Too bad, maybe next week then.", "In reply to Ana: The pottery class was cancelled this week.")
	addTurn(t, e, "notes/hobbies/pottery.md", "Ana", "Pottery class fees are due in May.", "")

	q := "pottery class glaze"
	rule := func(budget int) func(search.Ranked, *search.Result) string {
		return func(rk search.Ranked, r *search.Result) string {
			return e.coverage(r.Hits, rk.Said, len(r.Terms), budget)
		}
	}
	got, reason := rescored(t, e, q, rule(coverageBudget))
	want := map[string]float64{
		"chat/session_01/turn_01.md": 1 + coverageWeight, // its episode says all three terms
		"chat/session_01/turn_02.md": 1 + coverageWeight,
		"chat/session_01/turn_03.md": 1 + coverageWeight,
		"chat/session_02/turn_01.md": 1 + coverageWeight*2/3, // "pottery", "class"
		"chat/session_02/turn_02.md": 1 + coverageWeight*2/3,
		"notes/hobbies/pottery.md":   1,
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			continue // not among the matches
		}
		if math.Abs(g-w) > 1e-9 {
			t.Errorf("%s ×%.4f, want ×%.4f", p, g, w)
		}
	}
	if _, ok := got["chat/session_01/turn_03.md"]; !ok {
		t.Fatalf("the glaze turn is not among the matches: %v", got)
	}
	if !strings.Contains(reason, "episode coverage: ") || !strings.Contains(reason, "chat/session_01 with 1.00") {
		t.Errorf("reason %q lacks the coverage certificate", reason)
	}

	// Reading at most 3 entries: the first episode read (that of the best
	// match) fits, the other does not and is left alone.
	got, reason = rescored(t, e, q, rule(3))
	scored, alone := 0, 0
	for p, g := range got {
		if strings.HasPrefix(p, "notes/") {
			continue
		}
		if g == 1 {
			alone++
		} else {
			scored++
		}
	}
	if scored == 0 || alone == 0 || !strings.Contains(reason, "1 more episode left alone (a question reads at most 3 entries)") {
		t.Errorf("budget 3: %d pieces scored, %d left alone, reason %q", scored, alone, reason)
	}
}
