package retrieve

import (
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"
	"weak"

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

// ownBudget bounds the terms each generation of the own-words cache holds
// (ownCache), whatever the size of the tree: 8 MiB of string headers (the
// strings are the lexicon's), the Words of some 1,500 LongMemEval-S chat
// sessions (10 KB, 350 distinct terms each), more than the 1,024 entries
// a tree may have for Indexed to analyze them all.
const ownBudget = 1 << 19

// ownCached is the Words of an entry's own words, and of those with its
// title and summary (statedOf), and how many words it says, valid while the
// catalog holds that very entry (a change loads a new one). The entry is
// held weakly: the cache must not keep alive the parsed entries the
// catalog let go (catalog.maxParsed).
type ownCached struct {
	en     weak.Pointer[tree.Entry]
	words  search.Words
	stated search.Words
	said   int // the number of words of its own words, for pieceLength
}

// ownCache keeps what entries say themselves between queries: analyzing a
// long entry's words again for every question was most of a question's
// time. Two generations, as in search's lexicon: when the current one holds
// ownBudget terms it becomes the old one, and what is asked of the old one
// again moves back. The entries a session asks about stay; the memory is
// bounded.
type ownCache struct {
	cur, old map[string]ownCached // by path
	terms    int                  // the terms cur holds
	budget   int                  // ownBudget; the tests set less
}

// get returns what is cached of en, the very entry.
func (c *ownCache) get(en *tree.Entry) (ownCached, bool) {
	w := weak.Make(en)
	if oc, ok := c.cur[en.Path]; ok && oc.en == w {
		return oc, true
	}
	oc, ok := c.old[en.Path]
	if !ok || oc.en != w {
		return ownCached{}, false
	}
	delete(c.old, en.Path)
	c.put(en.Path, oc)
	return oc, true
}

// put caches oc, of the entry at path, in place of what was cached of it.
func (c *ownCache) put(path string, oc ownCached) {
	c.forget(path)
	n := oc.stated.Len() // the own words and what the title and summary add
	if c.cur == nil || c.terms+n > c.budget {
		c.old, c.cur, c.terms = c.cur, map[string]ownCached{}, 0
	}
	c.cur[path] = oc
	c.terms += n
}

// forget drops what is cached of the entry at path.
func (c *ownCache) forget(path string) {
	if oc, ok := c.cur[path]; ok {
		c.terms -= oc.stated.Len()
		delete(c.cur, path)
	}
	delete(c.old, path)
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
	if c, ok := rv.own.get(en); ok {
		return c
	}
	c := analyzeOwn(en)
	rv.own.put(en.Path, c)
	return c
}

// ownText returns what en says itself: its narrative and facts, without
// its flow, provenance and the reason it was written for. The reason is
// curate's, the same for every turn of an import, and names its source
// file ("ingest inbox/ana_ben.json"), whose words would make every turn of
// the import say both speakers' names.
func ownText(en *tree.Entry) string {
	own := *en
	own.RawConcept = api.RawConcept{}
	own.Reason = ""
	return own.Text()
}

// analyzeOwn analyzes what en says itself.
func analyzeOwn(en *tree.Entry) ownCached {
	text := ownText(en)
	said := 0
	for range strings.FieldsSeq(text) {
		said++
	}
	words := search.Analyze(text)
	// The stated words are those of title, summary and text joined by line
	// breaks; the text, most of it, is analyzed once.
	return ownCached{weak.Make(en), words, words.And(search.Analyze(en.Title + "\n" + en.Summary)), said}
}

// Indexed tells the Retriever that the index took in en (a write or a
// refresh). In a tree the catalog keeps parsed whole, what the evidence
// rules read of what en says is analyzed now, beside the index's own
// analysis of it, rather than by the first question that finds it, which
// then answers in a fraction of the time over long entries
// (bench/retrieval/latency.md). In a bigger tree most entries are never
// among a question's best matches, the catalog parses again those it let
// go (which the cache then misses), and analyzing every entry would only
// slow the build.
func (rv *Retriever) Indexed(en *tree.Entry) {
	if !rv.catalog.KeepsParsed() {
		return
	}
	rv.own.put(en.Path, analyzeOwn(en))
}

// Removed tells the Retriever that the entry at path is gone.
func (rv *Retriever) Removed(path string) {
	rv.own.forget(path)
}

// asks returns whether hit i is a piece of an exchange that asks what the
// question asks: a sentence of its own words that is a question states
// more of the question's terms than any that is not ("That's a tough one!
// How long do you usually hold that pose?"). The answer is in its reply,
// another piece, so the direct verdict must not present it. A whole
// transcript in one entry holds its replies and is left alone.
func (rv *Retriever) asks(hits []search.Hit, says func(search.Words) int) func(i int) bool {
	return func(i int) bool {
		en, ok := rv.catalog.Get(hits[i].Path)
		if !ok || hits[i].Kind == "context" || !isReply(en) {
			return false
		}
		asked, stated := 0, 0
		for s, question := range sentences(ownText(en)) {
			n := says(search.Analyze(s))
			if question {
				asked = max(asked, n)
			} else {
				stated = max(stated, n)
			}
		}
		return asked > stated
	}
}

// sentences yields the sentences of text and whether each is a question:
// a sentence ends at a run of ".", "!" and "?" (closing quotes or brackets
// after it) followed by a space or the end, and is a question when its run
// holds "?"; a line break ends one too.
func sentences(text string) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		start := 0
		for i := 0; i < len(text); {
			c := text[i]
			if c == '\n' {
				if s := strings.TrimSpace(text[start:i]); s != "" && !yield(s, false) {
					return
				}
				i++
				start = i
				continue
			}
			if c != '.' && c != '!' && c != '?' {
				i++
				continue
			}
			j, question := i, false
			for ; j < len(text) && strings.IndexByte(".!?", text[j]) >= 0; j++ {
				question = question || text[j] == '?'
			}
			for j < len(text) {
				r, n := utf8.DecodeRuneInString(text[j:])
				if !strings.ContainsRune(`"')]”’`, r) {
					break
				}
				j += n
			}
			if j < len(text) && text[j] != ' ' && text[j] != '\t' && text[j] != '\n' && text[j] != '\r' {
				i = j // a mark inside a word: "3.5", "e.g."
				continue
			}
			if s := strings.TrimSpace(text[start:j]); s != "" && !yield(s, question) {
				return
			}
			i, start = j, j
		}
		if s := strings.TrimSpace(text[start:]); s != "" {
			yield(s, false)
		}
	}
}
