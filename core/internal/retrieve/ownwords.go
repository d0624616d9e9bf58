package retrieve

import (
	"fmt"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Own words (a structural reranker): a piece of an exchange matches a
// question through what it says and through the turns it replies to (its
// flow, indexed with it so that a reply keeps its context). The piece that
// says the question's words itself is more often the evidence than the
// reply that follows them, so among the rerankPool best matches a piece's
// raw score is multiplied by 1 + ownWeight·c, where c is the share of the
// question's terms its own words hold: its narrative and facts, without
// the flow and without the provenance (the author's name would count the
// speaker twice, after the named-author rule). Counting the own words twice
// in the index instead lost recall (bench/retrieval/mechanisms.md): it
// lifts every long turn, where the share lifts the turns that say what the
// question asks.
const ownWeight = 0.5

// ownCap bounds the own words kept between queries (analysing a turn's
// words again for every question was a third of a query's time); past it
// the cache starts over.
const ownCap = 16384

// ownCached is the Words of an entry's own words, and of those with its
// title and summary (statedOf), and how many words it says, valid while the catalog holds that very
// entry (a change loads a new one).
type ownCached struct {
	en     *tree.Entry
	words  search.Words
	stated search.Words
	said   int // the number of words of its own words, for pieceLength
}

// ownWords raises the scores of the pieces by the share of the question's
// terms they say themselves and returns the reason code of what it did, or
// "" when no hit is a piece.
func (rv *Retriever) ownWords(r *search.Result, says func(search.Words) int) string {
	if len(r.Terms) == 0 || rv.off.OwnWords {
		return ""
	}
	n := 0
	for i := range r.Hits {
		h := &r.Hits[i]
		if h.Kind == "context" {
			continue
		}
		en, ok := rv.catalog.Get(h.Path)
		if !ok || !isReply(en) {
			continue
		}
		h.Raw *= 1 + ownWeight*float64(says(rv.ownOf(en)))/float64(len(r.Terms))
		n++
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("own words: %d of the %d best matches are pieces of an exchange, their scores ×(1 + %g × the share of the question's terms they say themselves)",
		n, len(r.Hits), ownWeight)
}

// ownOf returns the Words of what en says itself: its narrative and facts,
// without its flow and provenance.
func (rv *Retriever) ownOf(en *tree.Entry) search.Words {
	return rv.ownCached(en).words
}

// statedOf returns the Words of what en states: its own words, title and
// summary (a curator's title says what the entry is about), without its
// flow, provenance and path.
func (rv *Retriever) statedOf(en *tree.Entry) search.Words {
	return rv.ownCached(en).stated
}

func (rv *Retriever) ownCached(en *tree.Entry) ownCached {
	if c, ok := rv.own[en.Path]; ok && c.en == en {
		return c
	}
	own := *en
	own.RawConcept = api.RawConcept{}
	text := own.Text()
	// What it says, without the reason it was written for (curate's, the
	// same for every turn of an import).
	own.Reason = ""
	words := search.Analyze(text)
	// The stated words are those of title, summary and text joined by line
	// breaks; the text, most of it, is analyzed once.
	c := ownCached{en, words, words.And(search.Analyze(en.Title + "\n" + en.Summary)), len(strings.Fields(own.Text()))}
	if len(rv.own) >= ownCap || rv.own == nil {
		rv.own = map[string]ownCached{}
	}
	rv.own[en.Path] = c
	return c
}
