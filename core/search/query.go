package search

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
	"github.com/blugelabs/bluge/search/similarity"
)

// qterm is one query term: a stemmed word, or a CJK run matched through its
// bigrams. It is the unit of the AND pass, of Result.Terms, Unmatched and
// Hit.Matched.
type qterm struct {
	key         string   // as reported: the stem, or the lower-cased CJK run
	cjk         bool     //
	terms       []string // index terms: [stem], or the run's bigrams (a unigram for one character)
	whole       string   // a Hangul run of ≥ 3 syllables, also matched whole
	minShould   int      // CJK: bigrams needed in the AND pass
	prefix      bool     // expand as a prefix (last word, long enough)
	fuzzy       bool     // expand within one edit
	significant bool     // counts for Unmatched
}

// parse analyzes a query into its terms, without duplicates.
func (x *Index) parse(query string) []qterm {
	query = stripScaffolding(query)
	terms, units := analyze(query, false)
	byUnit := make([][]term, len(units))
	for _, t := range terms {
		byUnit[t.unit] = append(byUnit[t.unit], t)
	}
	var out []qterm
	seen := map[string]int{}
	for u, ts := range byUnit {
		if len(ts) == 0 {
			continue
		}
		n := utf8.RuneCountInString(query[units[u].start:units[u].end])
		q := qterm{cjk: units[u].cjk}
		if q.cjk {
			for _, t := range ts {
				switch t.kind {
				case kindWhole:
					q.whole = t.text
				case kindUnigram, kindBigram:
					q.terms = append(q.terms, t.text)
				}
			}
			q.key = joinBigrams(q.terms)
			k := len(q.terms)
			q.minShould = k - (k-1)/2 // half of the bigrams, rounded up, at least one
			q.significant = n >= 2
		} else {
			q.key = ts[0].text
			q.terms = []string{q.key}
			q.significant = n >= 4
			q.fuzzy = n >= x.opts.FuzzyMinLen && x.opts.FuzzyBoost > 0 && len(q.key) >= 4 &&
				len(q.key) <= maxFuzzyBytes && !strings.ContainsAny(q.key, "0123456789")
			// The last word of the query is taken as still being typed.
			q.prefix = u == len(units)-1 && n >= x.opts.PrefixMinLen && x.opts.PrefixBoost > 0
		}
		if i, dup := seen[q.key]; dup {
			out[i].prefix = out[i].prefix || q.prefix
			continue
		}
		seen[q.key] = len(out)
		out = append(out, q)
	}
	return out
}

// joinBigrams rebuilds a CJK run from its overlapping bigrams (or unigram).
func joinBigrams(bs []string) string {
	var b strings.Builder
	for i, s := range bs {
		if i > 0 {
			_, w := utf8.DecodeRuneInString(s)
			s = s[w:]
		}
		b.WriteString(s)
	}
	return b.String()
}

// needsOr reports whether the OR pass can find more than the AND pass.
func needsOr(qs []qterm) bool {
	return len(qs) > 1 || (len(qs) == 1 && qs[0].minShould > 1)
}

// buildQuery is the query of one pass: all terms required (and), or any.
func (x *Index) buildQuery(qs []qterm, and bool) bluge.Query {
	cs := make([]bluge.Query, len(qs))
	for i := range qs {
		cs[i] = x.termClause(&qs[i], and, true)
	}
	if and {
		return &conjunction{clauses: cs}
	}
	return &disjunction{clauses: cs, min: 1}
}

// termClause matches one query term in any field. strict applies the AND
// pass's bigram minimum to CJK runs; fuzzy adds the fuzzy expansions.
func (x *Index) termClause(q *qterm, strict, fuzzy bool) bluge.Query {
	if q.cjk {
		var parts []bluge.Query
		for _, t := range q.terms {
			parts = append(parts, x.fieldTerms(t, nil))
		}
		var run bluge.Query = parts[0]
		if len(parts) > 1 {
			m := 1
			if strict {
				m = q.minShould
			}
			run = &disjunction{clauses: parts, min: m}
		}
		if q.whole == "" {
			return run
		}
		return &disjunction{clauses: []bluge.Query{x.fieldTerms(q.whole, nil), run}, min: 1}
	}
	var exp []bluge.Query
	for f, name := range fieldNames {
		if q.prefix {
			exp = append(exp, &expansionQuery{text: q.key, field: name, boost: x.boosts[f] * x.opts.PrefixBoost, maxExp: x.opts.MaxExpansions})
		}
		if q.fuzzy && fuzzy {
			exp = append(exp, &expansionQuery{text: q.key, field: name, fuzzy: true, boost: x.boosts[f] * x.opts.FuzzyBoost, maxExp: x.opts.MaxExpansions})
		}
	}
	return x.fieldTerms(q.key, exp)
}

// fieldTerms matches an index term in any field, with its field boosts,
// plus the extra clauses.
func (x *Index) fieldTerms(t string, extra []bluge.Query) bluge.Query {
	cs := make([]bluge.Query, 0, numFields+len(extra))
	for f, name := range fieldNames {
		cs = append(cs, bluge.NewTermQuery(t).SetField(name).SetBoost(x.boosts[f]))
	}
	return &disjunction{clauses: append(cs, extra...), min: 1}
}

// match reports whether the index term t matches q, and whether literally
// (exactly or as a prefix expansion, not only within one edit).
func (q *qterm) match(t string) (hit, literal bool) {
	if t == q.whole && q.whole != "" {
		return true, true
	}
	for _, s := range q.terms {
		if t == s {
			return true, true
		}
	}
	if q.prefix && strings.HasPrefix(t, q.key) {
		return true, true
	}
	if q.fuzzy && within1(t, q.key) {
		return true, false
	}
	return false, false
}

// Scores of compound clauses are sums taken in a fixed order (sortedSum), so
// that equal documents get bit-identical scores whatever the order bluge
// visits the clauses in, and ties are then broken by path alone.

// disjunction matches documents matching at least min clauses; the score is
// the sum of the matching clauses' scores.
type disjunction struct {
	clauses []bluge.Query
	min     int
}

// Searcher implements bluge.Query.
func (q *disjunction) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	ss, err := searchers(q.clauses, r, opts)
	if err != nil {
		return nil, err
	}
	if len(ss) < q.min || len(ss) == 0 {
		closeSearchers(ss)
		return searcher.NewMatchNoneSearcher(r, opts)
	}
	s, err := searcher.NewDisjunctionSearcher(r, ss, q.min, sortedSum{}, opts)
	if err != nil {
		closeSearchers(ss)
		return nil, err
	}
	return s, nil
}

// kindContext is the Kind of context.md documents.
const kindContext = "context"

// kindFilter keeps the documents of q whose Kind is kind (or, with exclude,
// is not), with q's scores unchanged.
type kindFilter struct {
	q       bluge.Query
	kind    string
	exclude bool
}

// Searcher implements bluge.Query.
func (f *kindFilter) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	inner, err := f.q.Searcher(r, opts)
	if err != nil {
		return nil, err
	}
	// The kind clause only filters: it scores 0, which leaves sums as they were.
	ks, err := searcher.NewTermSearcher(r, f.kind, kindField, 0, similarity.ConstantScorer(0), opts)
	if err != nil {
		_ = inner.Close()
		return nil, err
	}
	var s bsearch.Searcher
	if f.exclude {
		s, err = searcher.NewBooleanSearcher(inner, nil, ks, sortedSum{}, opts)
	} else {
		s, err = searcher.NewConjunctionSearcher(r, []bsearch.Searcher{inner, ks}, sortedSum{}, opts)
	}
	if err != nil {
		closeSearchers([]bsearch.Searcher{inner, ks})
		return nil, err
	}
	return s, nil
}

// conjunction matches documents matching every clause; the score is the sum.
type conjunction struct {
	clauses []bluge.Query
}

// Searcher implements bluge.Query.
func (q *conjunction) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	ss, err := searchers(q.clauses, r, opts)
	if err != nil {
		return nil, err
	}
	if len(ss) < len(q.clauses) || len(ss) == 0 {
		closeSearchers(ss)
		return searcher.NewMatchNoneSearcher(r, opts)
	}
	s, err := searcher.NewConjunctionSearcher(r, ss, sortedSum{}, opts)
	if err != nil {
		closeSearchers(ss)
		return nil, err
	}
	return s, nil
}

// searchers opens the searchers of clauses, leaving out those that can
// match nothing.
func searchers(clauses []bluge.Query, r bsearch.Reader, opts bsearch.SearcherOptions) ([]bsearch.Searcher, error) {
	ss := make([]bsearch.Searcher, 0, len(clauses))
	for _, c := range clauses {
		s, err := c.Searcher(r, opts)
		if err != nil {
			closeSearchers(ss)
			return nil, err
		}
		if _, none := s.(*searcher.MatchNoneSearcher); none || s.Count() == 0 {
			_ = s.Close()
			continue
		}
		ss = append(ss, s)
	}
	return ss, nil
}

func closeSearchers(ss []bsearch.Searcher) {
	for _, s := range ss {
		_ = s.Close()
	}
}

// sortedSum adds the constituents' scores in ascending order.
type sortedSum struct{}

// ScoreComposite implements bluge's search.CompositeScorer.
func (sortedSum) ScoreComposite(cs []*bsearch.DocumentMatch) float64 {
	var buf [16]float64
	v := buf[:0]
	for _, c := range cs {
		v = append(v, c.Score)
	}
	sort.Float64s(v)
	s := 0.0
	for _, f := range v {
		s += f
	}
	return s
}

// ExplainComposite implements bluge's search.CompositeScorer.
func (q sortedSum) ExplainComposite(cs []*bsearch.DocumentMatch) *bsearch.Explanation {
	var children []*bsearch.Explanation
	for _, c := range cs {
		children = append(children, c.Explanation)
	}
	return bsearch.NewExplanation(q.ScoreComposite(cs), "sum of:", children...)
}
