package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"
)

type report struct {
	cfg          config
	started      time.Time
	total        time.Duration
	locomo       *locomoRun
	lme          *lmeRun
	locomoBytes  int64
	lmeBytes     int64
	node         string
	miniVersion  string
	miniSettings string
	notes        []string
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

func f3(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.3f", v)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Nanoseconds())/1e6) }

func machine() string {
	cpu := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					cpu = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	if cpu == "" {
		cpu = "unknown CPU"
	}
	return fmt.Sprintf("%s, %d logical CPUs, %s/%s, %s", cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// gitVersion names the commit the engine was built from, and says when
// the working tree's engine sources differ from it.
func gitVersion() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	v := "commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--", "core", "go.mod", "go.sum").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		v += " with uncommitted changes under core/"
	}
	return v
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// systems returns the systems present, in report order.
func systems[T any](rank map[string]T, order ...string) []string {
	var out []string
	for _, s := range order {
		if _, ok := rank[s]; ok {
			out = append(out, s)
		}
	}
	return out
}

func (r *report) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Retrieval benchmark\n\n")
	w("Generated %s in %s by\n\n```\n%s\n```\n\n", r.started.UTC().Format("2006-01-02 15:04 MST"), r.total.Round(time.Second), r.cfg.command)
	w("(`./build.sh bench` regenerates it with the default data files.) Machine: %s", machine())
	if r.node != "" {
		w(", Node %s", r.node)
	}
	w(".")
	if v := gitVersion(); v != "" {
		w(" Engine: %s.", v)
	}
	w("\n\n")
	if r.cfg.locomo != "" {
		w("- LoCoMo: `%s` (%.1f MB of JSON)\n", r.cfg.locomo, float64(r.locomoBytes)/1e6)
	}
	if r.cfg.lme != "" {
		w("- LongMemEval-S: `%s` (%.1f MB of JSON)", r.cfg.lme, float64(r.lmeBytes)/1e6)
		if r.cfg.lmeTurns > 0 {
			w(", one entry per %d turns", r.cfg.lmeTurns)
		}
		w("\n")
	}
	for _, n := range r.notes {
		w("- **Note:** %s\n", n)
	}
	w("\nNo embeddings, no LLM calls: every system ranks with keyword statistics only.\n\n")
	r.targets(w)
	if r.locomo != nil {
		r.locomoSection(w)
	}
	if r.lme != nil {
		r.lmeSection(w)
	}
	r.timing(w)
	r.diagnostics(w)
	r.examples(w)
	r.protocol(w)
	return b.String()
}

type writer func(format string, args ...any)

func (r *report) targets(w writer) {
	w("## Targets and measured figures\n\n")
	w("Targets and reference figures are those of issue 3 (the BM25 reference is over the full 500-question LongMemEval-S; this run scores the dev split).\n\n")
	w("| metric | target | plain BM25 (issue) | Arbor | BM25 (this run) | MiniSearch (this run) | met |\n|---|---|---|---|---|---|---|\n")
	if r.lme != nil {
		a := r.lme.score(r.lme.rank[sysArbor], nil)[""]
		bm := r.lme.score(r.lme.rank[sysBM25], nil)[""]
		mini := "not run"
		var ms *lmeScores
		if rk, ok := r.lme.rank[sysMini]; ok {
			ms = r.lme.score(rk, nil)[""]
		}
		row := func(name, target string, goal float64, ref string, get func(*lmeScores) float64) {
			if ms != nil {
				mini = pct(get(ms))
			}
			met := "no"
			if get(a) >= goal {
				met = "yes"
			}
			w("| LongMemEval-S %s | %s | %s | %s | %s | %s | %s |\n", name, target, ref, pct(get(a)), pct(get(bm)), mini, met)
		}
		row("Any@5", "≥ 99%", 0.99, "≈ 97% (MiniSearch ≈ 83%)", func(s *lmeScores) float64 { return s.Any5.value() })
		row("All@5", "≥ 92%", 0.92, "≈ 82%", func(s *lmeScores) float64 { return s.All5.value() })
		row("Any@1", "≥ 93%", 0.93, "≈ 88%", func(s *lmeScores) float64 { return s.Any1.value() })
	}
	if r.locomo != nil {
		a := r.locomo.score(r.locomo.rank[sysArbor], nil)[0]
		bm := r.locomo.score(r.locomo.rank[sysBM25], nil)[0]
		mini := "not run"
		if rk, ok := r.locomo.rank[sysMini]; ok {
			mini = f3(r.locomo.score(rk, nil)[0].R10.value())
		}
		met := "no"
		if a.R10.value() >= 0.80 {
			met = "yes"
		}
		w("| LoCoMo turn Recall@10 | ≥ 0.80 | ≈ 0.57 | %s | %s | %s | %s |\n", f3(a.R10.value()), f3(bm.R10.value()), mini, met)
	}
	w("\nBest published embedding-free LongMemEval-S figure (ContextFit, 470 scored questions): 96.8%% Any@5, 84.3%% All@5, 82.8%% Any@1.\n\n")
}

func (r *report) locomoSection(w writer) {
	L := r.locomo
	w("## LoCoMo\n\n")
	entries := 0
	for _, t := range L.turns {
		entries += len(t)
	}
	w("%d conversations, %d sessions, %d turns (one entry each). Questions: %d; left out: %d adversarial (category 5), %d without evidence, %d whose evidence was all unusable; **%d scored**.\n\n",
		len(L.convs), countSessions(L.convs), entries, L.ev.Questions, L.ev.Cat5, L.ev.NoEvidence, L.ev.Dropped, L.ev.Scored)
	sys := systems(L.rank, sysArbor, sysBM25, sysBM25Turns, sysMini)
	scores := map[string]map[int]*locomoScores{}
	for _, s := range sys {
		if s == sysWasm {
			continue
		}
		scores[s] = L.score(L.rank[s], nil)
	}
	w("| system | n | turn Recall@5 | turn Recall@10 | session Hit@1 |\n|---|---|---|---|---|\n")
	for _, s := range sys {
		o := scores[s][0]
		w("| %s | %d | %s | %s | %s |\n", s, o.N, f3(o.R5.value()), f3(o.R10.value()), pct(o.Hit1.value()))
	}
	for _, m := range []struct {
		name string
		get  func(*locomoScores) string
	}{
		{"Turn Recall@5", func(s *locomoScores) string { return f3(s.R5.value()) }},
		{"Turn Recall@10", func(s *locomoScores) string { return f3(s.R10.value()) }},
		{"Session Hit@1", func(s *locomoScores) string { return pct(s.Hit1.value()) }},
	} {
		w("\n%s by category:\n\n| category | n |", m.name)
		for _, s := range sys {
			w(" %s |", s)
		}
		w("\n|---|---|%s\n", strings.Repeat("---|", len(sys)))
		for _, cat := range []int{1, 2, 3, 4, 0} {
			name := "all"
			if cat != 0 {
				name = fmt.Sprintf("%d %s", cat, locomoCategories[cat])
			}
			base := scores[sysArbor][cat]
			if base == nil {
				continue
			}
			w("| %s | %d |", name, base.N)
			for _, s := range sys {
				if sc := scores[s][cat]; sc != nil {
					w(" %s |", m.get(sc))
				} else {
					w(" — |")
				}
			}
			w("\n")
		}
	}
	w("\n")
}

func countSessions(cs []*locomoConv) int {
	n := 0
	for _, c := range cs {
		n += len(c.Sessions)
	}
	return n
}

func (r *report) lmeSection(w writer) {
	E := r.lme
	abs := 0
	for _, q := range E.qs {
		if q.abstention() {
			abs++
		}
	}
	scored := E.score(E.rank[sysArbor], nil)[""].N
	w("## LongMemEval-S (dev split)\n\n")
	unit := "one entry per session"
	if E.turns > 0 {
		unit = fmt.Sprintf("one entry per %d turns, ranked sessions by their best entry", E.turns)
	}
	w("%d questions, one tree each (%d entries in all, %s); %d abstention questions left out", len(E.qs), E.build.Entries, unit, abs)
	if E.noGold > 0 {
		w(", %d with no gold session in the haystack", E.noGold)
	}
	w("; **%d scored**.\n\n", scored)
	sys := systems(E.rank, sysArbor, sysBM25, sysMini)
	scores := map[string]map[string]*lmeScores{}
	for _, s := range sys {
		scores[s] = E.score(E.rank[s], nil)
	}
	w("| system | n | Any@1 | Any@5 | All@5 | Any@10 | All@10 |\n|---|---|---|---|---|---|---|\n")
	for _, s := range sys {
		o := scores[s][""]
		w("| %s | %d | %s | %s | %s | %s | %s |\n", s, o.N, pct(o.Any1.value()), pct(o.Any5.value()), pct(o.All5.value()), pct(o.Any10.value()), pct(o.All10.value()))
	}
	var types []string
	for k := range scores[sysArbor] {
		if k != "" {
			types = append(types, k)
		}
	}
	sort.Strings(types)
	for _, m := range []struct {
		name string
		get  func(*lmeScores) float64
	}{
		{"Any@1", func(s *lmeScores) float64 { return s.Any1.value() }},
		{"Any@5", func(s *lmeScores) float64 { return s.Any5.value() }},
		{"All@5", func(s *lmeScores) float64 { return s.All5.value() }},
	} {
		w("\n%s by question type:\n\n| question type | n |", m.name)
		for _, s := range sys {
			w(" %s |", s)
		}
		w("\n|---|---|%s\n", strings.Repeat("---|", len(sys)))
		for _, t := range append(types, "") {
			name := t
			if t == "" {
				name = "all"
			}
			w("| %s | %d |", name, scores[sysArbor][t].N)
			for _, s := range sys {
				if sc := scores[s][t]; sc != nil {
					w(" %s |", pct(m.get(sc)))
				} else {
					w(" — |")
				}
			}
			w("\n")
		}
	}
	w("\n")
}

func (r *report) timing(w writer) {
	w("## Build rate and query latency\n\n")
	w("Build: opening an empty memory and curating every entry (one Curate call per session, ADD operations, markdown rendered and written to a memory file system, the index updated) — the user path. Source MB counts the text handed over (title, provenance, body); the peers index the same text.\n\n")
	w("| system | dataset | trees | entries | source MB | time | entries/s | MB/s |\n|---|---|---|---|---|---|---|---|\n")
	row := func(sys, ds string, b buildStats) {
		if b.Dur <= 0 {
			return
		}
		w("| %s | %s | %d | %d | %.1f | %s | %.0f | %.2f |\n", sys, ds, b.Trees, b.Entries, float64(b.SrcBytes)/1e6, b.Dur.Round(time.Millisecond), b.entriesPerSec(), b.mbPerSec())
	}
	if L := r.locomo; L != nil {
		row(sysArbor+" native", "LoCoMo", L.build)
		row(sysBM25+" (sessions)", "LoCoMo", buildStats{Trees: len(L.convs), Entries: L.bm25.Entries, SrcBytes: L.bm25.Bytes, Dur: L.bm25.Dur})
		if L.mini != nil {
			row(sysMini, "LoCoMo", L.mini.buildStats())
		}
		if L.wasm != nil {
			row(sysWasm+" (Node)", "LoCoMo subset", L.wasm.buildStats())
		}
	}
	if E := r.lme; E != nil {
		row(sysArbor+" native", "LongMemEval-S", E.build)
		row(sysBM25, "LongMemEval-S", buildStats{Trees: len(E.qs), Entries: E.bm25.Entries, SrcBytes: E.bm25.Bytes, Dur: E.bm25.Dur})
		if E.mini != nil {
			row(sysMini, "LongMemEval-S", E.mini.buildStats())
		}
		if E.wasm != nil {
			row(sysWasm+" (Node)", "LongMemEval-S subset", E.wasm.buildStats())
		}
	}
	if (r.locomo != nil && r.locomo.build.Failed > 0) || (r.lme != nil && r.lme.build.Failed > 0) {
		w("\n**Some curate operations failed**; see the run's stderr.\n")
	}
	w("\nQuery latency, measured around each call (Arbor: `Query` with limit %d; tier and tier name as the engine reports them). \"repeat\" asks every question a second time on the unchanged tree.\n\n", topK)
	w("| system | dataset | pass | tier | n | p50 | p95 |\n|---|---|---|---|---|---|---|\n")
	lat := func(sys, ds, pass string, l latencies) {
		for _, k := range l.keys() {
			w("| %s | %s | %s | %s | %d | %s | %s |\n", sys, ds, pass, k, len(l[k]), ms(Percentile(l[k], 50)), ms(Percentile(l[k], 95)))
		}
	}
	if L := r.locomo; L != nil {
		lat(sysArbor+" native", "LoCoMo", "first", L.lat)
		lat(sysArbor+" native", "LoCoMo", "repeat", L.lat0)
		lat(sysBM25+" (sessions, then turns)", "LoCoMo", "first", latencies{"—": L.bm25.Lat})
		if L.mini != nil {
			lat(sysMini, "LoCoMo", "first", toLatencies(L.mini.LatencyMs))
		}
		if L.wasm != nil {
			lat(sysWasm+" (Node)", "LoCoMo subset", "first", toLatencies(L.wasm.LatencyMs))
			lat(sysWasm+" (Node)", "LoCoMo subset", "repeat", toLatencies(L.wasm.RepeatLatencyMs))
		}
	}
	if E := r.lme; E != nil {
		lat(sysArbor+" native", "LongMemEval-S", "first", E.lat)
		lat(sysArbor+" native", "LongMemEval-S", "repeat", E.lat0)
		lat(sysBM25, "LongMemEval-S", "first", latencies{"—": E.bm25.Lat})
		if E.mini != nil {
			lat(sysMini, "LongMemEval-S", "first", toLatencies(E.mini.LatencyMs))
		}
		if E.wasm != nil {
			lat(sysWasm+" (Node)", "LongMemEval-S subset", "first", toLatencies(E.wasm.LatencyMs))
			lat(sysWasm+" (Node)", "LongMemEval-S subset", "repeat", toLatencies(E.wasm.RepeatLatencyMs))
		}
	}
	w("\n")
	if L := r.locomo; L != nil && L.wasm != nil {
		w("Wasm-in-Node vs native on the same subset: LoCoMo %d of %d rankings identical", L.agreed[0], L.agreed[1])
		if E := r.lme; E != nil && E.wasm != nil {
			w(", LongMemEval-S %d of %d", E.agreed[0], E.agreed[1])
		}
		w(" (the wasm run uses a fixed clock at question time, the native run curates each session at its own date; ranking does not depend on the clock yet).\n\n")
	}
}

// tierCounts counts answers by tier name.
func tierCounts(info map[string]queryInfo, keep func(string) bool) (map[string]int, int) {
	m := map[string]int{}
	n := 0
	for k, i := range info {
		if keep(k) {
			m[fmt.Sprintf("%d %s", i.Tier, i.TierName)]++
			n++
		}
	}
	return m, n
}

func fmtCounts(m map[string]int, n int) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s %d (%.0f%%)", k, m[k], 100*float64(m[k])/float64(max(n, 1))))
	}
	return strings.Join(parts, ", ")
}

func (r *report) diagnostics(w writer) {
	w("## Arbor diagnostics\n\n")
	w("| dataset | questions | tiers (first pass) | out-of-domain flagged | fewer than %d results | a context.md among the results |\n|---|---|---|---|---|---|\n", topK)
	line := func(ds string, info map[string]queryInfo, keep func(string) bool) {
		tc, n := tierCounts(info, keep)
		ood, fewer, ctx := 0, 0, 0
		for k, i := range info {
			if !keep(k) {
				continue
			}
			if i.OOD {
				ood++
			}
			if i.N < topK {
				fewer++
			}
			if i.Contexts > 0 {
				ctx++
			}
		}
		p := func(x int) string { return fmt.Sprintf("%d (%.1f%%)", x, 100*float64(x)/float64(max(n, 1))) }
		w("| %s | %d | %s | %s | %s | %s |\n", ds, n, fmtCounts(tc, n), p(ood), p(fewer), p(ctx))
	}
	if L := r.locomo; L != nil {
		scored, cat5 := map[string]bool{}, map[string]bool{}
		for _, q := range L.qs {
			if q.Scored {
				scored[q.Key] = true
			}
			if q.Category == 5 {
				cat5[q.Key] = true
			}
		}
		line("LoCoMo, scored", L.arbor, func(k string) bool { return scored[k] })
		line("LoCoMo, adversarial (cat. 5)", L.arbor, func(k string) bool { return cat5[k] })
	}
	if E := r.lme; E != nil {
		abs := map[string]bool{}
		for _, q := range E.qs {
			abs[q.ID] = q.abstention()
		}
		line("LongMemEval-S, scored", E.arbor, func(k string) bool { return !abs[k] })
		line("LongMemEval-S, abstention", E.arbor, func(k string) bool { return abs[k] })
	}
	w("\nOut-of-domain detection. On the scored questions every answer is in the tree, so the flag there is a false positive: its rate is the scored rows' share. For the hit rate the candidates are questions the tree cannot answer: LongMemEval-S abstention questions (`_abs`) ask about something the user never said (the gold answer is that it is unknown), which is what out-of-domain means; LoCoMo category 5 (adversarial) questions mostly swap the speaker (\"What did Melanie paint?\" when Caroline painted it), so their words are all in the tree and a keyword engine cannot, and should not, call them out of domain: their rate is shown as a second false-positive-like figure rather than as a hit rate. Fewer than %d results means fewer than %d entries match any term of the question.\n", topK, topK)
	r.directPrecision(w)
	w("\n")
	// Paired comparison.
	w("Paired comparison, per question (Arbor better / worse / same):\n\n")
	if L := r.locomo; L != nil {
		a := L.rank[sysArbor]
		for _, s := range systems(L.rank, sysBM25, sysBM25Turns, sysMini) {
			better, worse, same := 0, 0, 0
			for _, q := range L.qs {
				if !q.Scored {
					continue
				}
				x, y := RecallAtK(a[q.Key], q.Gold, 10), RecallAtK(L.rank[s][q.Key], q.Gold, 10)
				switch {
				case x > y:
					better++
				case x < y:
					worse++
				default:
					same++
				}
			}
			w("- LoCoMo turn Recall@10 vs %s: %d / %d / %d\n", s, better, worse, same)
		}
	}
	if E := r.lme; E != nil {
		a := E.rank[sysArbor]
		for _, s := range systems(E.rank, sysBM25, sysMini) {
			for _, k := range []int{1, 5} {
				better, worse, same := 0, 0, 0
				for _, q := range E.qs {
					if q.abstention() || len(q.gold()) == 0 {
						continue
					}
					x, y := AnyAtK(a[q.ID], q.gold(), k), AnyAtK(E.rank[s][q.ID], q.gold(), k)
					switch {
					case x && !y:
						better++
					case y && !x:
						worse++
					default:
						same++
					}
				}
				w("- LongMemEval-S Any@%d vs %s: %d / %d / %d\n", k, s, better, worse, same)
			}
		}
	}
	w("\n")
}

// directPrecision measures tier 2's direct answers: how often the one
// entry a direct answer presents is gold, against the share of the other
// (results-tier) answers whose first result is gold.
func (r *report) directPrecision(w writer) {
	w("\nDirect-answer precision: a direct answer presents the first result alone, so it should be gold more often than the first result of an answer left to the results tier.\n\n")
	w("| dataset | direct answers | first result gold | results-tier answers | first result gold |\n|---|---|---|---|---|\n")
	row := func(ds string, direct, dgood, other, ogood int) {
		p := func(x, n int) string { return fmt.Sprintf("%d (%.1f%%)", x, 100*float64(x)/float64(max(n, 1))) }
		w("| %s | %d | %s | %d | %s |\n", ds, direct, p(dgood, direct), other, p(ogood, other))
	}
	if L := r.locomo; L != nil {
		var d, dg, o, og int
		for _, q := range L.qs {
			if !q.Scored {
				continue
			}
			info, rk := L.arbor[q.Key], L.rank[sysArbor][q.Key]
			good := len(rk) > 0 && rankOf(rk[:1], q.Gold) == 1
			switch info.TierName {
			case "direct":
				d++
				if good {
					dg++
				}
			case "results":
				o++
				if good {
					og++
				}
			}
		}
		row("LoCoMo, scored (gold turn)", d, dg, o, og)
	}
	if E := r.lme; E != nil {
		var d, dg, o, og int
		for _, q := range E.qs {
			if q.abstention() || len(q.gold()) == 0 {
				continue
			}
			info, rk := E.arbor[q.ID], E.rank[sysArbor][q.ID]
			good := len(rk) > 0 && rankOf(rk[:1], q.gold()) == 1
			switch info.TierName {
			case "direct":
				d++
				if good {
					dg++
				}
			case "results":
				o++
				if good {
					og++
				}
			}
		}
		row("LongMemEval-S, scored (gold session)", d, dg, o, og)
	}
}

// rankOf is the 1-based rank of the first gold item, 0 when absent.
func rankOf[T comparable](ranked, gold []T) int {
	g := map[T]bool{}
	for _, x := range gold {
		g[x] = true
	}
	for i, x := range ranked {
		if g[x] {
			return i + 1
		}
	}
	return 0
}

func rankText(n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

func (r *report) examples(w writer) {
	if r.cfg.examples <= 0 {
		return
	}
	w("## Where Arbor loses\n\n")
	w("Questions a peer ranks better than Arbor (first gold rank per system; — is not in the top %d).\n\n", topK)
	if L := r.locomo; L != nil {
		type cand struct {
			q   locomoQ
			gap float64
		}
		var cs []cand
		a := L.rank[sysArbor]
		for _, q := range L.qs {
			if !q.Scored {
				continue
			}
			best := 0.0
			for _, s := range systems(L.rank, sysBM25Turns, sysMini) {
				best = math.Max(best, RecallAtK(L.rank[s][q.Key], q.Gold, 10))
			}
			if gap := best - RecallAtK(a[q.Key], q.Gold, 10); gap > 0 {
				cs = append(cs, cand{q, gap})
			}
		}
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].gap > cs[j].gap })
		// One per category first, then by gap.
		var pick []cand
		seen := map[int]bool{}
		for _, c := range cs {
			if !seen[c.q.Category] && len(pick) < r.cfg.examples {
				seen[c.q.Category] = true
				pick = append(pick, c)
			}
		}
		for _, c := range cs {
			if len(pick) >= r.cfg.examples {
				break
			}
			dup := false
			for _, p := range pick {
				dup = dup || p.q.Key == c.q.Key
			}
			if !dup {
				pick = append(pick, c)
			}
		}
		w("### LoCoMo (%d questions where a peer's turn Recall@10 is higher)\n\n", len(cs))
		for _, c := range pick {
			q := c.q
			info := L.arbor[q.Key]
			turns := L.turns[q.Conv]
			w("- **%s** (%s) “%s”\n", q.Key, locomoCategories[q.Category], q.Text)
			for _, g := range q.Gold {
				u := turns[g]
				w("  - gold %s %s: “%s”\n", g, u.Author, truncate(u.Body, 140))
			}
			w("  - first gold rank: Arbor %s, BM25 per turn %s, MiniSearch %s; Arbor returned %d results (%s)\n",
				rankText(rankOf(L.rank[sysArbor][q.Key], q.Gold)), rankText(rankOf(L.rank[sysBM25Turns][q.Key], q.Gold)), rankText(rankOf(L.rank[sysMini][q.Key], q.Gold)), info.N, info.TierName)
			for i, id := range L.rank[sysArbor][q.Key] {
				if i >= 2 {
					break
				}
				top := ""
				if i < len(info.Top) {
					top = info.Top[i]
				}
				if u, ok := turns[id]; ok {
					w("  - Arbor #%d %s %s: “%s”\n", i+1, top, u.Author, truncate(u.Body, 120))
				} else {
					w("  - Arbor #%d %s\n", i+1, top)
				}
			}
		}
		w("\n")
	}
	if E := r.lme; E != nil {
		var pick []*lmeQuestion
		n := 0
		for _, q := range E.qs {
			if q.abstention() || len(q.gold()) == 0 {
				continue
			}
			arbor := rankOf(E.rank[sysArbor][q.ID], q.gold())
			peer := 0
			for _, s := range systems(E.rank, sysBM25, sysMini) {
				if p := rankOf(E.rank[s][q.ID], q.gold()); p > 0 && (peer == 0 || p < peer) {
					peer = p
				}
			}
			if peer > 0 && (arbor == 0 || arbor > peer) {
				n++
				if len(pick) < r.cfg.examples {
					pick = append(pick, q)
				}
			}
		}
		w("### LongMemEval-S (%d questions where a peer ranks a gold session higher)\n\n", n)
		for _, q := range pick {
			info := E.arbor[q.ID]
			gold := q.gold()
			var gs []string
			for _, g := range gold {
				gs = append(gs, fmt.Sprintf("session_%02d (%s)", g+1, q.Dates[g]))
			}
			w("- **%s** (%s) “%s” — gold %s\n", q.ID, q.Type, q.Question, strings.Join(gs, ", "))
			w("  - first gold rank: Arbor %s, BM25 %s, MiniSearch %s; Arbor returned %d results (%s: %s)\n",
				rankText(rankOf(E.rank[sysArbor][q.ID], gold)), rankText(rankOf(E.rank[sysBM25][q.ID], gold)), rankText(rankOf(E.rank[sysMini][q.ID], gold)), info.N, info.TierName, cell(truncate(info.Reason, 160)))
			if len(info.Top) > 0 {
				w("  - Arbor's first: %s\n", strings.Join(info.Top, ", "))
			}
		}
		w("\n")
	}
}

func (r *report) protocol(w writer) {
	w("## Protocol\n\n")
	w(`- **Trees.** LoCoMo: one memory per conversation, one entry per turn at ` + "`<speaker_a>_and_<speaker_b>/session_NN/turn_NNN.md`" + `, title "<speaker> on <session date>", the turn's text (an image turn adds "[shares a photo: <caption>]") as the narrative, and provenance in the raw concept (task "Turn D<s>:<t> of session <s>", author the speaker, timestamp the session date). LongMemEval-S: one memory per question, one entry per session at ` + "`chats/YYYY_MM/session_NN.md`" + `, title "Chat on <date>", the messages as "**User:** …" / "**Assistant:** …"; session ids and ` + "`has_answer`" + ` never reach the engine, the harness alone maps paths back to them. Every entry is an ADD through ` + "`Engine.Curate`" + ` (one call per session, the engine clock at the session's date); questions go through ` + "`Engine.Query`" + ` with limit 10 (the clock at the question date). Observation, session and event summaries are not indexed.
- **LoCoMo metrics.** Categories 1–4 with evidence; turn Recall@K = share of a question's gold turns among the first K results, averaged over questions; session Hit@1 = the first result's session holds a gold turn. Evidence ids are cleaned: strings holding several ids are split, "D:11:26" and "D30:05" are read as D11:26 and D30:5, pieces that are not ids and ids of turns that do not exist are dropped, a question left with no gold is not scored.
- **LongMemEval-S metrics.** Questions not ending in ` + "`_abs`" + `; Any@K = some gold session among the first K sessions, All@K = every gold session among them.
- **Result slots.** Every result counts, as a user sees it: a context.md (or anything that is not a turn or session entry) occupies its slot and matches nothing.
- **BM25 peer.** bluge v0.2.2 untuned: default standard analyzer (Unicode word tokenizer, lower case; no stemming, no stop words), default BM25 (k1 1.2, b 0.75), one text field, match query (OR), each whole session one document ("speaker: text" lines). LoCoMo turn ranking from whole sessions: sessions in BM25 order, and within each session its turns by their own BM25 score (an index of single turns of the conversation; turns matching nothing last, in dialogue order); the first 10 of that list are the top 10, the first one's session gives Hit@1. "BM25 per turn" is the same untuned BM25 with one document per turn.
- **MiniSearch peer.** ` + "`bench/retrieval/minisearch.mjs`" + `, the same entries as Arbor's (title, path without .md, content = provenance + text), fields title/content/path, boost title 3 and path 1.5, fuzzy 0.2, prefix true, default OR combination; every result counted. (The ByteRover paper's Appendix B gives title 5×; the issue's settings are used here.) The harness rescores its rankings with the same Go metric code.
- **Wasm.** ` + "`bench/retrieval/arbor-wasm.mjs`" + `: ` + "`dist/arbor.wasm`" + ` through ` + "`bindings/js`" + ` (memory storage) on the first conversations and questions, the same operations and queries.
`)
	if L := r.locomo; L != nil {
		w("\nEvidence cleaning: %d gold strings in all, %d holding several ids (split), %d ids repaired, %d pieces dropped as malformed, %d ids dropped as naming no turn.\n",
			L.ev.Strings, L.ev.Split, L.ev.Fixed, len(L.ev.Malformed), len(L.ev.Missing))
		if len(L.ev.Malformed) > 0 {
			w("Malformed: %s.\n", strings.Join(L.ev.Malformed, ", "))
		}
		if len(L.ev.Missing) > 0 {
			w("Missing turns: %s.\n", strings.Join(L.ev.Missing, ", "))
		}
	}
	if r.miniSettings != "" {
		w("\nMiniSearch %s settings: `%s`.\n", r.miniVersion, r.miniSettings)
	}
}

// dump is every question with its rankings, for tuning work.
func (r *report) dump() map[string]any {
	out := map[string]any{}
	if L := r.locomo; L != nil {
		var qs []map[string]any
		for _, q := range L.qs {
			rk := map[string][]string{}
			for s, m := range L.rank {
				if v, ok := m[q.Key]; ok {
					ids := make([]string, len(v))
					for i, id := range v {
						if id != (TurnID{}) {
							ids[i] = id.String()
						}
					}
					rk[s] = ids
				}
			}
			gold := make([]string, len(q.Gold))
			for i, g := range q.Gold {
				gold[i] = g.String()
			}
			qs = append(qs, map[string]any{"key": q.Key, "question": q.Text, "category": q.Category, "scored": q.Scored, "gold": gold, "rankings": rk, "arbor": L.arbor[q.Key]})
		}
		out["locomo"] = qs
	}
	if E := r.lme; E != nil {
		var qs []map[string]any
		for _, q := range E.qs {
			rk := map[string][]int{}
			for s, m := range E.rank {
				if v, ok := m[q.ID]; ok {
					rk[s] = v
				}
			}
			qs = append(qs, map[string]any{"id": q.ID, "type": q.Type, "question": q.Question, "abstention": q.abstention(), "gold": q.gold(), "rankings": rk, "arbor": E.arbor[q.ID]})
		}
		out["longmemeval"] = qs
	}
	return out
}
