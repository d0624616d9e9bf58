package retrieve

import (
	"fmt"
	"math"
	"unicode"

	"github.com/arbormem/arbor/core/internal/search"
)

// Short remarks (a document-length prior, as in language-model retrieval): a
// piece of an exchange (an entry whose flow holds replies, isReply) that
// says little itself is mostly a reaction ("Thanks, that's so cool!") that
// matches a question through the turns it replies to, while the fact sits in
// a neighbouring piece. BM25's length normalization favours such short
// pieces, so among the rerankPool best matches a piece with fewer than
// remarkWords words of its own (all it holds but the flow: what was said
// plus its provenance, task and author) has its raw score multiplied by
// √(words/remarkWords). Entries that are not pieces of an exchange are left
// alone: a short curated entry can be the whole fact. In the LoCoMo
// benchmark gold turns have a median of 35 words and 3.5% of them fewer than
// 12, against 22 and 16% of all turns; 28 (about 20 words said) was chosen
// there (bench/retrieval/mechanisms.md).
const remarkWords = 28

// brevity lowers the scores of short pieces and returns the reason code of
// what it did, or "".
func (rv *Retriever) brevity(hits []search.Hit) string {
	if rv.off.ShortRemarks {
		return ""
	}
	n := 0
	for i := range hits {
		if hits[i].Kind == "context" {
			continue
		}
		en, ok := rv.catalog.Get(hits[i].Path)
		if !ok || !isReply(en) {
			continue
		}
		// Its own words: everything it says but the turns it replies to.
		own := *en
		own.RawConcept.Flow = ""
		if w := wordCount(own.Text()); w < remarkWords {
			// At least one word: a zero score would leave nothing for the
			// direct-answer ratio to compare.
			hits[i].Raw *= math.Sqrt(float64(max(w, 1)) / float64(remarkWords))
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("short remarks: %d of the %d best matches are pieces of an exchange with fewer than %d words of their own, their scores ×√(words/%d)",
		n, len(hits), remarkWords, remarkWords)
}

// wordCount is len(strings.Fields(s)) without building the slice: this
// runs for every piece among the pool's 50 hits of every query.
func wordCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
