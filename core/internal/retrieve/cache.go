package retrieve

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/sets"
)

// cacheSize bounds the query cache, so a long-lived engine (an MCP server)
// does not grow without limit; the oldest answer goes first.
const cacheSize = 1024

// Tier 1 (docs/ABI.md §4.4): a cached answer serves a new query whose
// stop-word-filtered words overlap the cached query's by this Jaccard
// index, when both have at least fuzzyMinTokens such words and both name
// the same things (see queryNames).
const (
	fuzzyMinJaccard = 0.6
	fuzzyMinTokens  = 2
)

// cached is one answer of tier 2 as it came out of the index, before the
// lifecycle ranking, which is applied afresh on every use.
type cached struct {
	query    string   // the query as asked, named by tier-1 reasons
	limit    int      // answers for another limit hold another number of results
	tokens   []string // sorted, distinct, stop words removed
	names    []string // queryNames of query
	answered string   // the entry a direct answer presents; "" otherwise
	out      outcome
}

// queryCache holds tiers 0 and 1: answers keyed by the limit and the
// normalized query, all dropped whenever the tree changes.
type queryCache struct {
	answers map[string]*cached
	order   []string // keys, oldest first
	fuzzyOn bool     // tier 1 answers (off only in the benchmark's ablation)
}

func newQueryCache(fuzzy bool) *queryCache {
	return &queryCache{answers: map[string]*cached{}, fuzzyOn: fuzzy}
}

func (c *queryCache) clear() {
	clear(c.answers)
	c.order = c.order[:0]
}

func cacheKey(limit int, norm string) string { return fmt.Sprintf("%d\x00%s", limit, norm) }

// put remembers the tier-2 answer to query.
func (c *queryCache) put(query, norm string, limit int, answered string, o outcome) {
	key := cacheKey(limit, norm)
	if _, ok := c.answers[key]; !ok {
		if len(c.order) == cacheSize {
			delete(c.answers, c.order[0])
			c.order = append(c.order[:0], c.order[1:]...)
		}
		c.order = append(c.order, key)
	}
	c.answers[key] = &cached{query: query, limit: limit, tokens: queryTokens(norm), names: queryNames(query), answered: answered, out: o}
}

// lookup answers query from tier 0, else tier 1. The result names the tier
// and why; answered is the entry a direct answer presents. covers reports
// whether the entry a cached answer presents holds every one of words, the
// query's words its cached query lacks (nil: it does).
func (c *queryCache) lookup(query, norm string, limit int, covers func(entry string, words []string) bool) (o outcome, answered string, ok bool) {
	if hit, ok := c.answers[cacheKey(limit, norm)]; ok {
		o = hit.out
		o.res.Query, o.res.Tier, o.res.TierName = query, api.TierExactCache, "exact-cache"
		o.res.Reason = "exact cache hit: same normalized query, tree unchanged since (was: " + hit.out.res.Reason + ")"
		return o, hit.answered, true
	}
	if !c.fuzzyOn {
		return outcome{}, "", false
	}
	hit, j := c.fuzzy(queryTokens(norm), queryNames(query), limit, covers)
	if hit == nil {
		return outcome{}, "", false
	}
	o = hit.out
	o.res.Query, o.res.Tier, o.res.TierName = query, api.TierFuzzyCache, "fuzzy-cache"
	o.res.Reason = fmt.Sprintf("fuzzy cache hit: the words of %q overlap this query's with Jaccard %.2f ≥ %.1f, with the same names, and the answer holds the words this query adds; tree unchanged since (was: %s)",
		hit.query, j, fuzzyMinJaccard, hit.out.res.Reason)
	return o, hit.answered, true
}

// fuzzy returns the cached direct answer whose query's words are closest
// to tokens, if that closeness reaches fuzzyMinJaccard and the query names
// the same things; ties go to the newest. Only direct answers are reused: a
// near-identical question whose answer was a list or "out of domain" may
// differ in the very word that matches, so it is searched again. A question
// that names someone or something else ("What did Melanie paint for the
// art show?" after "What did Caroline paint for the art show?"), or another
// number or date, is another question however many words it shares: in the
// LoCoMo benchmark 106 of its 446 speaker-swapped (adversarial) questions
// were answered with the other speaker's entry before this check. Nor does
// a question that swaps a thing ("the museum in Woodhaven" for "the library
// in Woodhaven"): the words the cached query lacks must all be in the
// answer's entry (covers), which brought the 106 down to 23, then to 0.
func (c *queryCache) fuzzy(tokens, names []string, limit int, covers func(string, []string) bool) (*cached, float64) {
	if len(tokens) < fuzzyMinTokens {
		return nil, 0
	}
	var best *cached
	bestJ := 0.0
	for i := len(c.order) - 1; i >= 0; i-- {
		cand := c.answers[c.order[i]]
		if cand.answered == "" || cand.limit != limit || len(cand.tokens) < fuzzyMinTokens || !slices.Equal(names, cand.names) {
			continue
		}
		j := sets.Jaccard(tokens, cand.tokens)
		if j < fuzzyMinJaccard || j <= bestJ {
			continue
		}
		if extra := without(tokens, cand.tokens); covers == nil || len(extra) == 0 || covers(cand.answered, extra) {
			best, bestJ = cand, j
		}
	}
	return best, bestJ
}

// without is a \ b of two sorted sets.
func without(a, b []string) []string {
	var out []string
	for _, w := range a {
		if _, found := slices.BinarySearch(b, w); !found {
			out = append(out, w)
		}
	}
	return out
}

// queryTokens are the distinct words of a normalized query without stop
// words, sorted: "what is the pool size" and "the pool size" ask the same
// thing.
func queryTokens(norm string) []string {
	var out []string
	for _, w := range strings.Fields(norm) {
		if !search.IsStopWord(w) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// queryNames are the words of a query that name something, lower-cased,
// sorted and distinct: capitalized words other than a sentence's first word
// and "I" (people, places, products), and words holding a digit (numbers,
// dates, versions). A possessive's "'s" is dropped.
func queryNames(q string) []string {
	var out []string
	first := true // the next word opens a sentence
	for _, w := range strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && !strings.ContainsRune(".?!", r)
	}) {
		end := strings.ContainsAny(w[len(w)-1:], ".?!")
		w = strings.TrimRight(w, ".?!'’")
		for _, s := range []string{"'s", "’s"} {
			w = strings.TrimSuffix(w, s)
		}
		if w != "" {
			r := []rune(w)[0]
			capital := unicode.IsUpper(r) && !first && w != "I" && !strings.HasPrefix(w, "I'") && !strings.HasPrefix(w, "I’")
			if capital || strings.ContainsFunc(w, unicode.IsDigit) {
				out = append(out, strings.ToLower(w))
			}
			first = false
		}
		if end {
			first = true
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// normalizeQuery folds case, punctuation and spacing, so that "What's the
// pool size?" and "what's the pool size" share a cache slot. The marks the
// analyzer gives a meaning stay (core/internal/search): quotes (a phrase), + and #
// ("c++", "c#", "#billing"), and a dot or hyphen that joins or leads a word
// ("v1.8", ".net", "gpt-4o"), so "C++" never shares "C"'s slot.
func normalizeQuery(q string) string {
	rs := []rune(strings.ToLower(q))
	alnum := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	var b strings.Builder
	space := false
	for i, r := range rs {
		switch {
		case strings.ContainsRune("“”„", r):
			r = '"'
		case r == '.' && alnum(i+1), r == '-' && alnum(i-1) && alnum(i+1):
		case alnum(i) || strings.ContainsRune("'+#\"", r):
		default:
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
