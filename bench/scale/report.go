package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// reportSizes are the sizes the tables always show, measured or not.
var reportSizes = []int{1000, 10000, 100000, 1000000}

// writeReport rewrites REPORT.md and its plots from the results: the
// tables, then notes.md (the analysis, written by hand) verbatim.
func writeReport(path string, res *results) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var sizes []*sizeResult
	for _, s := range res.Sizes {
		sizes = append(sizes, s)
	}
	slices.SortFunc(sizes, func(a, b *sizeResult) int { return a.Entries - b.Entries })
	// The sizes the issue asks for stay in the tables, as rows that say
	// they were not measured, until a run measures them.
	var missing []int
	for _, n := range reportSizes {
		if res.Sizes[fmt.Sprint(n)] == nil {
			missing = append(missing, n)
		}
	}
	notMeasured := func(b *strings.Builder, cells int) {
		for _, n := range missing {
			fmt.Fprintf(b, "| %s | not measured (see below)%s |\n", count(n), strings.Repeat(" |", cells-2))
		}
	}

	var b strings.Builder
	b.WriteString("# Scale: cost against the size of the memory\n\n")
	b.WriteString("Written by `go run ./bench/scale` (`./build.sh bench-scale`) from `results.json`; the analysis\n")
	b.WriteString("below the tables is `notes.md`. Trees: one conversation message per entry (LoCoMo turns, then the\n")
	b.WriteString("messages of every distinct LongMemEval-S session, then generated text), laid out\n")
	b.WriteString("domain/topic/subtopic/entry.md. Each host runs in its own process: build (open without a persisted\n")
	b.WriteString("index), persist (close), open with the persisted index, then the same questions. Every figure\n")
	b.WriteString("was measured in the run its row names; none is estimated.\n\n")

	b.WriteString("## Trees and runs\n\n| entries | real | generated | MiB | mean entry | date | load (1, 5, 15 min) | CPUs | questions | RSS floor |\n|---:|---:|---:|---:|---:|---|---|---:|---:|---:|\n")
	for _, s := range sizes {
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.0f B | %s | %s | %d | %d | %s |\n", count(s.Entries), count(s.Real), count(s.Generated), s.MiB,
			s.MiB*(1<<20)/float64(s.Entries), s.Run.Date, s.Run.Load, s.Run.CPUs, s.Run.Queries, mibText(s.Run.FloorMiB))
	}
	notMeasured(&b, 10)
	b.WriteString("\nRSS floor: the harness's own peak resident set; on Linux a child process's peak cannot read below it.\n\n")

	if res.Module.Bytes > 0 {
		fmt.Fprintf(&b, "Module: %.2f MiB, %.2f MiB gzip-compressed (gzip -9; %s).", mib(int64(res.Module.Bytes)), mib(int64(res.Module.GzipBytes)), res.Module.Date)
		if res.Floor != nil {
			fmt.Fprintf(&b, " CLI floor, `arbor query` on an empty memory, whole process: %s wall, %s CPU, peak RSS %.0f MiB (median of %d).",
				msText(res.Floor.WallMs), msText(res.Floor.CPUMs), res.Floor.PeakRSSMiB, res.Floor.Runs)
		}
		b.WriteString("\n\n")
	}

	b.WriteString("## Build, open and queries, per host\n\n")
	b.WriteString("Build: open without a persisted index, every entry read and indexed: wall time, and CPU time of the process (every thread) where it can be read; entries/s on each (CPU time is the steadier on a shared machine).\n")
	b.WriteString("Peak RSS: the largest single process's maximum resident set over the host's whole run (Chromium: the Node driver or a browser process it reaped). Linear: the module's\n")
	b.WriteString("memory after the build, its peak until then. Open: wall time, and CPU time where it can be read. Query p50/p95: wall time of each question on the reopened memory; query CPU: the processor time of all of them, per question.\n")
	b.WriteString("Same ranking: questions whose result paths equal native's. \"native's index\": the host opened the index the native host had just built and persisted (`-reuse-index`) instead of building its own; its linear memory is the peak of that open.\n")
	b.WriteString("A host named with a date was not measured in its size's run: its figures are those of the earlier run of that date (`-keep-hosts`).\n\n")
	b.WriteString("| entries | host | build | build CPU | entries/s | per CPU s | persist | open | open CPU | query p50 | query p95 | query CPU | peak RSS | linear | same ranking |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range sizes {
		for _, h := range allHosts {
			r, ok := s.Hosts[h]
			if !ok {
				continue
			}
			if r.Error != "" {
				fmt.Fprintf(&b, "| %s | %s | failed: %s ||||||||||||| |\n", count(s.Entries), h, oneLine(r.Error))
				continue
			}
			same := "—"
			if r.Differ != nil {
				same = fmt.Sprintf("%d of %d", s.Run.Queries-*r.Differ, s.Run.Queries)
			}
			persist, open, openCPU := msText(r.PersistMs), msText(r.OpenMs), msText(r.OpenCPUMs)
			rss := mibText(r.PeakRSSMiB)
			if h == "minisearch" {
				persist, open, openCPU = "—", "—", "—"
				rss += fmt.Sprintf(" (heap %.0f MiB)", r.HeapMiB)
			}
			build, buildCPU, rate, perCPU := msText(r.BuildMs), msText(r.BuildCPUMs), fmt.Sprintf("%.0f", float64(s.Entries)/(r.BuildMs/1000)), "—"
			if r.BuildCPUMs > 0 {
				perCPU = fmt.Sprintf("%.0f", float64(s.Entries)/(r.BuildCPUMs/1000))
			}
			if r.ReusedIndex {
				build, buildCPU, rate, perCPU, persist = "native's index", "—", "—", "—", "—"
			}
			name := h
			if r.From != "" {
				name = fmt.Sprintf("%s (run of %s)", h, r.From)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", count(s.Entries), name, build, buildCPU,
				rate, perCPU, persist, open, openCPU, msText(r.QueryP50), msText(r.QueryP95), msText(r.QueryCPUMs), rss, mibText(r.LinearMiB), same)
		}
	}
	notMeasured(&b, 15)
	b.WriteString("\n## Whole process: `arbor query` on the persisted tree\n\n")
	b.WriteString("`bin/arbor --root TREE query QUESTION`: a new process each time (wasm under wazero, compilation cache warm), after one warm-up run;\n")
	b.WriteString("each run a different question. Median wall and CPU (user + system); the largest peak RSS. Beside it, in the same run, the\n")
	b.WriteString("stat walk alone: a Go process that lists every folder of the tree and describes every file as the Go host does for an\n")
	b.WriteString("open (`arborhost.RootFS.Walk`), and nothing else, timed the same way: the floor of any open that looks at every file.\n\n")
	b.WriteString("| entries | wall | CPU | peak RSS | runs | stat walk alone: wall | CPU | query / walk, CPU |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sizes {
		if s.CLI == nil {
			continue
		}
		walkWall, walkCPU, ratio := "—", "—", "—"
		if w := s.Walk; w != nil {
			walkWall, walkCPU = msText(w.WallMs), msText(w.CPUMs)
			if w.CPUMs > 0 {
				ratio = fmt.Sprintf("%.1f×", s.CLI.CPUMs/w.CPUMs)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f MiB | %d | %s | %s | %s |\n", count(s.Entries), msText(s.CLI.WallMs), msText(s.CLI.CPUMs), s.CLI.PeakRSSMiB, s.CLI.Runs,
			walkWall, walkCPU, ratio)
	}
	notMeasured(&b, 8)
	b.WriteString("\n## Plots\n\n")
	plots := []struct {
		file, title, unit string
		value             func(*sizeResult, string) float64
		hosts             []string
	}{
		{"build.svg", "Cold build (wall)", "ms", func(s *sizeResult, h string) float64 {
			return hostValue(s, h, func(r *hostResult) float64 { return built(r, r.BuildMs) })
		}, allHosts},
		{"query_p95.svg", "Query p95 (wall)", "ms", func(s *sizeResult, h string) float64 {
			return hostValue(s, h, func(r *hostResult) float64 { return r.QueryP95 })
		}, allHosts},
		{"memory.svg", "Peak memory (RSS: whole run; linear: after the build)", "MiB", func(s *sizeResult, h string) float64 {
			name, kind, _ := strings.Cut(h, " ")
			if kind == "linear" {
				return hostValue(s, name, func(r *hostResult) float64 { return r.LinearMiB })
			}
			return hostValue(s, name, func(r *hostResult) float64 { return r.PeakRSSMiB })
		}, []string{"native RSS", "wazero RSS", "wazero linear", "node RSS", "node linear", "chromium linear", "minisearch RSS"}},
		{"cli_query.svg", "Whole-process arbor query (wall)", "ms", func(s *sizeResult, _ string) float64 {
			if s.CLI == nil {
				return 0
			}
			return s.CLI.WallMs
		}, []string{"arbor query"}},
	}
	// The targets, drawn dashed where they apply.
	targets := map[string]map[string][][2]float64{
		"query_p95.svg": {"target, native": {{1e6, 50}}, "target, wasm": {{1e6, 150}}},
		"cli_query.svg": {"target": {{1e4, 150}, {1e5, 300}, {1e6, 1000}}},
	}
	for _, p := range plots {
		series := map[string][][2]float64{}
		for name, pts := range targets[p.file] {
			series[name] = pts
			p.hosts = append(p.hosts, name)
		}
		slices.Sort(p.hosts[len(p.hosts)-len(targets[p.file]):])
		for _, h := range p.hosts {
			if strings.HasPrefix(h, "target") {
				continue
			}
			for _, s := range sizes {
				if v := p.value(s, h); v > 0 {
					series[h] = append(series[h], [2]float64{float64(s.Entries), v})
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, p.file), []byte(svgPlot(p.title, p.unit, p.hosts, series)), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&b, "![%s](%s)\n\n", p.title, p.file)
	}
	targetTable(&b, res)
	notes, err := os.ReadFile(filepath.Join(dir, "notes.md"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	b.Write(notes)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// built is v, a figure of r's build, or 0 when r built nothing (it opened
// the native host's index).
func built(r *hostResult, v float64) float64 {
	if r.ReusedIndex {
		return 0
	}
	return v
}

func hostValue(s *sizeResult, h string, f func(*hostResult) float64) float64 {
	if r, ok := s.Hosts[h]; ok && r.Error == "" {
		return f(r)
	}
	return 0
}

// oneLine is a host's error for a table cell: Node's report of an uncaught
// exception (its source line, caret, stack and version) left out.
func oneLine(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "^" || t == "}" || strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "triggerUncaughtException") ||
			strings.HasPrefix(t, "Node.js v") || strings.HasPrefix(t, "log:") {
			continue
		}
		keep = append(keep, strings.TrimSuffix(t, " node:internal/modules/run_main:123"))
	}
	s = strings.Join(strings.Fields(strings.Join(keep, " ")), " ")
	s = strings.Replace(s, "exit status 1: node:internal/modules/run_main:123 ", "exit status 1: ", 1)
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func msText(v float64) string {
	switch {
	case v <= 0:
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

func mibText(v float64) string {
	if v <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", v)
}

// svgPlot is a log-log line chart of each series (x: entries), by hand:
// the report needs a few lines, not a plotting library.
func svgPlot(title, unit string, names []string, series map[string][][2]float64) string {
	const w, h, left, right, top, bottom = 640.0, 400.0, 70.0, 170.0, 40.0, 50.0
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pts := range series {
		for _, p := range pts {
			xmin, xmax = math.Min(xmin, p[0]), math.Max(xmax, p[0])
			ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[1])
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", left, title)
	if math.IsInf(xmin, 0) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">nothing measured yet</text></svg>`+"\n", left, h/2)
		return b.String()
	}
	// Whole decades around the data.
	x0, x1 := math.Floor(math.Log10(xmin)), math.Ceil(math.Log10(xmax))
	y0, y1 := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
	if x1 == x0 {
		x1++
	}
	if y1 == y0 {
		y1++
	}
	px := func(x float64) float64 { return left + (math.Log10(x)-x0)/(x1-x0)*(w-left-right) }
	py := func(y float64) float64 { return h - bottom - (math.Log10(y)-y0)/(y1-y0)*(h-top-bottom) }
	for d := x0; d <= x1; d++ {
		x := px(math.Pow(10, d))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n",
			x, top, x, h-bottom, x, h-bottom+18, count(int(math.Pow(10, d))))
	}
	for d := y0; d <= y1; d++ {
		y := py(math.Pow(10, d))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, y, w-right, y, left-6, y+4, axisLabel(math.Pow(10, d)))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">entries (log)</text>`+"\n", (left+w-right)/2, h-12)
	fmt.Fprintf(&b, `<text transform="translate(16 %.0f) rotate(-90)" text-anchor="middle">%s (log)</text>`+"\n", (top+h-bottom)/2, unit)
	k := 0
	for i, name := range names {
		pts := series[name]
		if len(pts) == 0 {
			continue
		}
		c, dash := colors[i%len(colors)], ""
		if strings.HasPrefix(name, "target") {
			c, dash = "#888", ` stroke-dasharray="6 4"`
		}
		var line []string
		for _, p := range pts {
			line = append(line, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(p[0]), py(p[1]), c)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(line, " "), c, dash)
		ly := top + 10 + float64(k)*18
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			w-right+10, ly, w-right+30, ly, c, dash, w-right+36, ly+4, name)
		k++
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// targetTable compares the results with issue 16's targets. Times are
// judged on CPU time, which the machine's load does not inflate; a target
// at a size not measured says so.
func targetTable(b *strings.Builder, res *results) {
	size := func(n int) *sizeResult { return res.Sizes[fmt.Sprint(n)] }
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	b.WriteString("## Against the targets of issue 16\n\nJudged on CPU time where a time is the target (the load inflates wall time); a target at a size that was not\nmeasured is not judged.\n\n")
	b.WriteString("| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range []struct {
		n     int
		limit float64
	}{{10000, 150}, {100000, 300}, {1000000, 1000}} {
		s := size(t.n)
		if s == nil || s.CLI == nil {
			fmt.Fprintf(b, "| warm `arbor query`, whole process, ≤ %s at %s | not measured | — |\n", msText(t.limit), count(t.n))
			continue
		}
		walk := ""
		if w := s.Walk; w != nil {
			walk = fmt.Sprintf("; the stat walk alone %s CPU (%.1f× the target)", msText(w.CPUMs), w.CPUMs/t.limit)
		}
		fmt.Fprintf(b, "| warm `arbor query`, whole process, ≤ %s at %s | %s CPU, %s wall, %.0f MiB%s | %s (%.1f×) |\n", msText(t.limit), count(t.n),
			msText(s.CLI.CPUMs), msText(s.CLI.WallMs), s.CLI.PeakRSSMiB, walk, verdict(s.CLI.CPUMs <= t.limit), s.CLI.CPUMs/t.limit)
	}
	var sizes []*sizeResult
	for _, s := range res.Sizes {
		sizes = append(sizes, s)
	}
	slices.SortFunc(sizes, func(a, b *sizeResult) int { return a.Entries - b.Entries })
	// each lists a figure at every measured size.
	each := func(f func(s *sizeResult) string) string {
		var parts []string
		for _, s := range sizes {
			if v := f(s); v != "" {
				parts = append(parts, count(s.Entries)+": "+v)
			}
		}
		if len(parts) == 0 {
			return "not measured"
		}
		return strings.Join(parts, "; ")
	}
	host := func(s *sizeResult, h string) *hostResult {
		if r := s.Hosts[h]; r != nil && r.Error == "" {
			return r
		}
		return nil
	}
	m := size(1000000)
	p95 := "not measured at 1,000,000"
	if m != nil {
		p95 = ""
	}
	fmt.Fprintf(b, "| query p95 ≤ 50 ms native, ≤ 150 ms wasm, at 1,000,000 | %s (wall: %s) | %s |\n", p95, each(func(s *sizeResult) string {
		var parts []string
		for _, h := range []string{"native", "wazero", "node", "chromium"} {
			if r := host(s, h); r != nil {
				parts = append(parts, h+" "+msText(r.QueryP95))
			}
		}
		return strings.Join(parts, ", ")
	}), judged(m, func() bool {
		n, w := host(m, "native"), host(m, "wazero")
		return n != nil && w != nil && n.QueryP95 <= 50 && w.QueryP95 <= 150
	}))
	ratio := func(h string, f func(*hostResult) float64) func(s *sizeResult) string {
		return func(s *sizeResult) string {
			n, r := host(s, "native"), host(s, h)
			if n == nil || r == nil || f(n) <= 0 || f(r) <= 0 {
				return ""
			}
			return fmt.Sprintf("%.1f×", f(r)/f(n))
		}
	}
	qcpu := func(r *hostResult) float64 { return r.QueryCPUMs }
	bcpu := func(r *hostResult) float64 { return built(r, r.BuildCPUMs) }
	worst := 0.0
	for _, s := range sizes {
		for _, h := range []string{"wazero", "node"} {
			for _, f := range []func(*hostResult) float64{qcpu, bcpu} {
				if n, r := host(s, "native"), host(s, h); n != nil && r != nil && f(n) > 0 {
					worst = math.Max(worst, f(r)/f(n))
				}
			}
		}
	}
	ratios := "not measured"
	if worst > 0 {
		ratios = verdict(worst <= 3)
	}
	fmt.Fprintf(b, "| wasm / native ≤ 3× (CPU) | per query, wazero: %s; Node: %s. Build, wazero: %s; Node: %s | %s |\n",
		each(ratio("wazero", qcpu)), each(ratio("node", qcpu)), each(ratio("wazero", bcpu)), each(ratio("node", bcpu)), ratios)
	fmt.Fprintf(b, "| 1,000,000-entry cold build with bounded memory | peak RSS native, linear memory wazero: %s | %s |\n", each(func(s *sizeResult) string {
		n, w := host(s, "native"), host(s, "wazero")
		if n == nil || w == nil {
			return ""
		}
		if w.ReusedIndex {
			return fmt.Sprintf("%.1f MiB of text, %s, wazero not built (it opened native's index in %s)", s.MiB, mibText(n.PeakRSSMiB), mibText(w.LinearMiB))
		}
		return fmt.Sprintf("%.1f MiB of text, %s, %s", s.MiB, mibText(n.PeakRSSMiB), mibText(w.LinearMiB))
	}), func() string {
		if m != nil && host(m, "wazero") != nil && host(m, "wazero").ReusedIndex {
			// A wasm cold build of 1M outlasts a run; one made on its
			// own (a capped run) is in the notes, not in results.json.
			return "not judged in this run: no wasm build at 1,000,000 (the notes below have one made on its own)"
		}
		return judged(m, func() bool { return host(m, "native") != nil && host(m, "wazero") != nil })
	}())
	fmt.Fprintf(b, "| build ≥ 1,000 entries/s native on 10 KB entries | per CPU-second natively: %s | not judged: these entries are chat messages, not 10 KB |\n", each(func(s *sizeResult) string {
		if n := host(s, "native"); n != nil && n.BuildCPUMs > 0 {
			return fmt.Sprintf("%.0f (mean entry %.0f B)", float64(s.Entries)/(n.BuildCPUMs/1000), s.MiB*(1<<20)/float64(s.Entries))
		}
		return ""
	}))
	if f := res.Floor; f != nil {
		fmt.Fprintf(b, "| CLI floor ≤ 50 ms | `arbor query` on an empty memory: %s CPU, %s wall, %.0f MiB | %s (%.1f×) |\n", msText(f.CPUMs), msText(f.WallMs), f.PeakRSSMiB, verdict(f.CPUMs <= 50), f.CPUMs/50)
	}
	if res.Module.Bytes > 0 {
		fmt.Fprintf(b, "| module ≤ 2 MB gzip | %.2f MB with gzip -9 (%.2f MB raw) | %s |\n", float64(res.Module.GzipBytes)/1e6, float64(res.Module.Bytes)/1e6, verdict(res.Module.GzipBytes <= 2e6))
	}
	b.WriteString("\n")
}

// judged is the verdict of a 1M target: ok() when the size was measured.
func judged(s *sizeResult, ok func() bool) string {
	if s == nil {
		return "not judged"
	}
	if ok() {
		return "met"
	}
	return "missed"
}

// axisLabel is a power of ten as a reader writes it: 0.1, 10, 1,000,000.
func axisLabel(v float64) string {
	if v >= 1 {
		return count(int(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
