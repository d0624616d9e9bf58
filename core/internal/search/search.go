package search

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/arbormem/arbor/core/api"
	"github.com/blugelabs/bluge"
	bsearch "github.com/blugelabs/bluge/search"
)

// Search ranks the documents for a query and returns at most limit hits
// (DefaultLimit when limit ≤ 0).
//
// The query is analyzed like the documents (see the package comment) into
// terms: stemmed words, and CJK runs matched through their bigrams (at least
// half of them in the AND pass, any in the OR pass, or a Hangul word whole).
// A term matches a field by BM25 with the field's boost (title ×3, path ×1.5,
// tags and keywords ×2, summary and content ×1 by default), summed over
// fields and terms. The last word of the query, when it has 3 characters or
// more, also matches the words it is a prefix of, and words of 5 characters
// or more also match the words one edit away; these expansions are scored
// with a lower boost, a document keeping only its best expansion of a term,
// so exact matches dominate.
//
// Entries come before context.md files (Kind "context"): a folder overview
// repeats its entries' words, so it would otherwise take the slot of the
// entry that holds the fact; contexts fill only the slots entries leave.
// Among entries, a first pass requires every term (Mode "and"); when it
// finds fewer than limit, a second pass accepting any term fills the
// remaining slots after the AND hits (Mode "and+or", or "or" when the AND
// pass found nothing). Within each pass hits are sorted by score, then by
// path; the same documents and query always give the same result.
//
// Search is Rank in the order FullMatchesFirst followed by Materialize of
// every hit.
func (x *Index) Search(query string, limit int) (Result, error) {
	return x.SearchIn(query, limit, Scope{})
}

// SearchIn is Search within a scope: over the documents its filter keeps
// (in the index: see filter.go), in its order.
func (x *Index) SearchIn(query string, limit int, sc Scope) (Result, error) {
	r, err := x.RankIn(query, limit, FullMatchesFirst, sc)
	if err != nil {
		return Result{}, err
	}
	r.Materialize(r.Hits)
	return r.Result, nil
}

// Ranked is a Search answer whose hits are ranked but not materialized:
// their Matched and Excerpt are empty until Materialize fills them. A
// caller that rescores a pool of hits and keeps a few (the engine's query
// ranking keeps 5 or 10 of 50) builds the excerpts of those alone.
type Ranked struct {
	Result
	qs         []qterm
	docs       map[string]*stored // by path
	excerptLen int
}

// Order is how Rank orders the entries that match a query (context files
// come after them either way).
type Order int

const (
	// FullMatchesFirst: the entries matching every term, then, when they
	// are fewer than the limit, those matching some (Search's order).
	FullMatchesFirst Order = iota
	// ByScore: the entries matching any term, by score alone (Mode "or").
	// BM25 sums over the terms an entry matches, so matching more of them
	// already counts; an entry that says one term in other words is not
	// put behind every entry that happens to hold them all. The engine's
	// query ranks its pool this way (measured in
	// bench/retrieval/mechanisms.md).
	ByScore
)

// Rank is Search without the matched terms and excerpts of the hits, in
// the given order: with FullMatchesFirst, the same hits in the same order,
// with the same scores, Total, Mode, Terms and Unmatched. The Ranked holds
// what Materialize needs and no reference to the index, so it may be
// materialized after the index has changed.
func (x *Index) Rank(query string, limit int, order Order) (Ranked, error) {
	return x.RankIn(query, limit, order, Scope{})
}

// RankIn is Rank within a scope. A filter narrows every pass to the
// documents it keeps, and Total and Unmatched count those alone. With
// Scope.By, each pass keeps its matches first by the key (equal keys by
// score, then path), in place of their score.
func (x *Index) RankIn(query string, limit int, order Order, sc Scope) (Ranked, error) {
	var r Ranked
	err := x.retry(func() (err error) {
		if f := x.files(); f != nil {
			f.searching.Add(1)
			defer f.searching.Add(-1)
		}
		if err := x.warm(); err != nil {
			return err
		}
		r, err = x.rank(query, limit, order, sc)
		return err
	})
	return r, err
}

func (x *Index) rank(query string, limit int, order Order, sc Scope) (Ranked, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return Ranked{}, ErrClosed
	}
	qs := x.parse(query)
	r := Ranked{Result: Result{Mode: ModeAnd, Terms: make([]string, len(qs))}, qs: qs, excerptLen: x.opts.ExcerptLen}
	for i, q := range qs {
		r.Terms[i] = q.key
	}
	if len(qs) == 0 {
		return r, nil
	}
	c, err := x.counter()
	if err != nil {
		return Ranked{}, fmt.Errorf("search: %q: %w", query, err)
	}
	allow, err := x.allowed(c, sc.Filter)
	if err != nil {
		return Ranked{}, fmt.Errorf("search: %q: filter: %w", query, err)
	}
	p := pass{x: x, c: c, allow: allow, by: sc.By}
	docs, err := x.collect(&r.Result, c, p, qs, limit, order, !sc.Uncounted)
	if err != nil {
		return Ranked{}, fmt.Errorf("search: %q: %w", query, err)
	}
	r.docs = make(map[string]*stored, len(docs))
	r.Hits = make([]Hit, len(docs))
	for i := range docs {
		d := &docs[i]
		r.docs[d.path] = d
		r.Hits[i] = Hit{Hit: api.Hit{Path: d.path, Kind: d.kind, Title: d.title, Summary: d.summary, Score: normalize01(d.raw)}, Raw: d.raw, AllTerms: d.all}
	}
	literal := literals(docs, qs)
	for i, q := range qs {
		if !q.significant || literal[i] {
			continue
		}
		found, err := p.exists(&q)
		if err != nil {
			return Ranked{}, fmt.Errorf("search: %q: probe %q: %w", query, q.key, err)
		}
		if !found {
			r.Unmatched = append(r.Unmatched, q.key)
		}
	}
	return r, nil
}

// Materialize sets the matched terms and the excerpt of hits, which are
// hits of r (any of them, in any order, their scores changed or not), as
// Search would have set them.
func (r Ranked) Materialize(hits []Hit) {
	for i := range hits {
		if d, ok := r.docs[hits[i].Path]; ok {
			hits[i].Matched, hits[i].Excerpt = d.materialize(r.qs, r.excerptLen)
		}
	}
}

// Words is what a text says, as the index analyzes a field: its distinct
// terms. A rule that asks of hit after hit which query terms some part of
// an entry holds (Ranked.Says) analyzes each part once and keeps its Words.
type Words struct {
	terms []string // sorted, distinct
	// more are the terms of a second text (And), sorted and distinct, kept
	// apart so that a short text added to a long one costs no copy of it.
	more []string
}

// And returns the Words of both texts: what w and o say, as the Words of
// the two texts joined by a line break. Analysis never joins terms across
// a line break (FuzzAnalyzeJoinsNothingAcrossLines), so the Words of a
// text and a short one added to it need not analyze the long one again.
func (w Words) And(o Words) Words {
	if w.more == nil && o.more == nil {
		return Words{terms: w.terms, more: o.terms}
	}
	all := slices.Concat(w.terms, w.more, o.terms, o.more)
	slices.Sort(all)
	return Words{terms: slices.Compact(all)}
}

// Analyze returns the Words of text. It analyzes as the index does
// (textField.Analyze), in a lexicon's scratch space, and sorts only the
// distinct terms: a long entry repeats its words, and sorting every
// occurrence was a third of analyzing a chat session into its Words.
func Analyze(text string) Words {
	lx := getLexicon()
	defer putLexicon(lx)
	a := analyzer{text: text, forIndex: true, terms: lx.scratchTerms(len(text)), noUnits: true, lex: lx}
	a.analyze()
	seen := lx.scratchIDs()
	var terms []string
	for _, t := range a.terms {
		if _, ok := seen[t.text]; !ok {
			seen[t.text] = 0
			terms = append(terms, t.text)
		}
	}
	lx.keepTerms(a.terms)
	lx.keepIDs(seen)
	slices.Sort(terms)
	return Words{terms: slices.Clip(terms)}
}

// Len returns the number of terms w holds, as a measure of its memory.
func (w Words) Len() int { return len(w.terms) + len(w.more) }

func (w Words) has(t string) bool {
	if _, ok := slices.BinarySearch(w.terms, t); ok {
		return true
	}
	_, ok := slices.BinarySearch(w.more, t)
	return ok
}

// Says returns how many of the query's terms w holds as written: no prefix
// or fuzzy expansion (a turn saying "classic" does not say "class"); a
// compound counts joined or by all of its parts, as the AND pass needs it,
// and a quoted phrase by all of its words, in any order.
func (r Ranked) Says(w Words) int {
	return says(r.qs, w)
}

// Says returns how many of the terms of query w holds, counted as
// Ranked.Says counts them, and how many terms query has.
func (x *Index) Says(query string, w Words) (said, terms int) {
	qs := x.parse(query)
	return says(qs, w), len(qs)
}

func says(qs []qterm, w Words) int {
	n := 0
	for i := range qs {
		if qs[i].saidIn(w) {
			n++
		}
	}
	return n
}

// Terms returns the query terms text analyzes to, as Result.Terms reports
// them.
func (x *Index) Terms(text string) []string {
	qs := x.parse(text)
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.key
	}
	return out
}

// pass runs the passes of one search: within its filter (allow; nil
// keeps every document), in its order (by; nil orders by score).
type pass struct {
	x     *Index
	c     *counter // the ranking's snapshot, whose searchers it opens
	allow *allowSet
	by    func(string) (float64, bool)
}

// within narrows q to the documents the filter keeps.
func (p pass) within(q bluge.Query) bluge.Query {
	if p.allow == nil {
		return q
	}
	return &filtered{q: q, allow: p.allow}
}

// run runs one pass of the entries (or, with contexts, the context
// files) that q matches within the filter.
func (p pass) run(q bluge.Query, contexts bool, limit int) ([]stored, error) {
	k := &kindFilter{q: p.within(q), kind: kindContext, exclude: !contexts}
	if p.by != nil {
		return p.x.runBy(k, limit, p.by, p.c)
	}
	return p.x.run(k, limit, p.c)
}

// exists reports whether a query term matches any document the filter
// keeps exactly or as a prefix expansion (fuzzy expansions do not count).
// It stops at the first match: ranking every match of a frequent word and
// its expansions to keep the best one was two thirds of a question at 1M
// entries whose words the best hits do not say as written.
func (p pass) exists(q *qterm) (bool, error) {
	s, err := p.c.search(withoutLocations{p.within(p.x.termClause(q, false, false))})
	if err != nil {
		return false, err
	}
	defer func() { _ = s.Close() }()
	d, err := s.Next(bsearch.NewSearchContext(1+s.DocumentMatchPoolSize(), 0))
	return d != nil, err
}

// collect runs the passes of Rank and returns the top documents in rank
// order, setting res.Mode and res.Total (counted, or else the documents
// returned: see Scope.Uncounted).
func (x *Index) collect(res *Result, c *counter, p pass, qs []qterm, limit int, order Order, counted bool) ([]stored, error) {
	and := x.buildQuery(qs, true)
	wide := and
	which := "and"
	if order == ByScore && needsOr(qs) {
		wide, which = x.buildQuery(qs, false), "or"
		res.Mode = ModeOr
	}
	docs, err := p.run(wide, false, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", which, err)
	}
	for i := range docs {
		docs[i].all = wide == and
	}
	if wide == and && len(docs) < limit && needsOr(qs) {
		// The AND pass found all its entries (fewer than limit), and
		// every one of them matches the OR pass too.
		wide = x.buildQuery(qs, false)
		more, err := p.run(wide, false, limit)
		if err != nil {
			return nil, fmt.Errorf("or: %w", err)
		}
		switch {
		case len(docs) == 0:
			res.Mode = ModeOr
		case len(more) > len(docs):
			res.Mode = ModeFill
		}
		docs = fill(docs, more, limit)
	}
	if len(docs) < limit {
		ctx, err := p.run(wide, true, limit-len(docs))
		if err != nil {
			return nil, fmt.Errorf("contexts: %w", err)
		}
		for i := range ctx {
			ctx[i].all = wide == and
		}
		docs = append(docs, ctx...)
	}
	// Total: the entries and the contexts the last pass matches.
	if !counted {
		res.Total = len(docs)
		return docs, nil
	}
	if res.Total, err = c.count(p.within(wide).(countable)); err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	return docs, nil
}

// fill appends to docs the documents of more it does not hold yet, in
// order, up to limit.
func fill(docs, more []stored, limit int) []stored {
	have := make(map[string]bool, len(docs))
	for _, d := range docs {
		have[d.path] = true
	}
	for _, d := range more {
		if len(docs) >= limit {
			break
		}
		if !have[d.path] {
			docs = append(docs, d)
		}
	}
	return docs
}

// stored is a matching document as read back from the index.
type stored struct {
	raw float64
	all bool // from the AND pass
	// Where the index terms of the query occur, as the search collected
	// them (a term reached by two clauses twice): they tell which query
	// terms the document holds literally (see literals), and materialize
	// reads its matched terms and excerpt from them.
	locs                           []bsearch.FieldTermLocation
	path, kind, title, summary     string
	content, tags, keywords, aside string
}

// run executes one pass on c's snapshot and reads the stored fields of the
// top documents and where the query's terms occur in them.
//
// The pass ranks without the terms' locations, which a searcher would
// otherwise decode for every match it reads, thousands for a frequent
// word, and then reads them for the documents it keeps alone (locations).
func (x *Index) run(q bluge.Query, limit int, c *counter) ([]stored, error) {
	s, err := c.search(withoutLocations{q})
	if err != nil {
		return nil, err
	}
	ms, err := top(s, limit)
	if err != nil {
		return nil, err
	}
	locs, err := x.locations(q, ms, c)
	if err != nil {
		return nil, err
	}
	out := make([]stored, 0, len(ms))
	for _, m := range ms {
		d := stored{raw: m.Score, locs: locs[m.Number]}
		err = m.VisitStoredFields(func(field string, value []byte) bool {
			switch field {
			case idField:
				d.path = string(value)
			case kindField:
				d.kind = string(value)
			case fieldNames[fTitle]:
				d.title = string(value)
			case fieldNames[fSummary]:
				d.summary = string(value)
			case fieldNames[fContent]:
				d.content = string(value)
			case fieldNames[fTags]:
				d.tags = string(value)
			case fieldNames[fKeywords]:
				d.keywords = string(value)
			case fieldNames[fAside]:
				d.aside = string(value)
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("read stored fields: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// locations returns where the terms of q occur in each of ms, documents
// q matches, by document number: a search of q over those documents
// alone, as run's pass would have collected them. They are kept as the
// searcher lists them: bluge's map of fields, terms and locations
// (DocumentMatch.Complete), built for each document and read once, was a
// sixth of what a question allocated.
func (x *Index) locations(q bluge.Query, ms []*bsearch.DocumentMatch, c *counter) (map[uint64][]bsearch.FieldTermLocation, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	nums := make([]uint64, len(ms))
	for i, m := range ms {
		nums[i] = m.Number
	}
	s, err := c.search(&filtered{q: q, allow: newAllowSet(c.offsets, nums)})
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	ctx := bsearch.NewSearchContext(1+s.DocumentMatchPoolSize(), 0)
	out := make(map[uint64][]bsearch.FieldTermLocation, len(ms))
	for {
		d, err := s.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("term locations: %w", err)
		}
		if d == nil {
			return out, nil
		}
		out[d.Number] = slices.Clone(d.FieldTermLocations)
		ctx.DocumentMatchPool.Put(d)
	}
}

// withoutLocations is q searched without the locations of its terms.
type withoutLocations struct{ q bluge.Query }

// Searcher implements bluge.Query.
func (w withoutLocations) Searcher(r bsearch.Reader, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	opts.IncludeTermVectors = false
	return w.q.Searcher(r, opts)
}

// occurrences lists the term locations of one field in text order, without
// repeats (a term can be reached by two clauses of a query).
func (d *stored) occurrences(field string) []term {
	var out []term
	for _, l := range d.locs {
		if l.Field == field {
			out = append(out, term{text: l.Term, start: l.Location.Start, end: l.Location.End, pos: l.Location.Pos})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.text < b.text
	})
	return slices.CompactFunc(out, func(a, b term) bool { return a == b })
}

// literals reports which significant query terms the documents hold
// literally (exactly or as a prefix expansion), by the index terms the
// search found in them. Unmatched holds the significant terms that match no
// document at all: those found here match one, and the others are probed
// (Index.exists). Materialize does not use these terms for Matched: it
// analyses the short fields again, where every word within one edit of a
// query term matches, not only the expansions the index searched.
func literals(docs []stored, qs []qterm) []bool {
	literal := make([]bool, len(qs))
	left := 0
	for _, q := range qs {
		if q.significant {
			left++
		}
	}
	for k := 0; k < len(docs) && left > 0; k++ {
		for _, name := range fieldNames {
			for i := range qs {
				if !qs[i].significant || literal[i] {
					continue
				}
				if qs[i].literalIn(&docs[k], name) {
					literal[i] = true
					left--
				}
			}
		}
	}
	return literal
}

// literalIn reports whether q matches literally one of the terms found in
// a field of a document.
func (q *qterm) literalIn(d *stored, field string) bool {
	if q.phrase != nil {
		// A phrase needs its terms at consecutive positions.
		ts := d.occurrences(field)
		for j := range ts {
			if _, lit, _ := q.matchAt(ts, j); lit {
				return true
			}
		}
		return false
	}
	for _, l := range d.locs {
		if l.Field == field {
			if _, lit := q.match(l.Term); lit {
				return true
			}
		}
	}
	return false
}

// materialize returns the query terms the document matches and its
// excerpt. The summary and content, the long fields, are not analysed
// again: their matching terms come from the term locations the search
// collected (stored.locs), which is where most of a query's time went.
func (d *stored) materialize(qs []qterm, excerptLen int) ([]string, string) {
	found := make([]bool, len(qs))
	see := func(ts []term) {
		for j := range ts {
			for i := range qs {
				if found[i] {
					continue
				}
				if ok, _, _ := qs[i].matchAt(ts, j); ok {
					found[i] = true
				}
			}
		}
	}
	sum, text, aside := d.occurrences(fieldNames[fSummary]), d.occurrences(fieldNames[fContent]), d.occurrences(fieldNames[fAside])
	see(sum)
	see(text)
	see(aside)
	for _, text := range []string{d.title, pathText(d.path), d.tags, d.keywords} {
		ts, _ := analyze(text, true)
		see(ts)
	}
	var matched []string
	for i, q := range qs {
		if found[i] {
			matched = append(matched, q.key)
		}
	}
	return matched, excerpt([]source{{d.summary, sum}, {d.content, text}, {d.aside, aside}}, qs, excerptLen)
}

// Normalize is the normalized score ŝ = s/(1+s) of a raw score s, as hits
// carry it in Score: rounded to 4 decimals, within [0.0001, 0.9999].
func Normalize(s float64) float64 { return normalize01(s) }

// normalize01 maps a raw BM25 score s to s/(1+s), rounded to 4 decimals and
// kept within [0.0001, 0.9999] so that a hit never looks like 0 or 1.
func normalize01(s float64) float64 {
	if s <= 0 || math.IsNaN(s) {
		return 0.0001
	}
	v := math.Round(s/(1+s)*1e4) / 1e4
	return math.Min(math.Max(v, 0.0001), 0.9999)
}
