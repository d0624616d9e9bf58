package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/arbormem/arbor/bench/internal/dataset"
	"github.com/arbormem/arbor/core/api"
)

// System names. Arbor's variants without a mechanism are named by
// ablatedName.
const (
	sysArbor     = "Arbor"
	sysBM25      = "BM25"
	sysBM25Turns = "BM25 per turn"
	sysBM25Plus  = "BM25+"
	sysBM25F     = "BM25F"
	sysBluge     = "BM25, bluge default"
	sysMini      = "MiniSearch"
	sysWasm      = "Arbor wasm"
)

// The systems of each dataset's tables, in report order; baselines are
// the simple peers, of which every table shows the strongest.
var (
	locomoSystems = []string{sysArbor, sysBM25, sysBM25Turns, sysBM25Plus, sysBM25F, sysBluge, sysMini}
	lmeSystems    = []string{sysArbor, sysBM25, sysBM25Plus, sysBM25F, sysBluge, sysMini}
	baselines     = []string{sysBM25, sysBM25Turns, sysBM25Plus, sysBM25F, sysBluge, sysMini}
)

// topK is how deep every system ranks (the largest K reported).
const topK = 10

// ---- LoCoMo ----------------------------------------------------------

var locomoCategories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

type locomoQ struct {
	Key      string // "<sample_id>#<qa index>"
	Conv     int
	Text     string
	Category int
	Gold     []TurnID
	Scored   bool // category 1–4 with at least one gold turn after cleaning
}

type evidenceSummary struct {
	Questions, Cat5, NoEvidence, Dropped, Scored int
	Strings, Split, Fixed                        int
	Malformed, Missing                           []string
}

type locomoRun struct {
	convs []*locomoConv
	qs    []locomoQ
	ev    evidenceSummary
	rank  map[string]map[string][]TurnID // system → question key → ranked turns
	turns []map[TurnID]unit              // per conversation
	arbor map[string]queryInfo           // Arbor as it is, first pass
	vs    []variant
	arms  map[string]*arm         // by variant name
	lat0  latencies               // Arbor: the same questions again (cache)
	peers map[string]*buildTiming // by system
	mini  *nodeDataset
	wasm  *nodeDataset
	// agreed compares the wasm rankings with the native ones.
	agreed agreement
	pool   map[string][]TurnID // question key → its poolDepth best matches (-dump-pool)
	off    *oodSet             // off-topic questions asked of the conversations (offtopic.go)
	// small holds each scored question asked of a handful of its
	// conversation's sessions (smallSessions): Arbor's answer and ranking,
	// and the off-topic questions asked of those trees.
	small     map[string]queryInfo
	smallRank map[string][]TurnID
	smallOff  *oodSet
	// smallTop is, by system (Arbor and the textbook BM25 over the small
	// tree's whole sessions), the session of each question's first result
	// there (0 for none): ContextFit's agent-memory R@1 counts sessions.
	smallTop map[string]map[string]int
}

type buildTiming struct {
	Dur     time.Duration
	Entries int
	Bytes   int64
	Lat     []time.Duration
}

// timed adds the duration of f to d.
func timed(d *time.Duration, f func()) {
	start := time.Now()
	f()
	*d += time.Since(start)
}

// runLocomo runs LoCoMo; foreign are the off-topic questions of the other
// dataset, asked of every conversation with the hand-written ones.
func runLocomo(convs []*locomoConv, context int, vs []variant, foreign []offTopicQ) *locomoRun {
	r := &locomoRun{convs: convs, rank: map[string]map[string][]TurnID{}, arbor: map[string]queryInfo{}, vs: vs, arms: newArms(vs), lat0: latencies{}, peers: map[string]*buildTiming{}, pool: map[string][]TurnID{}, off: newOODSet(),
		small: map[string]queryInfo{}, smallRank: map[string][]TurnID{}, smallOff: newOODSet(),
		smallTop: map[string]map[string]int{sysArbor: {}, sysBM25: {}}}
	for _, v := range vs {
		r.rank[v.name] = map[string][]TurnID{}
	}
	for _, s := range []string{sysBM25, sysBM25Turns, sysBM25Plus, sysBM25F, sysBluge} {
		r.rank[s] = map[string][]TurnID{}
		r.peers[s] = &buildTiming{}
	}
	// Questions and their cleaned gold.
	for ci, c := range convs {
		for i, qa := range c.QA {
			r.ev.Questions++
			q := locomoQ{Key: fmt.Sprintf("%s#%d", c.SampleID, i), Conv: ci, Text: qa.Question, Category: qa.Category}
			r.ev.Strings += len(qa.Evidence)
			gold, rep := ParseEvidence(qa.Evidence, func(id TurnID) bool { return c.HasTurn(id) })
			r.ev.Split += rep.Split
			r.ev.Fixed += rep.Fixed
			for _, m := range rep.Malformed {
				r.ev.Malformed = append(r.ev.Malformed, fmt.Sprintf("%s %q", q.Key, m))
			}
			for _, m := range rep.Missing {
				r.ev.Missing = append(r.ev.Missing, fmt.Sprintf("%s %s", q.Key, m))
			}
			q.Gold = gold
			switch {
			case qa.Category == 5:
				r.ev.Cat5++
			case len(qa.Evidence) == 0:
				r.ev.NoEvidence++
			case len(gold) == 0:
				r.ev.Dropped++
			default:
				q.Scored = true
				r.ev.Scored++
			}
			r.qs = append(r.qs, q)
		}
	}
	byConv := make([][]int, len(convs))
	for i, q := range r.qs {
		byConv[q.Conv] = append(byConv[q.Conv], i)
	}
	an := newEnglishAnalyzer()
	for ci, c := range convs {
		units := locomoUnits(c, context)
		turns := map[TurnID]unit{}
		var groups [][]unit
		last := -1
		for _, u := range units {
			turns[u.Turn] = u
			if u.Session != last {
				groups = append(groups, nil)
				last = u.Session
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], u)
		}
		r.turns = append(r.turns, turns)

		// Arbor, native: every variant built, then every question asked
		// of each in turn.
		trees, err := buildVariants(vs, groups, r.arms)
		if err != nil {
			progress("LoCoMo %s: open: %v", c.SampleID, err)
			continue
		}
		for _, t := range trees {
			if n := len(c.Sessions); n > 0 && !c.Sessions[n-1].Date.IsZero() {
				t.clock.t = c.Sessions[n-1].Date.Add(24 * time.Hour)
			}
		}
		for k, qi := range byConv[ci] {
			q := r.qs[qi]
			res, infos, errs := askVariants(vs, trees, r.arms, q.Key, q.Text, topK, k)
			for i, v := range vs {
				if errs[i] != nil {
					progress("LoCoMo %s (%s): %v", q.Key, v.name, errs[i])
					continue
				}
				ids := make([]TurnID, len(res[i]))
				for j, u := range res[i] {
					ids[j] = u.Turn
				}
				r.rank[v.name][q.Key] = ids
				if v.name == sysArbor {
					r.arbor[q.Key] = infos[i]
				}
			}
		}
		t := trees[0] // Arbor as it is
		for _, qi := range byConv[ci] {
			_, _, _ = t.ask(r.qs[qi].Text, topK, r.lat0)
		}
		if poolDepth > 0 {
			for _, qi := range byConv[ci] {
				us, err := t.pool(r.qs[qi].Text, poolDepth)
				if err != nil {
					progress("LoCoMo %s: pool: %v", r.qs[qi].Key, err)
					continue
				}
				ids := make([]TurnID, len(us))
				for i, u := range us {
					ids[i] = u.Turn
				}
				r.pool[r.qs[qi].Key] = ids
			}
		}
		r.off.ask(t, newTreeWords(an, units), an, append(slices.Clone(foreign), generalQs(1, 0)...), latencies{})
		for _, t := range trees {
			t.close()
		}

		if err := r.runSmall(c, units, byConv[ci], vs[0].lifecycle, foreign, an); err != nil {
			progress("LoCoMo %s: small trees: %v", c.SampleID, err)
		}
		if err := r.runPeers(c, units, byConv[ci], an); err != nil {
			progress("LoCoMo %s: peers: %v", c.SampleID, err)
			continue
		}
		st := r.arms[sysArbor].build
		progress("LoCoMo %d/%d %s: %d questions; Arbor (%d variants) %d entries so far in %s", ci+1, len(convs), c.SampleID, len(byConv[ci]), len(vs), st.Entries, st.Dur.Round(time.Millisecond))
	}
	return r
}

// runSmall asks each scored question qis of conversation c of a tree of a
// handful of its sessions (smallSessions), then off-topic questions:
// foreign ones and hand-written ones in rotation.
func (r *locomoRun) runSmall(c *locomoConv, units []unit, qis []int, lc *api.LifecycleModel, foreign []offTopicQ, an *englishAnalyzer) error {
	for k, qi := range qis {
		q := r.qs[qi]
		if !q.Scored {
			continue
		}
		keep := smallSessions(q.Key, q.Gold, len(c.Sessions), func(i int) int { return c.Sessions[i].N })
		var groups [][]unit
		var kept []unit
		for _, u := range units {
			if !keep[u.Session] {
				continue
			}
			if len(groups) == 0 || groups[len(groups)-1][0].Session != u.Session {
				groups = append(groups, nil)
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], u)
			kept = append(kept, u)
		}
		t, _, err := buildArbor(groups, lc)
		if err != nil {
			return fmt.Errorf("%s: %w", q.Key, err)
		}
		if n := len(c.Sessions); n > 0 && !c.Sessions[n-1].Date.IsZero() {
			t.clock.t = c.Sessions[n-1].Date.Add(24 * time.Hour)
		}
		res, info, err := t.ask(q.Text, topK, latencies{})
		if err != nil {
			t.close()
			return fmt.Errorf("%s: %w", q.Key, err)
		}
		r.small[q.Key] = info
		ids := make([]TurnID, len(res))
		for j, u := range res {
			ids[j] = u.Turn
		}
		r.smallRank[q.Key] = ids
		if len(ids) > 0 {
			r.smallTop[sysArbor][q.Key] = ids[0].Session
		}
		var sids, texts []string
		for _, se := range c.Sessions {
			if keep[se.N] {
				sids, texts = append(sids, fmt.Sprint(se.N)), append(texts, locomoSessionText(se))
			}
		}
		hits, err := newOkapiIndex(an, sids, texts, nil).ranker(modelBM25).search(q.Text, 1)
		if err != nil {
			t.close()
			return fmt.Errorf("%s: %s: %w", sysBM25, q.Key, err)
		}
		if len(hits) > 0 {
			r.smallTop[sysBM25][q.Key] = atoi(hits[0].id)
		}
		offQs := append(every(foreign, 40, k), generalQs(10, k)...)
		r.smallOff.ask(t, newTreeWords(an, kept), an, offQs, latencies{})
		t.close()
	}
	return nil
}

// runPeers ranks the questions qis of conversation c with every BM25 peer.
func (r *locomoRun) runPeers(c *locomoConv, units []unit, qis []int, an *englishAnalyzer) error {
	docs := newSessionDocs(c)
	// Whole sessions, then turns within: textbook BM25 (also per turn) and
	// BM25+ over one index, and bluge's default.
	var peers []struct {
		sys string
		p   *sessionPeer
	}
	add := func(sys string, sessions, turns peerIndex) {
		peers = append(peers, struct {
			sys string
			p   *sessionPeer
		}{sys, &sessionPeer{sessions, turns, docs}})
		r.peers[sys].Entries += len(docs.sids)
		r.peers[sys].Bytes += docs.bytes()
	}
	var sx, tx *okapiIndex
	timed(&r.peers[sysBM25].Dur, func() {
		sx, tx = newOkapiIndex(an, docs.sids, docs.stexts, nil), newOkapiIndex(an, docs.tids, docs.ttexts, nil)
	})
	add(sysBM25, sx.ranker(modelBM25), tx.ranker(modelBM25))
	add(sysBM25Plus, sx.ranker(modelBM25Plus), tx.ranker(modelBM25Plus))
	var bs, bt peerIndex
	var err error
	timed(&r.peers[sysBluge].Dur, func() {
		if bs, err = newBlugeIndex(docs.sids, docs.stexts); err == nil {
			if bt, err = newBlugeIndex(docs.tids, docs.ttexts); err != nil {
				bs.close()
			}
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", sysBluge, err)
	}
	defer bs.close()
	defer bt.close()
	add(sysBluge, bs, bt)
	for _, p := range peers {
		tm := r.peers[p.sys]
		for _, qi := range qis {
			q := r.qs[qi]
			t0 := time.Now()
			ids, err := p.p.rankSessions(q.Text, topK)
			tm.Lat = append(tm.Lat, time.Since(t0))
			if err != nil {
				return fmt.Errorf("%s: %s: %w", p.sys, q.Key, err)
			}
			r.rank[p.sys][q.Key] = ids
			if p.sys == sysBM25 {
				t0 := time.Now()
				ids, err := p.p.rankTurns(q.Text, topK)
				r.peers[sysBM25Turns].Lat = append(r.peers[sysBM25Turns].Lat, time.Since(t0))
				if err != nil {
					return fmt.Errorf("%s: %s: %w", sysBM25Turns, q.Key, err)
				}
				r.rank[sysBM25Turns][q.Key] = ids
			}
		}
	}
	// BM25F over Arbor's entries (one per turn, with the turns it replies
	// to), title and body.
	tm := r.peers[sysBM25F]
	var x peerIndex
	timed(&tm.Dur, func() {
		ids, bodies, titles := unitDocs(units)
		x = newOkapiIndex(an, ids, bodies, titles).ranker(modelBM25F)
	})
	tm.Entries += len(units)
	for _, u := range units {
		tm.Bytes += int64(len(u.Title) + len(u.searchText()))
	}
	for _, qi := range qis {
		q := r.qs[qi]
		t0 := time.Now()
		hits, err := x.search(q.Text, topK)
		tm.Lat = append(tm.Lat, time.Since(t0))
		if err != nil {
			return fmt.Errorf("%s: %s: %w", sysBM25F, q.Key, err)
		}
		ids := make([]TurnID, len(hits))
		for i, h := range hits {
			ids[i] = units[atoi(h.id)].Turn
		}
		r.rank[sysBM25F][q.Key] = ids
	}
	return nil
}

// locomoScores are the LoCoMo metrics of one group of questions.
type locomoScores struct {
	N              int
	R5, R10, Hit1  mean
	ArborFewer     int // Arbor: fewer than topK results
	ArborOOD       int
	ArborContextsK int // Arbor: questions with a context.md among the results
}

// score computes the metrics of one system, overall (key 0) and by category.
func (r *locomoRun) score(rank map[string][]TurnID, only map[string]bool) map[int]*locomoScores {
	out := map[int]*locomoScores{0: {}}
	for _, q := range r.qs {
		if !q.Scored || (only != nil && !only[q.Key]) {
			continue
		}
		ranked := rank[q.Key]
		goldS := map[int]bool{}
		for _, g := range q.Gold {
			goldS[g.Session] = true
		}
		for _, k := range []int{0, q.Category} {
			s := out[k]
			if s == nil {
				s = &locomoScores{}
				out[k] = s
			}
			s.N++
			s.R5.add(RecallAtK(ranked, q.Gold, 5))
			s.R10.add(RecallAtK(ranked, q.Gold, 10))
			s.Hit1.addBool(len(ranked) > 0 && ranked[0] != (TurnID{}) && goldS[ranked[0].Session])
		}
	}
	return out
}

// ---- LongMemEval -----------------------------------------------------

type lmeRun struct {
	qs     []*lmeQuestion
	turns  int                         // turns per entry, 0 for whole sessions
	rank   map[string]map[string][]int // system → question id → ranked haystack positions
	arbor  map[string]queryInfo        // Arbor as it is, first pass
	vs     []variant
	arms   map[string]*arm // by variant name
	lat0   latencies
	peers  map[string]*buildTiming // by system
	mini   *nodeDataset
	wasm   *nodeDataset
	agreed agreement
	noGold int
	pool   map[string][]int // question id → haystack positions of its poolDepth best matches (-dump-pool)
	off    *oodSet          // off-topic questions asked of the haystacks (offtopic.go)
	// small holds each question asked of a handful of its sessions
	// (smallTree): Arbor's answer, its ranking and textbook BM25's, and
	// the off-topic questions asked of those trees.
	small     map[string]queryInfo
	smallRank map[string]map[string][]int // system → question id → ranked positions in the small tree
	smallOff  *oodSet
	smallQs   map[string]*lmeQuestion
}

// runLME runs LongMemEval-S; foreign are the off-topic questions of the
// other dataset, spread over the haystacks with the hand-written ones.
func runLME(qs []*lmeQuestion, turnsPerEntry int, vs []variant, foreign []offTopicQ) *lmeRun {
	r := &lmeRun{qs: qs, turns: turnsPerEntry, rank: map[string]map[string][]int{}, arbor: map[string]queryInfo{}, vs: vs, arms: newArms(vs), lat0: latencies{}, peers: map[string]*buildTiming{}, pool: map[string][]int{},
		off: newOODSet(), small: map[string]queryInfo{}, smallRank: map[string]map[string][]int{sysArbor: {}, sysBM25: {}}, smallOff: newOODSet(), smallQs: map[string]*lmeQuestion{}}
	for _, v := range vs {
		r.rank[v.name] = map[string][]int{}
	}
	for _, s := range []string{sysBM25, sysBM25Plus, sysBM25F, sysBluge} {
		r.rank[s] = map[string][]int{}
		r.peers[s] = &buildTiming{}
	}
	limit := topK
	if turnsPerEntry > 0 {
		limit = 100 // entries are parts of sessions: rank deeper, then dedupe
	}
	an := newEnglishAnalyzer()
	for i, q := range qs {
		if len(q.Gold()) == 0 {
			r.noGold++
		}
		units := lmeUnits(q, turnsPerEntry)
		var groups [][]unit
		last := -1
		for _, u := range units {
			if u.Session != last {
				groups = append(groups, nil)
				last = u.Session
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], u)
		}
		// Curate in time order, as the sessions happened.
		sort.SliceStable(groups, func(a, b int) bool { return groups[a][0].Time.Before(groups[b][0].Time) })
		trees, err := buildVariants(vs, groups, r.arms)
		if err != nil {
			progress("LongMemEval %s: open: %v", q.ID, err)
			continue
		}
		if d := parseLMEDate(q.Date); !d.IsZero() {
			for _, t := range trees {
				t.clock.t = d
			}
		}
		res, infos, errs := askVariants(vs, trees, r.arms, q.ID, q.Question, limit, i)
		for j, v := range vs {
			if errs[j] != nil {
				progress("LongMemEval %s (%s): %v", q.ID, v.name, errs[j])
				continue
			}
			ids := make([]int, len(res[j]))
			for k, u := range res[j] {
				ids[k] = u.Session
			}
			ids = dataset.Dedupe(ids)
			r.rank[v.name][q.ID] = ids[:min(len(ids), topK)]
			if v.name == sysArbor {
				r.arbor[q.ID] = infos[j]
			}
		}
		t := trees[0] // Arbor as it is
		if errs[0] == nil {
			_, _, _ = t.ask(q.Question, limit, r.lat0)
			if poolDepth > 0 {
				if us, err := t.pool(q.Question, poolDepth); err != nil {
					progress("LongMemEval %s: pool: %v", q.ID, err)
				} else {
					ids := make([]int, len(us))
					for j, u := range us {
						ids[j] = u.Session
					}
					r.pool[q.ID] = ids
				}
			}
			offQs := append(every(foreign, len(qs), i), generalQs(5, i)...)
			r.off.ask(t, newTreeWords(an, units), an, offQs, latencies{})
		}
		for _, t := range trees {
			t.close()
		}
		if err := r.runSmall(i, vs[0].lifecycle, foreign, an); err != nil {
			progress("LongMemEval %s: small tree: %v", q.ID, err)
		}
		if err := r.runPeers(q, units, an); err != nil {
			progress("LongMemEval %s: peers: %v", q.ID, err)
		}
		if (i+1)%10 == 0 || i+1 == len(qs) {
			st := r.arms[sysArbor].build
			progress("LongMemEval %d/%d: Arbor (%d variants) %d entries so far, build %s", i+1, len(qs), len(vs), st.Entries, st.Dur.Round(time.Millisecond))
		}
	}
	return r
}

// runPeers ranks question q with every BM25 peer: whole sessions (user and
// assistant turns) for textbook BM25 and BM25+ (one index) and bluge's
// default; Arbor's entries (title and body) for BM25F.
func (r *lmeRun) runPeers(q *lmeQuestion, units []unit, an *englishAnalyzer) error {
	ids, texts := lmeSessionDocs(q)
	bytes := int64(0)
	for _, t := range texts {
		bytes += int64(len(t))
	}
	uids, bodies, titles := unitDocs(units)
	ubytes := int64(0)
	for i := range bodies {
		ubytes += int64(len(bodies[i]) + len(titles[i]))
	}
	var sx, ux *okapiIndex
	var bx peerIndex
	var err error
	timed(&r.peers[sysBM25].Dur, func() { sx = newOkapiIndex(an, ids, texts, nil) })
	timed(&r.peers[sysBM25F].Dur, func() { ux = newOkapiIndex(an, uids, bodies, titles) })
	timed(&r.peers[sysBluge].Dur, func() { bx, err = newBlugeIndex(ids, texts) })
	if err != nil {
		return fmt.Errorf("%s: %w", sysBluge, err)
	}
	defer bx.close()
	for _, p := range []struct {
		sys     string
		x       peerIndex
		entries int
		bytes   int64
		session func(id string) int // the haystack position of a hit
	}{
		{sysBM25, sx.ranker(modelBM25), len(ids), bytes, atoi},
		{sysBM25Plus, sx.ranker(modelBM25Plus), len(ids), bytes, atoi},
		{sysBM25F, ux.ranker(modelBM25F), len(units), ubytes, func(id string) int { return units[atoi(id)].Session }},
		{sysBluge, bx, len(ids), bytes, atoi},
	} {
		tm := r.peers[p.sys]
		tm.Entries += p.entries
		tm.Bytes += p.bytes
		deep := topK
		if p.entries > len(ids) {
			deep = p.entries // parts of sessions: rank all, then dedupe
		}
		t0 := time.Now()
		hits, err := p.x.search(q.Question, deep)
		tm.Lat = append(tm.Lat, time.Since(t0))
		if err != nil {
			return fmt.Errorf("%s: %w", p.sys, err)
		}
		rk := make([]int, len(hits))
		for j, h := range hits {
			rk[j] = p.session(h.id)
		}
		rk = dataset.Dedupe(rk)
		r.rank[p.sys][q.ID] = rk[:min(len(rk), topK)]
	}
	return nil
}

// runSmall asks question i of a tree of a handful of its sessions
// (smallTree), Arbor and textbook BM25, then off-topic questions: the next
// three LongMemEval-S questions, and foreign and hand-written ones in
// rotation.
func (r *lmeRun) runSmall(i int, lc *api.LifecycleModel, foreign []offTopicQ, an *englishAnalyzer) error {
	q := smallTree(r.qs[i])
	r.smallQs[q.ID] = q
	units := lmeUnits(q, r.turns)
	var groups [][]unit
	for _, u := range units {
		if len(groups) == 0 || groups[len(groups)-1][0].Session != u.Session {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], u)
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a][0].Time.Before(groups[b][0].Time) })
	t, _, err := buildArbor(groups, lc)
	if err != nil {
		return err
	}
	defer t.close()
	if d := parseLMEDate(q.Date); !d.IsZero() {
		t.clock.t = d
	}
	res, info, err := t.ask(q.Question, topK, latencies{})
	if err != nil {
		return err
	}
	r.small[q.ID] = info
	ids := make([]int, len(res))
	for k, u := range res {
		ids[k] = u.Session
	}
	r.smallRank[sysArbor][q.ID] = dataset.Dedupe(ids)
	sids, texts := lmeSessionDocs(q)
	hits, err := newOkapiIndex(an, sids, texts, nil).ranker(modelBM25).search(q.Question, topK)
	if err != nil {
		return err
	}
	rk := make([]int, len(hits))
	for k, h := range hits {
		rk[k] = atoi(h.id)
	}
	r.smallRank[sysBM25][q.ID] = rk
	var offQs []offTopicQ
	for k := 1; k <= 3 && k < len(r.qs); k++ {
		o := r.qs[(i+k)%len(r.qs)]
		offQs = append(offQs, offTopicQ{ID: o.ID, From: offLongMemEval, Text: o.Question})
	}
	offQs = append(append(offQs, every(foreign, len(r.qs), i)...), generalQs(5, i)...)
	r.smallOff.ask(t, newTreeWords(an, units), an, offQs, latencies{})
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

type lmeScores struct {
	N                              int
	Any1, Any5, All5, Any10, All10 mean
}

func (r *lmeRun) score(rank map[string][]int, only map[string]bool) map[string]*lmeScores {
	out := map[string]*lmeScores{"": {}}
	for _, q := range r.qs {
		if q.Abstention() || (only != nil && !only[q.ID]) {
			continue
		}
		gold := q.Gold()
		if len(gold) == 0 {
			continue
		}
		ranked := rank[q.ID]
		for _, k := range []string{"", q.Type} {
			s := out[k]
			if s == nil {
				s = &lmeScores{}
				out[k] = s
			}
			s.N++
			s.Any1.addBool(AnyAtK(ranked, gold, 1))
			s.Any5.addBool(AnyAtK(ranked, gold, 5))
			s.All5.addBool(AllAtK(ranked, gold, 5))
			s.Any10.addBool(AnyAtK(ranked, gold, 10))
			s.All10.addBool(AllAtK(ranked, gold, 10))
		}
	}
	return out
}
