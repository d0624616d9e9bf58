package retrieve

import (
	"math"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
)

// A piece that tells something outweighs a short acknowledgement matching
// only through the turn it replies to, by its length relative to the
// median piece of the pool, bounded at twice the median; an entry that is
// no piece of an exchange is left alone.
func TestQueryPieceLength(t *testing.T) {
	e := openMemory(t, nil)
	// Own words: 8, 2, 4 and 30 words; the median of the pool's pieces
	// (the upper one of an even count) is 8.
	addTurn(t, e, "chat/session_01/turn_02.md", "Ana", "We finished the mosaic table for the garden.", "In reply to Bo: any news?")
	addTurn(t, e, "chat/session_01/turn_03.md", "Bo", "Mosaic, wow!", "In reply to Ana: We finished the mosaic table for the garden.")
	addTurn(t, e, "chat/session_01/turn_04.md", "Ana", "The mosaic took long.", "In reply to Bo: Mosaic, wow!")
	addTurn(t, e, "chat/session_01/turn_05.md", "Bo", strings.Repeat("mosaic tiles ", 15), "In reply to Ana: The mosaic took long.")
	op := api.Operation{Type: api.OpAdd, Path: "garden/tables/mosaic_table_build.md", Title: "Mosaic table build",
		Content: api.Content{Narrative: &api.Narrative{Text: "Tiles were laid on the mosaic mesh."}}, Reason: "notes"}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{op}}); res.Summary.Added != 1 {
		t.Fatalf("curate: %+v", res)
	}

	got, reason := rescored(t, e, "mosaic", func(_ search.Ranked, r *search.Result) string {
		return e.pieceLength(r.Hits)
	})
	for path, want := range map[string]float64{
		"chat/session_01/turn_02.md":          1,
		"chat/session_01/turn_03.md":          math.Pow(2.0/8, lengthPower),
		"chat/session_01/turn_04.md":          math.Pow(4.0/8, lengthPower),
		"chat/session_01/turn_05.md":          math.Pow(lengthCap, lengthPower),
		"garden/tables/mosaic_table_build.md": 1,
	} {
		if math.Abs(got[path]-want) > 1e-9 {
			t.Errorf("%s: score ×%.4f, want ×%.4f", path, got[path], want)
		}
	}
	if want := "piece length: 4 of the 5 best matches are pieces of an exchange"; !strings.HasPrefix(reason, want) {
		t.Errorf("reason %q, want it to begin %q", reason, want)
	}

	res, err := e.Query(api.SearchParams{Query: "mosaic", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Reason, "piece length: 4 of the 5 best matches") {
		t.Errorf("reason %q lacks the piece-length certificate", res.Reason)
	}
}
