package engine

import (
	"fmt"
	"strings"
	"time"

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

// Query runs the tiers that need no LLM: the exact and fuzzy caches, then
// a direct answer from the index; otherwise it returns the best results and
// says that a synthesized answer would need a model. Results are ordered by
// the lifecycle's compound score (see answer).
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
	if hit, answered, ok := e.cache.lookup(p.Query, norm, limit); ok {
		return e.answer(hit, answered, start), nil
	}
	r, err := e.index.Search(p.Query, limit)
	if err != nil {
		return QueryResult{}, fmt.Errorf("query %q: %w", p.Query, err)
	}
	res := decide(p.Query, r)
	answered := directPath(res)
	e.cache.put(p.Query, norm, limit, answered, res)
	return e.answer(res, answered, start), nil
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
