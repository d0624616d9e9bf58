package retrieve

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/search"
)

// The direct-answer rule (tier 2). A direct answer presents the top entry
// alone as the answer, so it must be right: the ByteRover paper's rule (a
// high normalized score clearly ahead of the next) presented the wrong
// LoCoMo turn in one direct answer of four, since many entries of a
// conversation share the question's words and the top one often matched
// them through the turns it replies to. An entry answers directly only
// when every significant word of the question occurs in the tree and
// signals agree: it states itself (title, summary, narrative and
// facts; not its provenance or the turns it replies to) at least
// directStated of the question's terms, more of them than any other of the
// decideDepth best matches, and its raw score leads the next:
//
//   - by directRatio, stating directMargin terms more than any other;
//   - by directRatioFar, stating more than any other; or
//   - by directRatioStrong, stating more than any other, with ŝ ≥
//     directStrong (a very strong match needs a smaller lead).
//
// Three kinds of top entry never answer directly, however far ahead: a
// piece of an exchange that asks what the question asks ("How long do you
// usually hold that pose?"), whose reply holds the answer; the words of
// one person when the question asks about another ("What does Melanie
// think about Caroline's decision?", answered by Caroline's turn); and a
// piece of an exchange whose neighbour in it (the turn just before or
// after) is the next best match: the question's words run across the
// two, and the answer is as often in the other ("Last weekend I started
// shooting a video for my new album" above "We're doing the shoot in
// Miami").
//
// An entry that is the only one matching any term of the question, with ŝ
// ≥ directLone, answers directly too (the paper's rule): nothing else in
// the tree could be meant. The benchmark's trees never have a lone match,
// so this path is not measured there.
//
// The values were chosen on the tuning half of the retrieval benchmark and
// hold on its validation half (bench/retrieval/REPORT.md, "Direct answers").
// An answer that is not direct still lists the same ranked results.
const (
	decideDepth       = 10
	directStated      = 0.6
	directMargin      = 2
	directRatio       = 1.6
	directRatioFar    = 2.5
	directRatioStrong = 1.25
	directStrong      = 0.95
	directLone        = 0.85
)

// Out of domain: a significant word of the question occurs in no entry,
// and the matches are tangents: the best of the oodDepth best matches
// holds less than oodCover of the question's terms, or the words found
// nowhere are at least oodMissing of them (frame words left out of both
// counts). The paper's rule (a word found nowhere and a top ŝ below 0.85)
// depends on the scale of the scores: in a tree of a handful of entries
// idf is small and every score is low, so it flagged answerable questions
// whose one paraphrased word was missing (bench/retrieval/REPORT.md,
// "Out-of-domain detection"). A match that is a piece of an exchange (a
// turn of a chat, whose flow holds the turns it replies to) holds what the
// pieces of its exchange among the oodEpisode best matches hold: a
// question's words spread over the turns of one exchange, each of them a
// few words long (as for sibling evidence, siblings.go).
const (
	oodDepth   = 5
	oodEpisode = 10
	oodCover   = 0.5
	oodMissing = 0.6
)

// Query runs the tiers that need no LLM: the exact and fuzzy caches, then
// a direct answer from the index; otherwise it returns the best results and
// says that a synthesized answer would need a model. Results are ordered by
// the lifecycle's compound score (see answer).
func (rv *Retriever) Query(p api.SearchParams) (api.QueryResult, error) {
	o, err := rv.query(p)
	return o.res, err
}

// outcome is an answer of the retrieval tiers as the engine keeps it, in
// the cache and between tiers: the result, and its hits with what the
// ordering reads (search.Hit); answer sets res.Results from hits.
type outcome struct {
	res  api.QueryResult
	hits []search.Hit
	// by orders the results by a key (a sort other than relevance) rather
	// than by the lifecycle's compound score.
	by func(string) (float64, bool)
	// scoped: filtered or sorted, an answer the caches must not keep.
	scoped bool
	// scope is what the filters keep: a model asked beyond tier 2 works
	// within it.
	scope search.Scope
}

// query is Query, with the hits as the ordering left them.
func (rv *Retriever) query(p api.SearchParams) (outcome, error) {
	start := time.Now()
	limit, err := p.Check(5)
	if err != nil {
		return outcome{}, err
	}
	norm := normalizeQuery(p.Query)
	if norm == "" {
		return outcome{}, api.Errorf(api.CodeInvalidParams, "query %q has no words", p.Query)
	}
	spans := atoms.When(p.Query, rv.clock.Now())
	if len(spans) > 0 {
		// The answer depends on the day the question is asked.
		var b strings.Builder
		b.WriteString(norm)
		for _, s := range spans {
			b.WriteString(" @" + s.From.Format(time.DateOnly) + ".." + s.To.Format(time.DateOnly))
		}
		norm = b.String()
	}
	sc, err := rv.Scope(p.Filters)
	if err != nil {
		return outcome{}, err
	}
	// A filtered or sorted query is not cached: the lifecycle and the
	// spans back from now it may read change without a write to the tree.
	scoped := !sc.Filter.IsZero() || sc.By != nil
	if !scoped {
		if hit, answered, ok := rv.cache.lookup(p.Query, norm, limit, rv.covers); ok {
			return rv.answer(hit, answered, start), nil
		}
	}
	// The excerpts are built for the hits kept after rerank only. Total
	// is read only to know whether one entry alone matches (directLone),
	// which the pool tells: it holds every match when fewer than its size.
	uncounted := sc
	uncounted.Uncounted = true
	ranked, err := rv.index.RankIn(withoutFraming(p.Query, rv.off), max(limit, rerankPool), search.ByScore, uncounted)
	if err != nil {
		return outcome{}, fmt.Errorf("query %q: %w", p.Query, err)
	}
	r := ranked.Result
	r.Unmatched = slices.DeleteFunc(r.Unmatched, rv.frameWord)
	var certs []string
	fused, degraded := rv.fuse(&r, p.Query, max(limit, rerankPool), func(path string) bool { return rv.admits(sc, path) })
	if fused != "" {
		certs = append(certs, fused)
	}
	if c := rv.dated(&r, spans); c != "" {
		certs = append(certs, c)
	}
	named := rv.named(&r)
	if c := rv.authors(&r, named); c != "" {
		certs = append(certs, c)
	}
	if c := rv.siblings(r.Hits); c != "" {
		certs = append(certs, c)
	}
	if c := rv.ownWords(&r, ranked.Says); c != "" {
		certs = append(certs, c)
	}
	if c := rv.pieceLength(r.Hits); c != "" {
		certs = append(certs, c)
	}
	if c := rv.replied(&r, ranked.Says, func(path string) bool { return rv.admits(sc, path) }); c != "" {
		certs = append(certs, c)
	}
	pool := r.Hits
	if sc.By != nil {
		pool = slices.Clone(r.Hits)
	}
	// decide reads the decideDepth best matches whatever the limit, so
	// that the verdict does not depend on it; o.hits holds limit of them.
	rerank(&r, max(limit, decideDepth))
	ranked.Materialize(r.Hits)
	episode := rv.episodes(r.Hits)
	o := decide(p.Query, r, reading{
		stated:     rv.stated(r.Hits, ranked.Says),
		frame:      rv.frameWord,
		episode:    episode,
		who:        person(named),
		asks:       rv.asks(r.Hits, ranked.Says),
		other:      rv.otherAuthor(r.Hits, subjects(p.Query, named)),
		neighbours: rv.neighbours(r.Hits, episode),
	}, limit)
	for _, c := range certs {
		o.res.Reason += "; " + c
	}
	answered := directPath(o)
	if sc.By != nil {
		// Sorted by a key: the limit first of the pool by it (the entry a
		// direct answer presents among them), not the limit best.
		o.by = sc.By
		o.hits = byKey(pool, sc.By, answered, limit)
		ranked.Materialize(o.hits)
	}
	o.scoped, o.scope = scoped, sc
	if !degraded && !scoped {
		rv.cache.put(p.Query, norm, limit, answered, o)
	}
	return rv.answer(o, answered, start), nil
}

// covers reports whether the entry at path holds every one of words (as
// the index analyzes them, in any field): a fuzzy cache hit must not bring
// a word its answer lacks.
func (rv *Retriever) covers(path string, words []string) bool {
	en, ok := rv.catalog.Get(path)
	if !ok {
		return false
	}
	d := catalog.EntryDoc(en)
	have := search.Analyze(strings.Join(append([]string{d.Path, d.Title, d.Summary, d.Content, d.Aside}, append(d.Tags, d.Keywords...)...), "\n"))
	for _, w := range words {
		if said, n := rv.index.Says(w, have); said < n {
			return false
		}
	}
	return true
}

// Every question is searched over a pool of the rerankPool best matches,
// by score alone (search.ByScore), which the evidence rules (time, named
// authors, siblings and openers, own words, piece length, replied-to, which
// may bring in the turns the best matches reply to) rescore before it is
// cut to the limit. For a question about a time ("a week ago", "in March") the
// entries dated within the time it names have their score multiplied by
// timeBoost, when the time is named with confidence (atoms.Span.Confident)
// and when at most timeShare of the pool is dated within it: the rule
// re-ranks what the words found, it must not put every entry of a wide
// window ahead of the rest (which is what a window holding most of the pool
// would do). A range that frames the question ("in the past three months")
// is cut out of the search: people say "a week ago" or "last year" in what
// they tell, hardly "in the past three months" (measured in
// bench/retrieval/mechanisms.md).
const (
	rerankPool = 50
	timeBoost  = 2.0
	timeShare  = 0.5
)

// withoutFraming is the question without the words asking for a
// duration ("how many days ago", "how long ago"), which would otherwise
// match every entry that says "days" or "ago" (measured in
// bench/retrieval/mechanisms.md); off may leave them in. The ranges of
// time a question asks within ("in the past three months") stay: cutting
// them helped on the tuning half only (bench/retrieval/ABLATION.md).
func withoutFraming(q string, off Off) string {
	if off.DurationWords {
		return q
	}
	cuts := atoms.Durations(q) // in order, apart
	if len(cuts) == 0 {
		return q
	}
	var b strings.Builder
	from := 0
	for _, c := range cuts {
		b.WriteString(q[from:c.Start])
		b.WriteByte(' ')
		from = c.End
	}
	b.WriteString(q[from:])
	return b.String()
}

// frameWords shape a question rather than name what it is about ("What
// attributes describe John?", "What do they have in common?", "Which types
// of cars…"): their absence from the tree says nothing about its domain, so
// they never make a question out of domain (they are still searched). In
// the LoCoMo benchmark they were 5 of the 11 false out-of-domain verdicts.
// Stemming gives each its inflections ("describes", "described").
// Words that ask for an order, a count or a suggestion ("in what order",
// "the earliest", "in total", "can you recommend") frame the question in
// the same way.
var frameWords = strings.Fields("attribute common describe detail example kind likely mention reason relate represent sort subject thing type ways" +
	" order earliest latest first second third last total recommend suggest")

// frames holds frameWords as the index analyzes them (the same in every
// index), made on first use.
var (
	frames     map[string]bool
	framesOnce sync.Once
)

// frameWord reports whether an analyzed query term is one of frameWords.
func (rv *Retriever) frameWord(t string) bool {
	framesOnce.Do(func() {
		frames = map[string]bool{}
		for _, w := range frameWords {
			for _, a := range rv.index.Terms(w) {
				frames[a] = true
			}
		}
	})
	return frames[t]
}

// dated raises the scores of the entries dated (saidAt) within one of the
// confident spans, when they are at most timeShare of the pool. It returns
// the reason code of what it did, or "".
func (rv *Retriever) dated(r *search.Result, spans []atoms.Span) string {
	if len(spans) == 0 {
		return ""
	}
	// The words of a time expression ("month" of "a month ago") are not
	// what the question is about: their absence from the tree says nothing
	// about its domain.
	timeWords := map[string]bool{}
	for _, s := range spans {
		for _, t := range rv.index.Terms(s.Phrase) {
			timeWords[t] = true
		}
	}
	r.Unmatched = slices.DeleteFunc(r.Unmatched, func(t string) bool { return timeWords[t] })
	if rv.off.TimeWindow {
		return ""
	}
	spans = slices.DeleteFunc(slices.Clone(spans), func(s atoms.Span) bool { return !s.Confident })
	if len(spans) == 0 {
		return ""
	}
	var within []int
	entries := 0
	for i := range r.Hits {
		if r.Hits[i].Kind == "context" {
			continue
		}
		entries++
		t := rv.saidAt(r.Hits[i].Path)
		if !t.IsZero() && slices.ContainsFunc(spans, func(s atoms.Span) bool { return s.Contains(t) }) {
			within = append(within, i)
		}
	}
	var b strings.Builder
	for i, s := range spans {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.String())
	}
	if float64(len(within)) > timeShare*float64(entries) {
		return fmt.Sprintf("time %s: %d of the %d entries in the pool dated within it, more than %g of them: scores left as they were", b.String(), len(within), entries, timeShare)
	}
	for _, i := range within {
		r.Hits[i].Raw *= timeBoost
	}
	return fmt.Sprintf("time %s: %d of the %d best matches dated within it, their scores ×%g", b.String(), len(within), rerankPool, timeBoost)
}

// reading is what decide reads of the best matches besides their scores.
// A nil func reads as 0, "" or false for every hit.
type reading struct {
	// stated(i) is the number of the question's terms hit i states itself
	// (Retriever.stated).
	stated func(i int) int
	// frame tells the terms that frame the question.
	frame func(string) bool
	// episode(i) is the exchange hit i is a piece of ("" for none).
	episode func(i int) string
	// who is a person the question names who wrote some of the best
	// matches ("" for none).
	who string
	// asks(i) tells whether hit i asks what the question asks
	// (Retriever.asks).
	asks func(i int) bool
	// other(i) is the author of hit i when the question asks about other
	// people than them (Retriever.otherAuthor), "" otherwise.
	other func(i int) string
	// neighbours(i, j) tells whether hits i and j are pieces of one
	// exchange next to each other in it (Retriever.neighbours).
	neighbours func(i, j int) bool
}

// decide applies the tier-2 rules (docs/ABI.md §4.4) to ranked results:
// r.Hits are the best matches in rank order, read through rd; the outcome
// keeps limit hits.
func decide(q string, r search.Result, rd reading, limit int) outcome {
	hits := r.Hits
	if hits == nil {
		hits = []search.Hit{}
	}
	o := outcome{res: api.QueryResult{Query: q, Tier: api.TierDirect}, hits: hits[:min(len(hits), limit)]}
	res := &o.res
	if len(hits) == 0 {
		res.TierName, res.OutOfDomain = "out-of-domain", true
		res.Answer = "Nothing stored matches this question; it is outside the knowledge in this tree."
		res.Reason = fmt.Sprintf("no entry matches any of the terms %v", r.Terms)
		return o
	}
	ood := outOfDomain(r, rd.frame, rd.episode)
	if ood != "" && rd.who == "" {
		res.TierName, res.OutOfDomain = "out-of-domain", true
		res.Answer = "Nothing stored answers this question; it is outside the knowledge in this tree."
		res.Reason = ood
		return o
	}
	direct, why := directVerdict(r, rd)
	if direct {
		res.TierName, res.Reason = "direct", "direct answer: "+why
		res.Answer = directAnswer(hits[0])
		return o
	}
	res.TierName, res.NeedsLLM = "results", true
	res.Reason = "no direct answer: " + why + "; a synthesized answer needs an LLM (tier 3)"
	if ood != "" {
		// A question about someone whose words the tree holds is within
		// its knowledge, though it asks for what no entry says (a term
		// found nowhere also rules out a direct answer): the LLM tiers
		// decide what the person's entries tell.
		res.Reason += fmt.Sprintf("; in domain though %s: the question names %s, who wrote some of the best matches", ood, rd.who)
	}
	res.Answer = fmt.Sprintf("No single entry answers this with confidence; the %d best matches are listed, best first.", len(o.hits))
	return o
}

// outOfDomain says why the question is out of domain, or "" when it is not.
func outOfDomain(r search.Result, frame func(string) bool, episode func(i int) string) string {
	if len(r.Unmatched) == 0 {
		return ""
	}
	asked := 0
	for _, t := range r.Terms {
		if !frame(t) {
			asked++
		}
	}
	eps := make([]string, min(len(r.Hits), oodEpisode))
	if episode != nil {
		for j := range eps {
			eps[j] = episode(j)
		}
	}
	covered := 0
	for i := range r.Hits[:min(len(r.Hits), oodDepth)] {
		held := map[string]bool{}
		for j, h := range r.Hits[:len(eps)] {
			if j != i && (eps[i] == "" || eps[j] != eps[i]) {
				continue
			}
			for _, t := range h.Matched {
				if !frame(t) {
					held[t] = true
				}
			}
		}
		covered = max(covered, len(held))
	}
	missing := len(r.Unmatched)
	switch {
	case asked == 0:
		return ""
	case float64(covered) < oodCover*float64(asked):
		return fmt.Sprintf("the terms %v occur in no entry and the best match holds %d of the question's %d terms (< %g)", r.Unmatched, covered, asked, oodCover)
	case float64(missing) >= oodMissing*float64(asked):
		return fmt.Sprintf("the terms %v, %d of the question's %d terms (≥ %g), occur in no entry", r.Unmatched, missing, asked, oodMissing)
	}
	return ""
}

// episodes returns the exchange each of hits is a piece of: its folder,
// when the entry replies to turns before it (isReply); "" otherwise.
func (rv *Retriever) episodes(hits []search.Hit) func(i int) string {
	return func(i int) string {
		if hits[i].Kind == "context" {
			return ""
		}
		if en, ok := rv.catalog.Get(hits[i].Path); ok && isReply(en) {
			return path.Dir(hits[i].Path)
		}
		return ""
	}
}

// directVerdict reports whether the top hit answers directly, and why. It
// asks rd only what its rules read, in their order: what a long entry
// states is analyzed from its whole text (ownCached).
func directVerdict(r search.Result, rd reading) (bool, string) {
	stated := rd.stated
	hits, top := r.Hits, r.Hits[0]
	terms := len(r.Terms)
	if terms == 0 {
		return false, "the question has no terms"
	}
	ratio := math.Inf(1)
	if len(hits) > 1 && hits[1].Raw > 0 {
		ratio = top.Raw / hits[1].Raw
	}
	// lead says how far ahead the top is, against the ratio a path needs.
	lead := func(need float64) string {
		if math.IsInf(ratio, 1) {
			return "the only match"
		}
		if need == 0 {
			return fmt.Sprintf("%.2f× the next raw score", ratio)
		}
		return fmt.Sprintf("%.2f× the next raw score (≥ %g)", ratio, need)
	}
	switch {
	case len(r.Unmatched) > 0:
		return false, fmt.Sprintf("the terms %v occur in no entry", r.Unmatched)
	case r.Total == 1 && len(hits) == 1 && top.Score >= directLone:
		return true, fmt.Sprintf("the only entry matching any term, with score %.4f ≥ %g", top.Score, directLone)
	}
	own := stated(0)
	said := fmt.Sprintf("the top entry states %d of the question's %d terms itself", own, terms)
	if float64(own) < directStated*float64(terms) {
		return false, fmt.Sprintf("%s (< %g)", said, directStated)
	}
	// rest is the most any other of the best matches states, read until
	// one states as much as the top: analyzing a long entry's words is most
	// of a question's time in a process that has not read it before (the
	// CLI's), and the verdict is then known.
	rest := 0
	for i := 1; i < min(len(hits), decideDepth) && rest < own; i++ {
		rest = max(rest, stated(i))
	}
	if own <= rest {
		return false, fmt.Sprintf("%s, and another of the %d best matches %d", said, decideDepth, rest)
	}
	var why string
	switch {
	case own-rest >= directMargin && ratio >= directRatio:
		why = fmt.Sprintf("%s, %d more than any other of the %d best matches, and %s", said, own-rest, decideDepth, lead(directRatio))
	case ratio >= directRatioFar:
		why = fmt.Sprintf("%s, more than any other of the %d best matches, and %s", said, decideDepth, lead(directRatioFar))
	case ratio >= directRatioStrong && top.Score >= directStrong:
		why = fmt.Sprintf("%s, more than any other of the %d best matches, with top score %.4f ≥ %g and %s", said, decideDepth, top.Score, directStrong, lead(directRatioStrong))
	default:
		return false, fmt.Sprintf("%s, %d more than any other of the %d best matches, but with top score %.4f only %s", said, own-rest, decideDepth, top.Score, lead(0))
	}
	if rd.asks != nil && rd.asks(0) {
		return false, why + ", but it asks what the question asks: its reply holds the answer"
	}
	if rd.other != nil {
		if who := rd.other(0); who != "" {
			return false, fmt.Sprintf("%s, but in the words of %s, whom the question does not ask about", why, who)
		}
	}
	if len(hits) > 1 && rd.neighbours != nil && rd.neighbours(0, 1) {
		return false, why + ", but the next best match is its neighbour in the exchange: the answer may be in either"
	}
	return true, why
}

// neighbours returns the func reading.neighbours is: hits i and j are
// pieces of one exchange (episode, Retriever.episodes of hits) next to
// each other in its folder's name order (catalog.Catalog.Folder), the
// order of its turns.
func (rv *Retriever) neighbours(hits []search.Hit, episode func(i int) string) func(i, j int) bool {
	return func(i, j int) bool {
		e := episode(i)
		if e == "" || episode(j) != e {
			return false
		}
		folder := rv.catalog.Folder(e)
		a, okA := slices.BinarySearch(folder, hits[i].Path)
		b, okB := slices.BinarySearch(folder, hits[j].Path)
		return okA && okB && (a-b == 1 || b-a == 1)
	}
}

// stated returns the count directVerdict reads: the query's terms hit i
// states itself (statedOf), 0 for a context file.
func (rv *Retriever) stated(hits []search.Hit, says func(search.Words) int) func(i int) int {
	return func(i int) int {
		if en, ok := rv.catalog.Get(hits[i].Path); ok && hits[i].Kind != "context" {
			return says(rv.statedOf(en))
		}
		return 0
	}
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

// byKey returns the limit first of hits by a key, descending (hits with
// no key after those with one), equal keys by raw score then path,
// entries before contexts; the hit at answered, if any, comes first.
func byKey(hits []search.Hit, by func(string) (float64, bool), answered string, limit int) []search.Hit {
	hits = slices.Clone(hits)
	type k struct {
		v   float64
		has bool
	}
	keys := make(map[string]k, len(hits))
	for _, h := range hits {
		v, has := by(h.Path)
		keys[h.Path] = k{v, has}
	}
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if c := lead(a, b, answered); c != 0 {
			return c
		}
		ka, kb := keys[a.Path], keys[b.Path]
		if ka.has != kb.has {
			if ka.has {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(kb.v, ka.v); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Raw, a.Raw); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return hits[:min(len(hits), limit)]
}

// rerank orders the hits again by their raw scores, entries before
// contexts, equal scores by path, and cuts them to limit.
func rerank(r *search.Result, limit int) {
	slices.SortFunc(r.Hits, func(a, b search.Hit) int {
		if c := cmp.Compare(group(a), group(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Raw, a.Raw); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	r.Hits = r.Hits[:min(len(r.Hits), limit)]
}
