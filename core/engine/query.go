package engine

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/arbormem/arbor/core/search"
)

// Direct-answer thresholds of the ByteRover paper (Table 7): answer from
// the index alone when the top normalized score is high and clearly ahead.
// The paper also answers directly whenever ŝ ≥ 0.93, but with short entries
// (one remark of a conversation) many entries reach that score at once, so
// near the top of the scale, where ŝ gaps vanish, being ahead is measured on
// raw scores: the top must beat the next by directRatio. (directRatio was
// chosen on the retrieval benchmark; see bench/retrieval/REPORT.md.)
const (
	directMin    = 0.85
	directStrong = 0.93
	directGap    = 0.08
	directRatio  = 1.25
)

// cacheSize bounds tier 0, so a long-lived engine (an MCP server) does not
// grow without limit; the oldest answer goes first.
const cacheSize = 1024

// queryCache is tier 0: answers keyed by the normalized query, dropped
// whenever the tree changes.
type queryCache struct {
	answers map[string]QueryResult
	order   []string // keys, oldest first
}

func newQueryCache() *queryCache { return &queryCache{answers: map[string]QueryResult{}} }

func (c *queryCache) clear() {
	clear(c.answers)
	c.order = c.order[:0]
}

func (c *queryCache) get(key string) (QueryResult, bool) {
	r, ok := c.answers[key]
	return r, ok
}

func (c *queryCache) put(key string, r QueryResult) {
	if _, ok := c.answers[key]; !ok {
		if len(c.order) == cacheSize {
			delete(c.answers, c.order[0])
			c.order = append(c.order[:0], c.order[1:]...)
		}
		c.order = append(c.order, key)
	}
	c.answers[key] = r
}

// normalizeQuery folds case, punctuation and spacing, so that "What's the
// pool size?" and "what's the pool size" share a cache slot.
func normalizeQuery(q string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(q) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// Query runs the tiers that need no LLM: the exact cache, then a direct
// answer from the index; otherwise it returns the best results and says
// that a synthesized answer would need a model.
func (e *Engine) Query(p SearchParams) (QueryResult, error) {
	start := time.Now()
	limit, err := clampLimit(p.Limit, 5)
	if err != nil {
		return QueryResult{}, err
	}
	norm := normalizeQuery(p.Query)
	if norm == "" {
		return QueryResult{}, errorf(CodeInvalidParams, "query %q has no words", p.Query)
	}
	key := fmt.Sprintf("%d\x00%s", limit, norm)
	if hit, ok := e.cache.get(key); ok {
		hit.Query, hit.Tier, hit.TierName = p.Query, TierExactCache, "exact-cache"
		hit.Reason = "exact cache hit: same normalized query, tree unchanged since (was: " + hit.Reason + ")"
		hit.TookMs = since(start)
		return hit, nil
	}
	r, err := e.index.Search(p.Query, limit)
	if err != nil {
		return QueryResult{}, fmt.Errorf("query %q: %w", p.Query, err)
	}
	res := decide(p.Query, r)
	e.cache.put(key, res)
	res.TookMs = since(start)
	return res, nil
}

// decide applies the tier-2 rule of DESIGN §5 to ranked results.
func decide(q string, r search.Result) QueryResult {
	res := QueryResult{Query: q, Tier: TierDirect, Results: r.Hits}
	if res.Results == nil {
		res.Results = []search.Hit{}
	}
	hits := r.Hits
	if len(hits) == 0 {
		res.TierName, res.OutOfDomain = "out-of-domain", true
		res.Answer = "Nothing stored matches this question; it is outside the knowledge in this tree."
		res.Reason = fmt.Sprintf("no entry matches any of the terms %v", r.Terms)
		return res
	}
	top := hits[0].Score
	if len(r.Unmatched) > 0 && top < directMin {
		// A significant word of the question occurs nowhere in the tree and
		// what does match is weak: the matches are tangents.
		res.TierName, res.OutOfDomain = "out-of-domain", true
		res.Answer = "Nothing stored answers this question; it is outside the knowledge in this tree."
		res.Reason = fmt.Sprintf("the terms %v occur in no entry and the best score %.4f < %.2f", r.Unmatched, top, directMin)
		return res
	}
	direct, why := false, ""
	switch {
	case top < directMin:
		why = fmt.Sprintf("top score %.4f < %.2f", top, directMin)
	case r.Total == 1:
		direct, why = true, fmt.Sprintf("the only match, with score %.4f ≥ %.2f", top, directMin)
	case len(hits) == 1:
		why = fmt.Sprintf("top score %.4f ≥ %.2f but the limit leaves nothing to compare it with", top, directMin)
	case top >= directStrong && hits[0].Raw >= directRatio*hits[1].Raw:
		direct, why = true, fmt.Sprintf("top score %.4f ≥ %.2f and %.2f× the next raw score", top, directStrong, hits[0].Raw/hits[1].Raw)
	case top-hits[1].Score >= directGap:
		direct, why = true, fmt.Sprintf("top score %.4f ≥ %.2f and %.4f ahead of the next", top, directMin, top-hits[1].Score)
	case top >= directStrong:
		why = fmt.Sprintf("top score %.4f ≥ %.2f but only %.2f× the next raw score (< %.2f)", top, directStrong, hits[0].Raw/hits[1].Raw, directRatio)
	default:
		why = fmt.Sprintf("top score %.4f is only %.4f ahead of the next (< %.2f)", top, top-hits[1].Score, directGap)
	}
	if direct {
		res.TierName, res.Reason = "direct", "direct answer: "+why
		res.Answer = directAnswer(hits[0])
		return res
	}
	res.TierName, res.NeedsLLM = "results", true
	res.Reason = "no direct answer: " + why + "; a synthesized answer needs an LLM (tier 3)"
	res.Answer = fmt.Sprintf("No single entry answers this with confidence; the %d best matches are listed, best first.", len(hits))
	return res
}

// directAnswer presents the top entry: its title, its summary when it has
// one, and the passage that best matches the question unless the summary
// already is that passage.
func directAnswer(h search.Hit) string {
	var b strings.Builder
	b.WriteString(h.Title)
	sum := strings.Join(strings.Fields(h.Summary), " ")
	if sum != "" {
		b.WriteString(" — ")
		b.WriteString(sum)
	}
	if h.Excerpt != "" && !strings.Contains(sum, strings.Trim(h.Excerpt, "…")) {
		b.WriteString("\n")
		b.WriteString(h.Excerpt)
	}
	b.WriteString("\n(")
	b.WriteString(h.Path)
	b.WriteString(")")
	return b.String()
}
