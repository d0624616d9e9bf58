package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/arbormem/arbor/bench/internal/dataset"
)

// System names, in report order.
const (
	sysArbor     = "Arbor"
	sysBM25      = "BM25"
	sysBM25Turns = "BM25 per turn"
	sysMini      = "MiniSearch"
	sysWasm      = "Arbor wasm"
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
	convs  []*locomoConv
	qs     []locomoQ
	ev     evidenceSummary
	rank   map[string]map[string][]TurnID // system → question key → ranked turns
	turns  []map[TurnID]unit              // per conversation
	arbor  map[string]queryInfo
	build  buildStats
	lat    latencies // first pass
	lat0   latencies // the same questions again (cache)
	bm25   buildTiming
	mini   *nodeDataset
	wasm   *nodeDataset
	agreed agreement           // wasm rankings against native
	pool   map[string][]TurnID // question key → its poolDepth best matches (-dump-pool)
}

type buildTiming struct {
	Dur     time.Duration
	Entries int
	Bytes   int64
	Lat     []time.Duration
}

func runLocomo(convs []*locomoConv, context int) *locomoRun {
	r := &locomoRun{convs: convs, rank: map[string]map[string][]TurnID{}, arbor: map[string]queryInfo{}, lat: latencies{}, lat0: latencies{}, pool: map[string][]TurnID{}}
	for _, s := range []string{sysArbor, sysBM25, sysBM25Turns} {
		r.rank[s] = map[string][]TurnID{}
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

		// Arbor, native.
		t, st, err := buildArbor(groups)
		if err != nil {
			progress("LoCoMo %s: open: %v", c.SampleID, err)
			continue
		}
		r.build.add(st)
		if n := len(c.Sessions); n > 0 && !c.Sessions[n-1].Date.IsZero() {
			t.clock.t = c.Sessions[n-1].Date.Add(24 * time.Hour)
		}
		for _, qi := range byConv[ci] {
			q := r.qs[qi]
			res, info, err := t.ask(q.Text, topK, r.lat)
			if err != nil {
				progress("LoCoMo %s: %v", q.Key, err)
				continue
			}
			ids := make([]TurnID, len(res))
			for i, u := range res {
				ids[i] = u.Turn
			}
			r.rank[sysArbor][q.Key] = ids
			r.arbor[q.Key] = info
		}
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
		t.close()

		// Plain BM25.
		bs := time.Now()
		p, err := buildPlainLocomo(c)
		if err != nil {
			progress("LoCoMo %s: bm25: %v", c.SampleID, err)
			continue
		}
		r.bm25.Dur += time.Since(bs)
		r.bm25.Entries += p.nSessions
		for _, s := range c.Sessions {
			r.bm25.Bytes += int64(len(locomoSessionText(s)))
		}
		for _, qi := range byConv[ci] {
			q := r.qs[qi]
			t0 := time.Now()
			ids, err := p.rankSessions(q.Text, topK)
			r.bm25.Lat = append(r.bm25.Lat, time.Since(t0))
			if err != nil {
				progress("LoCoMo %s: bm25: %v", q.Key, err)
				continue
			}
			r.rank[sysBM25][q.Key] = ids
			if ids, err = p.rankTurns(q.Text, topK); err == nil {
				r.rank[sysBM25Turns][q.Key] = ids
			}
		}
		p.close()
		progress("LoCoMo %d/%d %s: %d entries in %s, %d questions", ci+1, len(convs), c.SampleID, st.Entries, st.Dur.Round(time.Millisecond), len(byConv[ci]))
	}
	return r
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
	arbor  map[string]queryInfo
	build  buildStats
	lat    latencies
	lat0   latencies
	bm25   buildTiming
	mini   *nodeDataset
	wasm   *nodeDataset
	agreed agreement
	noGold int
	pool   map[string][]int // question id → haystack positions of its poolDepth best matches (-dump-pool)
}

func runLME(qs []*lmeQuestion, turnsPerEntry int) *lmeRun {
	r := &lmeRun{qs: qs, turns: turnsPerEntry, rank: map[string]map[string][]int{sysArbor: {}, sysBM25: {}}, arbor: map[string]queryInfo{}, lat: latencies{}, lat0: latencies{}, pool: map[string][]int{}}
	limit := topK
	if turnsPerEntry > 0 {
		limit = 100 // entries are parts of sessions: rank deeper, then dedupe
	}
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
		t, st, err := buildArbor(groups)
		if err != nil {
			progress("LongMemEval %s: open: %v", q.ID, err)
			continue
		}
		r.build.add(st)
		if d := parseLMEDate(q.Date); !d.IsZero() {
			t.clock.t = d
		}
		res, info, err := t.ask(q.Question, limit, r.lat)
		if err != nil {
			progress("LongMemEval %s: %v", q.ID, err)
		} else {
			ids := make([]int, len(res))
			for j, u := range res {
				ids[j] = u.Session
			}
			ids = dataset.Dedupe(ids)
			r.rank[sysArbor][q.ID] = ids[:min(len(ids), topK)]
			r.arbor[q.ID] = info
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
		}
		t.close()

		x, d, err := buildPlainLME(q)
		if err != nil {
			progress("LongMemEval %s: bm25: %v", q.ID, err)
			continue
		}
		r.bm25.Dur += d
		r.bm25.Entries += len(q.Sessions)
		for _, s := range q.Sessions {
			r.bm25.Bytes += int64(len(lmeSessionText(s)))
		}
		t0 := time.Now()
		hits, err := x.search(q.Question, topK)
		r.bm25.Lat = append(r.bm25.Lat, time.Since(t0))
		if err == nil {
			ids := make([]int, len(hits))
			for j, h := range hits {
				fmt.Sscan(h.id, &ids[j])
			}
			r.rank[sysBM25][q.ID] = ids
		}
		x.close()
		if (i+1)%10 == 0 || i+1 == len(qs) {
			progress("LongMemEval %d/%d: %d entries so far, build %s", i+1, len(qs), r.build.Entries, r.build.Dur.Round(time.Millisecond))
		}
	}
	return r
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
