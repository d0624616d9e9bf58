package main

import (
	"fmt"
	"slices"
)

// The report's account of tier 2's two verdicts besides the ranked
// results: out of domain (offtopic.go) and the direct answer.

// oodSection writes the confusion table of out-of-domain detection.
func (r *report) oodSection(w writer) {
	w("\n### Out-of-domain detection: answerable kept, off-topic flagged\n\n")
	w("Answerable questions are the scored questions, each asked of its own tree: keeping them (no out-of-domain flag) is right. Off-topic questions are asked of a tree they were not written for (`bench/retrieval/offtopic.go`): LongMemEval-S questions of every LoCoMo conversation, LoCoMo questions of the LongMemEval-S haystacks (each asked of one haystack, in rotation), and %d questions written by hand for this harness, short as agents ask them, about an agent's project work and general knowledge (each of every conversation and of a fifth of the haystacks). An off-topic question is left out when one entry of the tree holds all of its words (as the textbook BM25 peer analyzes them): it may be answerable there, and a keyword engine cannot tell it from an answerable question. *Small trees* are the hard case: each question asked of a tree of its gold sessions and %d other sessions of its haystack or conversation (a handful of sessions, as an agent's memory holds early on, where scores are low and idf small; LoCoMo's short questions over a few short sessions are the shape of ContextFit's agent-memory cases), with, as off-topic, for LongMemEval-S the next three LongMemEval-S questions, LoCoMo questions and hand-written ones, for LoCoMo LongMemEval-S questions and hand-written ones, in rotation. Every off-topic question belongs to the half of its own id.\n\n", len(generalOffTopic), smallDistractors)
	w("| trees | half | answerable kept | answerable flagged | off-topic flagged | off-topic kept | answerable kept %% | off-topic flagged %% |\n|---|---|---|---|---|---|---|---|\n")
	var notes []string
	if L := r.locomo; L != nil {
		ans := map[string]bool{}
		for _, q := range L.qs {
			if q.Scored {
				ans[q.Key] = true
			}
		}
		oodTable(w, "LoCoMo", ans, func(id string) bool { return L.arbor[id].OOD }, L.off)
		oodTable(w, "LoCoMo, small trees", ans, func(id string) bool { return L.small[id].OOD }, L.smallOff)
		notes = append(notes, oodSources("LoCoMo", L.off), oodSources("LoCoMo, small trees", L.smallOff))
	}
	if E := r.lme; E != nil {
		ans := E.half(tuning)
		for id := range E.half(validation) {
			ans[id] = true
		}
		oodTable(w, "LongMemEval-S", ans, func(id string) bool { return E.arbor[id].OOD }, E.off)
		oodTable(w, "LongMemEval-S, small trees", ans, func(id string) bool { return E.small[id].OOD }, E.smallOff)
		notes = append(notes, oodSources("LongMemEval-S", E.off), oodSources("LongMemEval-S, small trees", E.smallOff))
	}
	w("\nOff-topic questions by source (tried, left out by the word filter, flagged of those asked):\n\n")
	for _, n := range notes {
		w("- %s\n", n)
	}
}

// directSection writes tier 2's direct-answer precision and coverage, by
// half, beside the strongest simple baseline's first result on the same
// questions.
func (r *report) directSection(w writer) {
	w("\n### Direct answers: precision and coverage\n\n")
	w("A direct answer (tier 2 `direct`) presents its first result alone as the answer. *Precision* is the share of direct answers whose first result is gold (a gold turn for LoCoMo, a gold session for LongMemEval-S); *coverage* is the share of the scored questions answered directly. The strongest simple baseline is, on the same questions, the peer whose first result is gold most often (on small trees the textbook BM25, the only peer run there). An answer that is not direct still returns the same ranked results, so a lower coverage costs nothing in recall: it only says that the first result should not be taken alone.\n\n")
	w("| trees | half | scored | direct (coverage) | direct precision | strongest baseline, same questions | Arbor first result gold, all scored | strongest baseline, all scored |\n|---|---|---|---|---|---|---|---|\n")
	type q struct {
		id   string
		tier string
		gold func(sys string) bool
	}
	rows := func(ds string, qs []q, syss []string) {
		for _, h := range halves {
			var n, d, dg, ag int
			bd, ba := map[string]int{}, map[string]int{}
			for _, x := range qs {
				if halfOf(x.id) != h {
					continue
				}
				n++
				if x.gold(sysArbor) {
					ag++
				}
				direct := x.tier == "direct"
				if direct {
					d++
					if x.gold(sysArbor) {
						dg++
					}
				}
				for _, s := range syss {
					if x.gold(s) {
						ba[s]++
						if direct {
							bd[s]++
						}
					}
				}
			}
			best := func(m map[string]int, of int) string {
				if len(syss) == 0 || of == 0 {
					return "—"
				}
				s, _ := strongest(syss, func(s string) float64 { return float64(m[s]) })
				return fmt.Sprintf("%s: %d (%s)", s, m[s], pct(float64(m[s])/float64(of)))
			}
			w("| %s | %s | %d | %d (%s) | %d (%s) | %s | %d (%s) | %s |\n", ds, h, n, d, pct(float64(d)/float64(max(n, 1))), dg, pct(float64(dg)/float64(max(d, 1))), best(bd, d), ag, pct(float64(ag)/float64(max(n, 1))), best(ba, n))
		}
	}
	if L := r.locomo; L != nil {
		var qs []q
		for _, x := range L.qs {
			if x.Scored {
				qs = append(qs, q{x.Key, L.arbor[x.Key].TierName, func(sys string) bool {
					rk := L.rank[sys][x.Key]
					return len(rk) > 0 && rankOf(rk[:1], x.Gold) == 1
				}})
			}
		}
		rows("LoCoMo (gold turn)", qs, baselinesOf(L.rank))
		var small []q
		for _, x := range L.qs {
			if rk, ok := L.smallRank[x.Key]; ok {
				small = append(small, q{x.Key, L.small[x.Key].TierName, func(sys string) bool {
					return sys == sysArbor && len(rk) > 0 && rankOf(rk[:1], x.Gold) == 1
				}})
			}
		}
		rows("LoCoMo, small trees (gold turn)", small, nil)
		var sessions []q
		for _, x := range L.qs {
			if _, ok := L.smallRank[x.Key]; ok {
				sessions = append(sessions, q{x.Key, L.small[x.Key].TierName, func(sys string) bool { return L.inGoldSession(sys, x) }})
			}
		}
		rows("LoCoMo, small trees (gold session)", sessions, []string{sysBM25})
	}
	if E := r.lme; E != nil {
		var qs, small []q
		for _, x := range E.qs {
			if x.Abstention() || len(x.Gold()) == 0 {
				continue
			}
			qs = append(qs, q{x.ID, E.arbor[x.ID].TierName, func(sys string) bool {
				rk := E.rank[sys][x.ID]
				return len(rk) > 0 && rankOf(rk[:1], x.Gold()) == 1
			}})
			if sq := E.smallQs[x.ID]; sq != nil {
				small = append(small, q{x.ID, E.small[x.ID].TierName, func(sys string) bool {
					rk := E.smallRank[sys][x.ID]
					return len(rk) > 0 && rankOf(rk[:1], sq.Gold()) == 1
				}})
			}
		}
		rows("LongMemEval-S (gold session)", qs, baselinesOf(E.rank))
		rows("LongMemEval-S, small trees (gold session)", small, []string{sysBM25})
	}
}

// inGoldSession reports whether the first result sys gave for x on x's
// small tree is a turn of a session holding x's evidence (ContextFit's
// agent-memory R@1, which counts sessions).
func (L *locomoRun) inGoldSession(sys string, x locomoQ) bool {
	top := L.smallTop[sys][x.Key]
	return top != 0 && slices.ContainsFunc(x.Gold, func(g TurnID) bool { return g.Session == top })
}
