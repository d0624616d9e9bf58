package search

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
	"github.com/blugelabs/bluge/search/searcher"
	"github.com/blugelabs/bluge/search/similarity"
)

// qterm is one query term: a stemmed word, a compound, a CJK run matched
// through its bigrams, or a quoted phrase. It is the unit of the AND pass,
// of Result.Terms, Unmatched and Hit.Matched.
type qterm struct {
	key string // as reported: the stem, a compound's stems joined by '-', the lower-cased CJK run, a phrase in quotes
	// terms are the index terms of the term: [stem], a compound's parts, or
	// a CJK run's bigrams (a unigram for one character); minShould of them
	// are needed in the AND pass, one in the OR pass.
	terms     []string
	minShould int
	// alts match the term by themselves: a compound joined, a whole Hangul
	// word with and without its particle.
	alts []string
	// phrase holds the terms a quoted phrase needs at consecutive
	// positions, one list of alternatives per position ([""]: any term).
	phrase      [][]string
	prefix      bool // expand as a prefix (last word, long enough)
	fuzzy       bool // expand within one edit
	significant bool // counts for Unmatched
	// exp holds the expansions of a plain word, shared by the copies of
	// the term and by every pass of one Search.
	exp *expansions
}

// qpart is a stretch of a query, inside quotes or not.
type qpart struct {
	text   string
	quoted bool
}

// Quotes: straight, and the typographic pairs “…” and „…“.
const (
	openQuotes  = "\"“„"
	closeQuotes = "\"”“"
)

// splitQuotes cuts a query into quoted and unquoted segments. A quote that
// is never closed is no quote: its text stays plain words.
func splitQuotes(q string) []qpart {
	var out []qpart
	for q != "" {
		i := strings.IndexAny(q, openQuotes)
		if i < 0 {
			break
		}
		_, w := utf8.DecodeRuneInString(q[i:])
		j := strings.IndexAny(q[i+w:], closeQuotes)
		if j < 0 {
			break
		}
		_, cw := utf8.DecodeRuneInString(q[i+w+j:])
		if i > 0 {
			out = append(out, qpart{text: q[:i]})
		}
		out = append(out, qpart{text: q[i+w : i+w+j], quoted: true})
		q = q[i+w+j+cw:]
	}
	if q != "" {
		out = append(out, qpart{text: q})
	}
	return out
}

// parse analyzes a query into its terms, without duplicates.
func (x *Index) parse(query string) []qterm {
	segs := splitQuotes(query)
	if !x.opts.KeepScaffolding {
		segs = stripScaffolding(segs)
	}
	var out []qterm
	seen := map[string]int{}
	add := func(q qterm) {
		if i, dup := seen[q.key]; dup {
			out[i].prefix = out[i].prefix || q.prefix
			return
		}
		seen[q.key] = len(out)
		out = append(out, q)
	}
	for si, s := range segs {
		if s.quoted {
			if q, ok := phraseTerm(s.text); ok {
				add(q)
			}
			continue
		}
		terms, units := analyze(s.text, false)
		for u, ts := range byUnit(terms, units) {
			if len(ts) == 0 {
				continue
			}
			q, n := unitTerm(s.text, units[u], ts)
			if len(ts) == 1 && ts[0].kind == kindWord {
				// The last word of the query is taken as still being typed.
				x.expand(&q, n, si == len(segs)-1 && u == len(units)-1)
			}
			add(q)
		}
	}
	return out
}

// byUnit groups terms by their source unit.
func byUnit(terms []term, units []unit) [][]term {
	out := make([][]term, len(units))
	for _, t := range terms {
		out[t.unit] = append(out[t.unit], t)
	}
	return out
}

// unitTerm is the query term of one unit of text (a word, a compound or a
// CJK run), without expansions, and the length of the unit in characters.
func unitTerm(text string, u unit, ts []term) (qterm, int) {
	n := utf8.RuneCountInString(text[u.start:u.end])
	q := qterm{significant: n >= 4 || u.cjk && n >= 2}
	if u.cjk {
		q.key = u.text
		for _, t := range ts {
			switch t.kind {
			case kindWhole:
				q.alts = append(q.alts, t.text)
			case kindUnigram, kindBigram:
				q.terms = append(q.terms, t.text)
			}
		}
		k := len(q.terms)
		q.minShould = k - (k-1)/2 // half of the bigrams, rounded up, at least one
		return q, n
	}
	prev := 0 // position of the last word
	for _, t := range ts {
		switch {
		case t.kind == kindJoined:
			q.alts = append(q.alts, t.text)
			continue
		case t.kind == kindMarked && t.pos == prev:
			// A marked word is asked for marked: "#billing" wants the tag.
			q.terms[len(q.terms)-1] = t.text
		default:
			q.terms = append(q.terms, t.text)
		}
		prev = t.pos
	}
	q.key = strings.Join(q.terms, "-")
	if len(q.terms) == 0 { // a compound of stop words: "to-do"
		q.key = q.alts[0]
	}
	q.minShould = len(q.terms)
	return q, n
}

// expand sets the prefix and fuzzy expansions of the query term of one
// plain word (not marked, not a compound: those are exact).
func (x *Index) expand(q *qterm, n int, last bool) {
	w := q.terms[0]
	q.exp = x.words.of(w)
	q.fuzzy = n >= x.opts.FuzzyMinLen && x.opts.FuzzyBoost > 0 && len(w) >= 4 &&
		len(w) <= maxFuzzyBytes && !strings.ContainsAny(w, "0123456789")
	q.prefix = last && n >= x.opts.PrefixMinLen && x.opts.PrefixBoost > 0
}

// phraseRank orders the terms made at one place by how exactly they ask
// for the text in a phrase; joined compounds and whole words are not asked
// for (their parts are).
var phraseRank = [...]int{kindWord: 1, kindUnigram: 2, kindMarked: 3, kindBigram: 4, kindJoined: 0, kindWhole: 0}

// phraseTerm is the query term of a quoted phrase: its terms at consecutive
// positions, as indexed (CJK as bigrams and a last unigram, marked words
// marked). A phrase of one term asks for that term exactly, without
// expansions; a phrase of stop words only is no term.
func phraseTerm(text string) (qterm, bool) {
	terms, units := analyze(text, true)
	var slots [][]string
	first := 0
	pick := func(ts []term) string { // the term a position asks for
		best, rank := "", 0
		for _, t := range ts {
			if r := phraseRank[t.kind]; r > rank {
				best, rank = t.text, r
			}
		}
		return best
	}
	for i := 0; i < len(terms); {
		j := i
		for j < len(terms) && terms[j].pos == terms[i].pos {
			j++
		}
		if t := pick(terms[i:j]); t != "" {
			if slots == nil {
				first = terms[i].pos
			}
			for len(slots) < terms[i].pos-first {
				slots = append(slots, []string{""})
			}
			slots = append(slots, []string{t})
		}
		i = j
	}
	if len(slots) == 0 {
		return qterm{}, false
	}
	var keys []string
	significant := false
	for u, ts := range byUnit(terms, units) {
		if len(ts) == 0 {
			continue
		}
		k, _ := unitTerm(text, units[u], ts)
		keys = append(keys, k.key)
		significant = significant || k.significant
	}
	q := qterm{key: `"` + strings.Join(keys, " ") + `"`, significant: significant}
	if len(slots) == 1 {
		q.terms, q.minShould = slots[0], 1
	} else {
		q.phrase = slots
	}
	return q, true
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
	return &disjunction{clauses: cs, min: 1, prune: true}
}

// termClause matches one query term in any field. strict applies the AND
// pass's minimum of terms to CJK runs and compounds; fuzzy adds the fuzzy
// expansions.
func (x *Index) termClause(q *qterm, strict, fuzzy bool) bluge.Query {
	if q.phrase != nil {
		cs := make([]bluge.Query, numFields)
		for f, name := range fieldNames {
			cs[f] = &phraseQuery{slots: q.phrase, field: name, boost: x.boosts[f]}
		}
		return &disjunction{clauses: cs, min: 1}
	}
	if len(q.terms) == 1 && len(q.alts) == 0 {
		var exp []bluge.Query
		for f, name := range fieldNames {
			if q.prefix {
				exp = append(exp, &expansionQuery{text: q.terms[0], field: name, boost: x.boosts[f] * x.opts.PrefixBoost, maxExp: x.opts.MaxExpansions, seen: q.exp})
			}
			if q.fuzzy && fuzzy {
				exp = append(exp, &expansionQuery{text: q.terms[0], field: name, fuzzy: true, boost: x.boosts[f] * x.opts.FuzzyBoost, maxExp: x.opts.MaxExpansions, seen: q.exp})
			}
		}
		return x.fieldTerms(q.terms[0], exp)
	}
	var cs []bluge.Query
	for _, a := range q.alts {
		cs = append(cs, x.fieldTerms(a, nil))
	}
	if len(q.terms) > 0 {
		parts := make([]bluge.Query, len(q.terms))
		for i, t := range q.terms {
			parts[i] = x.fieldTerms(t, nil)
		}
		m := 1
		if strict {
			m = q.minShould
		}
		cs = append(cs, &disjunction{clauses: parts, min: m})
	}
	if len(cs) == 1 {
		return cs[0]
	}
	return &disjunction{clauses: cs, min: 1}
}

// fieldTerms matches an index term in any field, with its field boosts,
// plus the extra clauses.
func (x *Index) fieldTerms(t string, extra []bluge.Query) bluge.Query {
	cs := make([]bluge.Query, 0, numFields+len(extra))
	for f, name := range fieldNames {
		cs = append(cs, &termQuery{term: t, field: name, boost: x.boosts[f]})
	}
	return &disjunction{clauses: append(cs, extra...), min: 1}
}

// matchAt reports whether q matches the analyzed terms ts (in position
// order) at ts[i], whether literally (exactly or as a prefix expansion, not
// only within one edit), and the byte offset where the match ends. A phrase
// matches from its first term on.
func (q *qterm) matchAt(ts []term, i int) (hit, literal bool, end int) {
	if q.phrase == nil {
		hit, literal = q.match(ts[i].text)
		return hit, literal, ts[i].end
	}
	if !slices.Contains(q.phrase[0], ts[i].text) {
		return false, false, 0
	}
	j, end := i, ts[i].end
	for k := 1; k < len(q.phrase); k++ {
		if q.phrase[k][0] == "" {
			continue
		}
		want := ts[i].pos + k
		for j++; j < len(ts) && ts[j].pos < want; j++ {
		}
		for j < len(ts) && ts[j].pos == want && !slices.Contains(q.phrase[k], ts[j].text) {
			j++
		}
		if j == len(ts) || ts[j].pos != want {
			return false, false, 0
		}
		end = ts[j].end
	}
	return true, true, end
}

// saidIn reports whether w holds q without expansion (see Ranked.Says), as
// the AND pass needs it: one of its alternatives (a compound joined), or
// minShould of its terms (every part of a compound, half of a CJK run's
// bigrams), or every word of a phrase.
func (q *qterm) saidIn(w Words) bool {
	if q.phrase != nil {
		for _, alts := range q.phrase {
			if alts[0] != "" && !slices.ContainsFunc(alts, w.has) {
				return false
			}
		}
		return true
	}
	if slices.ContainsFunc(q.alts, w.has) {
		return true
	}
	n := 0
	for _, t := range q.terms {
		if w.has(t) {
			n++
		}
	}
	return n >= max(q.minShould, 1)
}

// match reports whether the index term t matches a term that is not a
// phrase, and whether literally.
func (q *qterm) match(t string) (hit, literal bool) {
	if slices.Contains(q.alts, t) || slices.Contains(q.terms, t) {
		return true, true
	}
	if q.prefix && strings.HasPrefix(t, q.terms[0]) {
		return true, true
	}
	if q.fuzzy && within1(t, q.terms[0]) {
		return true, false
	}
	return false, false
}

// phraseQuery matches the documents holding the terms of a phrase at
// consecutive positions of one field. Its score is the BM25 of the phrase's
// terms, summed, times the field's boost (bluge's MultiPhraseQuery ignores
// its boost).
type phraseQuery struct {
	slots [][]string
	field string
	boost float64
}

// Searcher implements bluge.Query.
func (q *phraseQuery) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, _, err := q.open(r, opts)
	return s, err
}

// open has no bound: a phrase is never skipped.
func (q *phraseQuery) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	s, err := searcher.NewMultiPhraseSearcher(r, q.slots, q.field, nil, opts)
	if err != nil {
		return nil, 0, err
	}
	return &boosted{Searcher: s, boost: q.boost}, math.Inf(1), nil
}

func (q *phraseQuery) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	return c.phrase(q, seg)
}

// boosted multiplies the scores of a searcher.
type boosted struct {
	bsearch.Searcher
	boost float64
}

// Next implements bluge's search.Searcher.
func (b *boosted) Next(ctx *bsearch.Context) (*bsearch.DocumentMatch, error) {
	return b.scale(b.Searcher.Next(ctx))
}

// Advance implements bluge's search.Searcher.
func (b *boosted) Advance(ctx *bsearch.Context, number uint64) (*bsearch.DocumentMatch, error) {
	return b.scale(b.Searcher.Advance(ctx, number))
}

func (b *boosted) scale(m *bsearch.DocumentMatch, err error) (*bsearch.DocumentMatch, error) {
	if m != nil {
		m.Score *= b.boost
	}
	return m, err
}

// Scores of compound clauses are sums taken in a fixed order (sortedSum), so
// that equal documents get bit-identical scores whatever the order bluge
// visits the clauses in, and ties are then broken by path alone.

// disjunction matches documents matching at least min clauses; the score is
// the sum of the matching clauses' scores. With prune, a disjunction of
// one clause needed skips the documents scoring less than the threshold top
// gives it (see maxScore): only the root of a pass is given one.
type disjunction struct {
	clauses []bluge.Query
	min     int
	prune   bool
}

// Searcher implements bluge.Query.
func (q *disjunction) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, _, err := q.open(r, opts)
	return s, err
}

func (q *disjunction) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	if q.prune && q.min <= 1 {
		return q.openPruning(r, opts)
	}
	ss, bounds, err := openClauses(q.clauses, r, opts)
	if err != nil {
		return nil, 0, err
	}
	if len(ss) < q.min || len(ss) == 0 {
		closeSearchers(ss)
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	}
	s, err := searcher.NewDisjunctionSearcher(r, ss, q.min, sortedSum{}, opts)
	if err != nil {
		closeSearchers(ss)
		return nil, 0, err
	}
	return s, sumBound(bounds), nil
}

func (q *disjunction) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	bms, err := clauseMatches(c, seg, q.clauses)
	if err != nil {
		return nil, err
	}
	return atLeast(bms, q.min), nil
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
	s, _, err := f.open(r, opts)
	return s, err
}

func (f *kindFilter) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	ss, bounds, err := openClauses([]bluge.Query{f.q}, r, opts)
	if err != nil {
		return nil, 0, err
	}
	if len(ss) == 0 {
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	}
	inner, bound := ss[0], bounds[0]
	// The kind clause only filters: it scores 0, which leaves sums as they were.
	ks, err := searcher.NewTermSearcher(r, f.kind, kindField, 0, similarity.ConstantScorer(0), opts)
	if err != nil {
		_ = inner.Close()
		return nil, 0, err
	}
	if f.exclude {
		return &withoutKind{inner: inner, kind: ks}, bound, nil
	}
	s, err := searcher.NewConjunctionSearcher(r, []bsearch.Searcher{inner, ks}, sortedSum{}, opts)
	if err != nil {
		closeSearchers([]bsearch.Searcher{inner, ks})
		return nil, 0, err
	}
	return s, bound, nil
}

func (f *kindFilter) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	bms, err := clauseMatches(c, seg, []bluge.Query{f.q})
	if err != nil {
		return nil, err
	}
	kind, err := c.term(seg, kindField, f.kind)
	if err != nil {
		return nil, err
	}
	if f.exclude {
		return roaring.AndNot(bms[0], kind), nil
	}
	return roaring.And(bms[0], kind), nil
}

// conjunction matches documents matching every clause; the score is the sum.
type conjunction struct {
	clauses []bluge.Query
}

// Searcher implements bluge.Query.
func (q *conjunction) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, _, err := q.open(r, opts)
	return s, err
}

func (q *conjunction) open(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, float64, error) {
	ss, bounds, err := openClauses(q.clauses, r, opts)
	if err != nil {
		return nil, 0, err
	}
	if len(ss) < len(q.clauses) || len(ss) == 0 {
		closeSearchers(ss)
		s, err := searcher.NewMatchNoneSearcher(r, opts)
		return s, 0, err
	}
	s, err := searcher.NewConjunctionSearcher(r, ss, sortedSum{}, opts)
	if err != nil {
		closeSearchers(ss)
		return nil, 0, err
	}
	return s, sumBound(bounds), nil
}

func (q *conjunction) matches(c *counter, seg int) (*roaring.Bitmap, error) {
	bms, err := clauseMatches(c, seg, q.clauses)
	if err != nil {
		return nil, err
	}
	return allOf(bms), nil
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
	return sumSorted(v)
}

// sumSorted adds v in ascending order (it sorts v).
func sumSorted(v []float64) float64 {
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
