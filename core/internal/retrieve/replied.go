package retrieve

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Replied-to credit (neighbouring turns): the turn that holds an answer
// often says it in other words than the question, while the reply after
// it repeats them ("Congrats on releasing your game!" after "I made my
// first game and released it"); the reply matches, the turn it replies to
// may not even be among the best matches. A piece of an exchange quotes
// the turns it replies to in its flow, and they are the entries before it
// in its folder (ingestion names the pieces in order, turn_011.md before
// turn_012.md). So each of the repliedTop best matches that is a piece and
// says at least one of the question's terms itself (ownOf) lends
// repliedShare of its raw score to the turn just before it,
// repliedShare·repliedDecay to the one before that, and so on for as many
// turns as its flow quotes: added to the score of a turn already among
// the matches, or bringing one in with that score. Only the very best
// lend, since a reply far down the pool says little about its turn; and a
// piece that matched only through the turns it quotes lends nothing, since
// they match those words themselves (without that condition the answer
// "A blue bowl" to "What did you make there?" lifted the question above
// it).
//
// The values were chosen on the tuning half of the retrieval benchmark
// (the share from 0.15 to 0.7, 1 to 10 lenders, a relative-score floor for
// lending, the one turn replied to or all of the flow's) and hold on its
// validation half (bench/retrieval/ABLATION.md, "replied-to"). An earlier
// form, which multiplied a piece's score by its repliers' among the 50
// best matches and brought none in, helped on the tuning half only
// (bench/retrieval/mechanisms.md).
const (
	repliedTop   = 2
	repliedShare = 0.5
	repliedDecay = 0.5
)

// replied adds the credit of the repliedTop best matches to the turns they
// reply to, bringing in those keep admits that are not among r.Hits, and
// returns the reason code of what it did, or "" when it did nothing.
func (rv *Retriever) replied(r *search.Result, says func(search.Words) int, keep func(path string) bool) string {
	if rv.off.RepliedTo {
		return ""
	}
	best := make([]int, 0, len(r.Hits))
	at := make(map[string]int, len(r.Hits))
	for i, h := range r.Hits {
		at[h.Path] = i
		if h.Kind != "context" {
			best = append(best, i)
		}
	}
	slices.SortFunc(best, func(a, b int) int {
		if c := cmp.Compare(r.Hits[b].Raw, r.Hits[a].Raw); c != 0 {
			return c
		}
		return strings.Compare(r.Hits[a].Path, r.Hits[b].Path)
	})
	credit := map[string]float64{}
	var lent []string // in the order credited, for a deterministic result
	for _, i := range best[:min(repliedTop, len(best))] {
		h := r.Hits[i]
		en, ok := rv.catalog.Get(h.Path)
		if !ok || !isReply(en) {
			continue
		}
		quoted := strings.Count(en.RawConcept.Flow, "\n"+tree.ReplyPrefix) + 1
		folder := rv.catalog.Folder(path.Dir(h.Path))
		j, found := slices.BinarySearch(folder, h.Path)
		if !found {
			continue
		}
		if says(rv.ownOf(en)) == 0 {
			// It matched through the turns it quotes: they match on their
			// own, and lending to them would count the same words twice.
			continue
		}
		share := repliedShare
		for d := 1; d <= quoted && j-d >= 0; d++ {
			p := folder[j-d]
			if _, seen := credit[p]; !seen {
				lent = append(lent, p)
			}
			credit[p] = max(credit[p], share*h.Raw)
			share *= repliedDecay
		}
	}
	if len(lent) == 0 {
		return ""
	}
	raised, added := 0, 0
	for _, p := range lent {
		if i, ok := at[p]; ok {
			r.Hits[i].Raw += credit[p]
			raised++
			continue
		}
		if !keep(p) {
			continue
		}
		h, ok := rv.nearHit(p)
		if !ok {
			continue
		}
		h.Raw = credit[p]
		h.Score = search.Normalize(h.Raw)
		r.Hits = append(r.Hits, h)
		added++
	}
	r.Total += added
	return fmt.Sprintf("replied-to: the turns the %d best matches reply to get %g of their score (×%g a turn further back): %d among the matches, %d brought in",
		repliedTop, repliedShare, repliedDecay, raised, added)
}
