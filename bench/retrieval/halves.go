package main

import "math"

// The scores of each half (split.go), and the strongest simple baseline of
// a metric.

// half returns the keys of the scored LoCoMo questions of h.
func (L *locomoRun) half(h half) map[string]bool {
	out := map[string]bool{}
	for _, q := range L.qs {
		if q.Scored && halfOf(q.Key) == h {
			out[q.Key] = true
		}
	}
	return out
}

// halfScores are a system's LoCoMo scores on h, overall (key 0) and by
// category.
func (L *locomoRun) halfScores(sys string, h half) map[int]*locomoScores {
	return L.score(L.rank[sys], L.half(h))
}

// half returns the ids of the scored LongMemEval questions of h.
func (E *lmeRun) half(h half) map[string]bool {
	out := map[string]bool{}
	for _, q := range E.qs {
		if !q.Abstention() && len(q.Gold()) > 0 && halfOf(q.ID) == h {
			out[q.ID] = true
		}
	}
	return out
}

// halfScores are a system's LongMemEval scores on h, overall (key "") and
// by question type.
func (E *lmeRun) halfScores(sys string, h half) map[string]*lmeScores {
	return E.score(E.rank[sys], E.half(h))
}

// strongest returns the system among syss with the highest value of get
// ("" and NaN when none has one).
func strongest(syss []string, get func(sys string) float64) (string, float64) {
	best, bv := "", math.NaN()
	for _, s := range syss {
		v := get(s)
		if !math.IsNaN(v) && (best == "" || v > bv) {
			best, bv = s, v
		}
	}
	return best, bv
}

// baselinesOf are the baselines among a run's systems.
func baselinesOf[T any](rank map[string]T) []string {
	return systems(rank, baselines...)
}
