package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The ablation report (-ablation): every mechanism of mechanisms switched
// off alone, against Arbor as it is, on both halves.

// signed formats a difference with its sign (a true minus), 0 as "0".
func signed(v float64, format string) string {
	if math.IsNaN(v) {
		return "—"
	}
	s := fmt.Sprintf(format, math.Abs(v))
	if z := fmt.Sprintf(format, 0.0); s == z {
		return z
	}
	if v < 0 {
		return "−" + s
	}
	return "+" + s
}

// pts is a difference of shares in percentage points.
func pts(v float64) string { return signed(100*v, "%.1f") }

// msDelta is a difference of durations in milliseconds.
func msDelta(d time.Duration) string { return signed(float64(d.Nanoseconds())/1e6, "%.3f") + " ms" }

// pairedDelta is the median over the questions both arms answered of the
// difference of their latencies (on − off), and the number of questions.
func pairedDelta(on, off map[string]time.Duration) (time.Duration, int) {
	var ds []time.Duration
	for k, a := range on {
		if b, ok := off[k]; ok {
			ds = append(ds, a-b)
		}
	}
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2], n
	}
	return (ds[n/2-1] + ds[n/2]) / 2, n
}

// durations are the values of m.
func durations(m map[string]time.Duration) []time.Duration {
	out := make([]time.Duration, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	return out
}

// changed counts the questions of keys whose ranking differs between two
// systems.
func changed[T comparable](a, b map[string][]T, keys map[string]bool) int {
	n := 0
	for k := range keys {
		if !slices.Equal(a[k], b[k]) {
			n++
		}
	}
	return n
}

// verdict names the effect of a mechanism on one half from its
// differences (on − off) in the headline metrics: + helps (nothing
// lower, something higher), − hurts, ± both, 0 no effect. The
// differences are read as the tables print them, to the thousandth of a
// share (a tenth of a point): what rounds to nothing is nothing.
func verdict(ds ...float64) string {
	up, down := false, false
	for _, d := range ds {
		if math.IsNaN(d) {
			continue
		}
		d = math.Round(d*1000) / 1000
		up = up || d > 0
		down = down || d < 0
	}
	switch {
	case up && down:
		return "±"
	case up:
		return "+"
	case down:
		return "−"
	}
	return "0"
}

func (r *report) ablationReport() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Retrieval ablation\n\n")
	w("Generated %s in %s by\n\n```\n%s\n```\n\n", r.started.UTC().Format("2006-01-02 15:04 MST"), r.total.Round(time.Second), r.cfg.command)
	w("Machine: %s.", machine())
	if v := gitVersion(); v != "" {
		w(" Engine: %s.", v)
	}
	w(" The data, the trees and the questions are those of [REPORT.md](REPORT.md), whose protocol applies.\n\n")
	w("Each row is Arbor with one mechanism switched off, against Arbor as it is, on the same trees and questions in the same run. A mechanism is switched off through `internal/ablation`, which `engine.Open` reads and which nothing outside this benchmark sets (so it changes nothing else); the lifecycle ordering is switched off through the lifecycle model instead (relevance weight 1, the others 0), as any host may set it. Arbor as it is curates its tree through `Engine.Curate`; a variant whose mechanism acts when entries are indexed curates its own, the others open a copy of Arbor's (the index reused). The control row opens such a copy with nothing off: it must rank exactly as Arbor does (the *changed* columns say whether it does), and its latency Δ is the noise floor of the others', plus what a copy spends at its first questions analysing what its entries say themselves, which Arbor's engine analysed as it indexed them ([latency.md](latency.md)). Each question is asked of every variant back to back, the variant asked first rotating from question to question, so that their latencies are paired under the same load.\n\n")
	w("**Δ is on − off**: what the mechanism adds; positive helps. LongMemEval-S differences are in percentage points of the scored questions, LoCoMo differences in turn recall. *Changed* counts the questions whose top %d differs. The latency Δ is the median over questions of the paired difference of `Query` wall time (first pass), on − off, where *on* is the control for a variant on a copy of Arbor's tree and Arbor for the others; the p50 of Arbor as it is gives the scale. The verdict of a half is + when no headline metric (LongMemEval-S Any@1, Any@5, All@5; LoCoMo Recall@10) is lower and one is higher, − for the reverse, ± for both, 0 for none.\n\n", topK)
	r.halvesNote(w)
	E, L := r.lme, r.locomo
	type lmeVals struct{ any1, any5, all5 float64 }
	lme := func(sys string, h half) lmeVals {
		o := E.halfScores(sys, h)[""]
		return lmeVals{o.Any1.value(), o.Any5.value(), o.All5.value()}
	}
	type locVals struct{ r5, r10, hit1 float64 }
	loc := func(sys string, h half) locVals {
		o := L.halfScores(sys, h)[0]
		return locVals{o.R5.value(), o.R10.value(), o.Hit1.value()}
	}
	var vs []variant
	if E != nil {
		vs = E.vs
	} else if L != nil {
		vs = L.vs
	}
	desc := map[string]mechanism{control.name: control}
	for _, m := range mechanisms {
		desc[m.name] = m
	}

	// Summary.
	w("## Summary\n\n| mechanism | what it does (on) | where | LongMemEval-S Δ Any@1 / Any@5 / All@5, tuning | validation | LoCoMo Δ R@10, tuning | validation | latency Δ (LongMemEval-S; LoCoMo) | verdict (tuning, validation) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, v := range vs[1:] {
		m := desc[v.mechanism]
		w("| %s | %s | %s |", m.name, cell(m.what), m.where)
		var dl [2][]float64
		for _, h := range halves {
			if E == nil {
				w(" — |")
				continue
			}
			on, off := lme(sysArbor, h), lme(v.name, h)
			d := []float64{on.any1 - off.any1, on.any5 - off.any5, on.all5 - off.all5}
			dl[h] = append(dl[h], d...)
			w(" %s / %s / %s |", pts(d[0]), pts(d[1]), pts(d[2]))
		}
		for _, h := range halves {
			if L == nil {
				w(" — |")
				continue
			}
			d := loc(sysArbor, h).r10 - loc(v.name, h).r10
			dl[h] = append(dl[h], d)
			w(" %s |", signed(d, "%.3f"))
		}
		var lat []string
		for _, arms := range []map[string]*arm{lmeArms(E), locomoArms(L)} {
			if arms == nil {
				continue
			}
			d, _ := pairedDelta(arms[latencyBase(vs, v)].took, arms[v.name].took)
			lat = append(lat, msDelta(d))
		}
		w(" %s | %s, %s |\n", strings.Join(lat, "; "), verdict(dl[tuning]...), verdict(dl[validation]...))
	}
	// The strongest baseline, as a row of the same shape: what Arbor as
	// a whole adds over it.
	w("| *Arbor over the strongest simple baseline* | every mechanism above, against the best simple peer of each metric and half | REPORT.md |")
	for _, h := range halves {
		if E == nil {
			w(" — |")
			continue
		}
		a := lme(sysArbor, h)
		bases := baselinesOf(E.rank)
		var parts []string
		for _, get := range []func(lmeVals) float64{
			func(v lmeVals) float64 { return v.any1 },
			func(v lmeVals) float64 { return v.any5 },
			func(v lmeVals) float64 { return v.all5 },
		} {
			s, bv := strongest(bases, func(sys string) float64 { return get(lme(sys, h)) })
			parts = append(parts, fmt.Sprintf("%s (%s)", pts(get(a)-bv), s))
		}
		w(" %s |", strings.Join(parts, " / "))
	}
	for _, h := range halves {
		if L == nil {
			w(" — |")
			continue
		}
		s, bv := strongest(baselinesOf(L.rank), func(sys string) float64 { return loc(sys, h).r10 })
		w(" %s (%s) |", signed(loc(sysArbor, h).r10-bv, "%.3f"), s)
	}
	var lat []string
	if E != nil {
		lat = append(lat, msDelta(Percentile(durations(E.arms[sysArbor].took), 50)-Percentile(E.peers[sysBM25].Lat, 50))+" (vs BM25)")
	}
	if L != nil {
		lat = append(lat, msDelta(Percentile(durations(L.arms[sysArbor].took), 50)-Percentile(L.peers[sysBM25].Lat, 50))+" (vs BM25)")
	}
	w(" %s | |\n\n", strings.Join(lat, "; "))

	if E != nil {
		w("## LongMemEval-S\n\nEach cell of a variant without a mechanism is its score and, in brackets, Δ = on − off.\n\n")
		w("| system | tuning Any@1 | tuning Any@5 | tuning All@5 | changed | validation Any@1 | validation Any@5 | validation All@5 | changed | latency p50 | Δ p50 (paired) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, v := range vs {
			w("| %s |", v.name)
			for _, h := range halves {
				on, off := lme(sysArbor, h), lme(v.name, h)
				if v.name == sysArbor {
					w(" %s | %s | %s | — |", pct(on.any1), pct(on.any5), pct(on.all5))
					continue
				}
				w(" %s (%s) | %s (%s) | %s (%s) | %d |", pct(off.any1), pts(on.any1-off.any1), pct(off.any5), pts(on.any5-off.any5), pct(off.all5), pts(on.all5-off.all5), changed(E.rank[sysArbor], E.rank[v.name], E.half(h)))
			}
			w("%s\n", latencyCells(E.arms, vs, v))
		}
		for _, s := range baselinesOf(E.rank) {
			w("| %s |", s)
			for _, h := range halves {
				o := lme(s, h)
				w(" %s | %s | %s | — |", pct(o.any1), pct(o.any5), pct(o.all5))
			}
			w("%s\n", peerLatencyCells(E.peers[s]))
		}
		w("\n")
	}
	if L != nil {
		w("## LoCoMo\n\nEach cell of a variant without a mechanism is its score and, in brackets, Δ = on − off.\n\n")
		w("| system | tuning R@5 | tuning R@10 | tuning Hit@1 | changed | validation R@5 | validation R@10 | validation Hit@1 | changed | latency p50 | Δ p50 (paired) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, v := range vs {
			w("| %s |", v.name)
			for _, h := range halves {
				on, off := loc(sysArbor, h), loc(v.name, h)
				if v.name == sysArbor {
					w(" %s | %s | %s | — |", f3(on.r5), f3(on.r10), pct(on.hit1))
					continue
				}
				w(" %s (%s) | %s (%s) | %s (%s) | %d |", f3(off.r5), signed(on.r5-off.r5, "%.3f"), f3(off.r10), signed(on.r10-off.r10, "%.3f"), pct(off.hit1), pts(on.hit1-off.hit1), changed(L.rank[sysArbor], L.rank[v.name], L.half(h)))
			}
			w("%s\n", latencyCells(L.arms, vs, v))
		}
		for _, s := range baselinesOf(L.rank) {
			w("| %s |", s)
			for _, h := range halves {
				o := loc(s, h)
				w(" %s | %s | %s | — |", f3(o.r5), f3(o.r10), pct(o.hit1))
			}
			w("%s\n", peerLatencyCells(L.peers[s]))
		}
		w("\n")
	}
	w("Not ablated: the analysis chain (stemming, stop words, accent folding, compounds, CJK), which every peer has some form of; BM25's idf and its live statistics, which are the textbook formula; context.md files ranked after entries, which changes no figure here (no context.md is ever gold, so any in the top %d costs a slot) but what users see; the direct-answer thresholds, which decide the tier, not the ranking; the pool of the %d best matches, which only holds what the rules rescore.\n", topK, 50)
	return b.String()
}

// latencyBase is the variant whose latency v's is compared with: the
// control for a variant on a copy of Arbor's tree (a tree opened from its
// stored index is not laid out in segments as the curated one is, which
// the control's own difference shows), Arbor for the others.
// latencyCells are a variant's latency p50 and its paired Δ against the
// run it is compared with ("—" for Arbor itself), as table cells.
func latencyCells(arms map[string]*arm, vs []variant, v variant) string {
	a := arms[v.name]
	p50 := ms(Percentile(durations(a.took), 50))
	if v.name == sysArbor {
		return fmt.Sprintf(" %s | — |", p50)
	}
	d, _ := pairedDelta(arms[latencyBase(vs, v)].took, a.took)
	return fmt.Sprintf(" %s | %s |", p50, msDelta(d))
}

// peerLatencyCells are a simple peer's latency p50 (none when it was not
// timed) and an empty Δ, as table cells.
func peerLatencyCells(t *buildTiming) string {
	if t == nil {
		return " — | — |"
	}
	return fmt.Sprintf(" %s | — |", ms(Percentile(t.Lat, 50)))
}

func latencyBase(vs []variant, v variant) string {
	if v.indexing || v.mechanism == control.name {
		return sysArbor
	}
	for _, c := range vs {
		if c.mechanism == control.name {
			return c.name
		}
	}
	return sysArbor
}

func lmeArms(E *lmeRun) map[string]*arm {
	if E == nil {
		return nil
	}
	return E.arms
}

func locomoArms(L *locomoRun) map[string]*arm {
	if L == nil {
		return nil
	}
	return L.arms
}
