package retrieve

import (
	"fmt"
	"math"
	"slices"

	"github.com/arbormem/arbor/core/internal/search"
)

// Piece length (a length prior on the pieces of an exchange): BM25
// normalizes a match by the length of its field, and a piece's content
// field is mostly the turns it replies to, so a short acknowledgement
// ("Thanks! Take care, see ya!") scores like a turn that tells something
// whenever its flow holds the question's words. Yet the turns that tell
// something are the evidence: among the 30 best matches of the LoCoMo
// questions of the benchmark's tuning half, a turn of 31 to 62 words is
// gold five times as often as one of 7 to 14 (bench/retrieval/mechanisms.md).
// So among the rerankPool best matches a piece's raw score is multiplied by
// (n/m)^lengthPower,
// where n is the number of words it says itself (ownCached.said, at least
// 1 and at most lengthCap·m) and m the median of n over the pool's pieces:
// relative to the pool, so that it reads the same in a tree of terse chat
// turns as in one of long ones, and bounded both ways (×0.84 for a one-word
// piece beside a median of 30 words, ×1.035 at most up): a prior that
// settles near-ties, not a rule that outranks the words. Whole entries (one
// chat session, a hand-written note) are left alone, as by the other
// exchange rules. The power and the cap were chosen on the tuning half of
// the retrieval benchmark from 0.05, 0.1, 0.15 and 1.5, 2, 3 (the tuning
// figures span 0.002 of Recall@10) and hold on its validation half
// (bench/retrieval/ABLATION.md).
const (
	lengthPower = 0.05
	lengthCap   = 2.0
)

// pieceLength multiplies the scores of the pieces by their length prior
// and returns the reason code of what it did, or "" when no hit is a piece.
func (rv *Retriever) pieceLength(hits []search.Hit) string {
	if rv.off.PieceLength {
		return ""
	}
	var at []int
	var said []float64
	for i, h := range hits {
		if h.Kind == "context" {
			continue
		}
		if en, ok := rv.catalog.Get(h.Path); ok && isReply(en) {
			at = append(at, i)
			said = append(said, float64(max(1, rv.ownCached(en).said)))
		}
	}
	if len(at) == 0 {
		return ""
	}
	sorted := slices.Clone(said)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	for k, i := range at {
		hits[i].Raw *= math.Pow(min(said[k], lengthCap*median)/median, lengthPower)
	}
	return fmt.Sprintf("piece length: %d of the %d best matches are pieces of an exchange, their scores ×(words said / %g, the median, at most %g)^%g",
		len(at), len(hits), median, lengthCap, lengthPower)
}
