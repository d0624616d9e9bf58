// Command wasm measures what running the engine as WebAssembly costs. It
// replays one request script (workload.mjs: the README demo tree and a few
// LongMemEval-S haystacks, built, queried, closed and reopened) natively
// through core/engine, as dist/arbor.wasm under wazero (host/runtime) and
// as the same module in Node (bindings/js, replay.mjs), checks that the
// three give the same responses, and prints the time of each phase with its
// ratio to native in the same run as a markdown report.
//
//	go run ./bench/wasm -longmemeval bench/data/longmemeval_s.json.gz > bench/wasm/REPORT.md
//
// bench/data/fetch.sh downloads the LongMemEval-S file (bench/README.md).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
	hostrt "github.com/arbormem/arbor/host/runtime"
)

func main() {
	lme := flag.String("longmemeval", "", "LongMemEval-S data, .json or .json.gz (bench/data/fetch.sh puts it at bench/data/longmemeval_s.json.gz); empty runs the demo tree only")
	trees := flag.Int("trees", 3, "LongMemEval haystacks to build")
	queries := flag.Int("queries", 10, "questions per haystack, after the build and again after reopening")
	wasm := flag.String("wasm", "dist/arbor.wasm", "the module under test")
	node := flag.String("node", "node", "the Node.js binary; empty skips the Node run")
	runs := flag.Int("runs", 3, "replays of the whole script per host (each phase reports the median replay)")
	flag.Parse()
	if err := run(*lme, *trees, *queries, *wasm, *node, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/wasm:", err)
		os.Exit(1)
	}
}

// script is what workload.mjs prints.
type script struct {
	Trees []struct {
		Group string `json:"group"`
		Name  string `json:"name"`
		Seed  string `json:"seed"`
		Steps []step `json:"steps"`
	} `json:"trees"`
}

type step struct {
	Phase   string          `json:"phase"`
	Request json.RawMessage `json:"request"`
	Restart bool            `json:"restart"`
}

// replay is one host's run of the whole script: per tree, the start time of
// each instance and each step's time and response (nil for restarts).
type replay struct {
	Trees []treeResult `json:"trees"`
	// CPU is the processor time of the whole replay (user and system, every
	// thread): with one core busy elsewhere a wall time says little, and
	// native runs bluge's merges on a second core.
	CPU float64 `json:"-"`
}

type treeResult struct {
	Starts []timing      `json:"starts"`
	Steps  []*stepResult `json:"steps"`
}

type stepResult struct {
	timing
	Response string `json:"response"`
}

// timing is one step's wall time and the processor time of the thread that
// ran it, in milliseconds. On a shared machine the processor time is the
// steadier figure; for the wasm hosts, which run the module on the calling
// thread, it is all the work the step did (bluge's background goroutines
// included), while native runs those on other threads.
type timing struct {
	Wall float64 `json:"ms"`
	CPU  float64 `json:"cpuMs"`
}

// measure runs f on a locked thread and times it.
func measure(f func() error) (timing, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t, c := time.Now(), threadCPU()
	err := f()
	return timing{Wall: ms(time.Since(t)), CPU: ms(threadCPU() - c)}, err
}

// host runs the engine one way: start gives a fresh instance over a memory
// root folder.
type host struct {
	name  string
	start func(dir string) (instance, error)
}

type instance interface {
	call(req []byte) ([]byte, error)
	stop() error
}

type nativeInstance struct{ s *engine.Session }

func (n nativeInstance) call(req []byte) ([]byte, error) { return n.s.Call(req), nil }
func (n nativeInstance) stop() error                     { return nil }

type wazeroInstance struct{ e *hostrt.Engine }

func (w wazeroInstance) call(req []byte) ([]byte, error) {
	return w.e.Call(context.Background(), req)
}
func (w wazeroInstance) stop() error { return w.e.Close(context.Background()) }

func run(lme string, trees, queries int, wasmPath, node string, runs int) error {
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return fmt.Errorf("%w (build it with ./build.sh wasm)", err)
	}
	genArgs := []string{"bench/wasm/workload.mjs", "--trees", fmt.Sprint(trees), "--queries", fmt.Sprint(queries)}
	if lme != "" {
		genArgs = append(genArgs, "--longmemeval", lme)
	}
	nodeBin := node
	if nodeBin == "" {
		nodeBin = "node" // the script is written in JavaScript whatever runs the module
	}
	raw, err := exec.Command(nodeBin, genArgs...).Output()
	if err != nil {
		return fmt.Errorf("workload.mjs: %w", exitDetail(err))
	}
	var sc script
	if err := json.Unmarshal(raw, &sc); err != nil {
		return fmt.Errorf("workload.mjs: %w", err)
	}
	work, err := os.MkdirTemp("", "arbor-bench-wasm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	cacheDir := filepath.Join(work, "wazero-cache")
	t := time.Now()
	if err := warmWazero(wasm, cacheDir, work); err != nil {
		return err
	}
	wazeroCompile := time.Since(t)

	hosts := []host{
		{"native", func(dir string) (instance, error) {
			fs, err := arborhost.NewRootFS(dir)
			if err != nil {
				return nil, err
			}
			return nativeInstance{engine.NewSession(fs, nil)}, nil
		}},
		{"wazero", func(dir string) (instance, error) {
			e, err := hostrt.New(context.Background(), dir, hostrt.WithWasm(wasm), hostrt.WithCacheDir(cacheDir), hostrt.WithStderr(io.Discard))
			if err != nil {
				return nil, err
			}
			return wazeroInstance{e}, nil
		}},
	}
	results := map[string][]replay{}
	for r := range runs {
		for _, h := range hosts {
			fmt.Fprintf(os.Stderr, "bench/wasm: run %d/%d, %s\n", r+1, runs, h.name)
			before := cpuTime()
			rp, err := replayIn(sc, work, h)
			rp.CPU = ms(cpuTime() - before)
			if err != nil {
				return fmt.Errorf("%s: %w", h.name, err)
			}
			results[h.name] = append(results[h.name], rp)
		}
		if node != "" {
			fmt.Fprintf(os.Stderr, "bench/wasm: run %d/%d, node\n", r+1, runs)
			rp, err := replayNode(sc, work, node, wasmPath)
			if err != nil {
				return fmt.Errorf("node: %w", err)
			}
			results["node"] = append(results["node"], rp)
		}
	}
	names := []string{"native", "wazero"}
	if node != "" {
		names = append(names, "node")
	}
	mismatch, err := compare(sc, results, names)
	if err != nil {
		return err
	}
	report(os.Stdout, sc, results, names, reportInfo{
		lme: lme, trees: trees, queries: queries, runs: runs, node: nodeVersion(node),
		wasmBytes: len(wasm), wazeroCompile: wazeroCompile, mismatch: mismatch,
	})
	return nil
}

// warmWazero compiles the module once into cacheDir, as the CLI's first run
// does; the replays then start from the compilation cache, as every later
// CLI command does.
func warmWazero(wasm []byte, cacheDir, work string) error {
	dir, err := os.MkdirTemp(work, "warm-")
	if err != nil {
		return err
	}
	e, err := hostrt.New(context.Background(), dir, hostrt.WithWasm(wasm), hostrt.WithCacheDir(cacheDir), hostrt.WithStderr(io.Discard))
	if err != nil {
		return err
	}
	return e.Close(context.Background())
}

// seed makes a fresh memory root for one tree of one replay.
func seed(work, src string) (string, error) {
	dir, err := os.MkdirTemp(work, "root-")
	if err != nil {
		return "", err
	}
	if src != "" {
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			return "", fmt.Errorf("seed %s: %w", src, err)
		}
	}
	return dir, nil
}

func replayIn(sc script, work string, h host) (replay, error) {
	var rp replay
	rp.Trees = make([]treeResult, len(sc.Trees))
	for ti, tr := range sc.Trees {
		dir, err := seed(work, tr.Seed)
		if err != nil {
			return rp, err
		}
		out := &rp.Trees[ti]
		start := func() (in instance, err error) {
			t, err := measure(func() (err error) {
				in, err = h.start(dir)
				return err
			})
			out.Starts = append(out.Starts, t)
			return in, err
		}
		in, err := start()
		if err != nil {
			return rp, err
		}
		for _, st := range tr.Steps {
			if st.Restart {
				if err := in.stop(); err != nil {
					return rp, err
				}
				if in, err = start(); err != nil {
					return rp, err
				}
				out.Steps = append(out.Steps, nil)
				continue
			}
			var res []byte
			t, err := measure(func() (err error) {
				res, err = in.call(st.Request)
				return err
			})
			if err != nil {
				return rp, fmt.Errorf("%s %s: %w", tr.Name, st.Phase, err)
			}
			out.Steps = append(out.Steps, &stepResult{t, string(res)})
		}
		if err := in.stop(); err != nil {
			return rp, err
		}
	}
	return rp, nil
}

func replayNode(sc script, work, node, wasmPath string) (replay, error) {
	var rp replay
	var dirs []string
	for _, tr := range sc.Trees {
		dir, err := seed(work, tr.Seed)
		if err != nil {
			return rp, err
		}
		dirs = append(dirs, dir)
	}
	scriptPath := filepath.Join(work, "script.json")
	raw, err := json.Marshal(sc)
	if err != nil {
		return rp, err
	}
	if err := os.WriteFile(scriptPath, raw, 0o644); err != nil {
		return rp, err
	}
	cmd := exec.Command(node, "bench/wasm/replay.mjs", "--script", scriptPath, "--dirs", strings.Join(dirs, ","), "--wasm", wasmPath)
	out, err := cmd.Output()
	if err != nil {
		return rp, fmt.Errorf("replay.mjs: %w", exitDetail(err))
	}
	if err := json.Unmarshal(out, &rp); err != nil {
		return rp, fmt.Errorf("replay.mjs: %w", err)
	}
	rp.CPU = ms(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime())
	return rp, nil
}

// compare checks every host's responses against native's (the timing field
// tookMs aside) and returns how many differ per host; the first difference
// of each host is described on stderr.
func compare(sc script, results map[string][]replay, names []string) (map[string]int, error) {
	bad := map[string]int{}
	base := results["native"][0]
	for _, name := range names[1:] {
		for _, rp := range results[name] {
			for ti, tr := range sc.Trees {
				for si, st := range tr.Steps {
					want, got := base.Trees[ti].Steps[si], rp.Trees[ti].Steps[si]
					if want == nil {
						continue
					}
					a, err := normalize(want.Response)
					if err != nil {
						return nil, err
					}
					b, err := normalize(got.Response)
					if err != nil {
						return nil, err
					}
					if a != b {
						if bad[name] == 0 {
							fmt.Fprintf(os.Stderr, "bench/wasm: %s differs from native at %s, %s:\n  native: %.400s\n  %s: %.400s\n", name, tr.Name, st.Phase, a, name, b)
						}
						bad[name]++
					}
				}
			}
		}
	}
	return bad, nil
}

// normalize drops the timing fields of a response.
func normalize(s string) (string, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "", fmt.Errorf("response %.200q: %w", s, err)
	}
	var drop func(any)
	drop = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "tookMs")
			for _, c := range x {
				drop(c)
			}
		case []any:
			for _, c := range x {
				drop(c)
			}
		}
	}
	drop(v)
	b, err := json.Marshal(v)
	return string(b), err
}

type reportInfo struct {
	lme            string
	trees, queries int
	runs           int
	node           string
	wasmBytes      int
	wazeroCompile  time.Duration
	mismatch       map[string]int
}

// phaseStats are one phase's figures on one host: the median over replays
// of the phase's total, and the median of its single steps.
type phaseStats struct {
	n          int
	total, p50 float64
}

// metrics are the two timings the tables show.
var metrics = []struct{ name, title string }{
	{"wall", "wall time"},
	{"cpu", "processor time of the thread that ran each step (Node: of the process)"},
}

func report(w io.Writer, sc script, results map[string][]replay, names []string, info reportInfo) {
	fmt.Fprintf(w, "Command: `go run ./bench/wasm")
	if info.lme != "" {
		fmt.Fprintf(w, " -longmemeval %s -trees %d -queries %d", info.lme, info.trees, info.queries)
	}
	fmt.Fprintf(w, " -runs %d` (%s, %s/%s, %d CPUs, %s; %s; module %.1f MiB).\n\n",
		info.runs, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), info.node, time.Now().UTC().Format("2006-01-02"), float64(info.wasmBytes)/(1<<20))
	fmt.Fprintf(w, "wazero first compile (cold compilation cache): %.0f ms. Responses identical to native (tookMs aside): %s.\n\n",
		ms(info.wazeroCompile), matchText(names, info.mismatch))

	fmt.Fprintf(w, "Processor time of one replay of the whole script (median; user + system, all threads; Node includes compiling the module):")
	for _, n := range names {
		var cpu []float64
		for _, rp := range results[n] {
			cpu = append(cpu, rp.CPU)
		}
		fmt.Fprintf(w, " %s %s", n, msText(median(cpu)))
		if n != "native" {
			fmt.Fprintf(w, " (%s)", ratioText(median(cpu), nativeCPU(results)))
		}
		fmt.Fprint(w, ";")
	}
	fmt.Fprint(w, "\n\n")

	var groups []string
	for _, tr := range sc.Trees {
		if !slices.Contains(groups, tr.Group) {
			groups = append(groups, tr.Group)
		}
	}
	for _, m := range metrics {
		for _, g := range groups {
			table(w, sc, results, names, g, m.name, m.title)
		}
	}
}

// table prints one group's phases in one metric.
func table(w io.Writer, sc script, results map[string][]replay, names []string, g, metric, title string) {
	var phases []string
	for _, tr := range sc.Trees {
		if tr.Group != g {
			continue
		}
		for _, st := range tr.Steps {
			if !st.Restart && !slices.Contains(phases, st.Phase) {
				phases = append(phases, st.Phase)
			}
		}
	}
	phases = append([]string{"start instance"}, phases...)
	fmt.Fprintf(w, "### %s: %s\n\n", g, title)
	fmt.Fprintf(w, "| phase | n |")
	for _, n := range names {
		fmt.Fprintf(w, " %s p50 | %s total |", n, n)
	}
	for _, n := range names[1:] {
		fmt.Fprintf(w, " %s / native |", n)
	}
	fmt.Fprintf(w, "\n|---|---:|%s%s\n", strings.Repeat("---:|---:|", len(names)), strings.Repeat("---:|", len(names)-1))
	for _, ph := range phases {
		stats := map[string]phaseStats{}
		for _, n := range names {
			stats[n] = phase(sc, results[n], g, ph, metric)
		}
		fmt.Fprintf(w, "| %s | %d |", ph, stats["native"].n)
		for _, n := range names {
			fmt.Fprintf(w, " %s | %s |", msText(stats[n].p50), msText(stats[n].total))
		}
		for _, n := range names[1:] {
			if ph == "start instance" { // native has no instance to start
				fmt.Fprint(w, " — |")
				continue
			}
			fmt.Fprintf(w, " %s |", ratioText(stats[n].total, stats["native"].total))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func nativeCPU(results map[string][]replay) float64 {
	var cpu []float64
	for _, rp := range results["native"] {
		cpu = append(cpu, rp.CPU)
	}
	return median(cpu)
}

// phase gathers one phase of one group over the replays of one host.
func phase(sc script, rps []replay, group, name, metric string) phaseStats {
	var totals, steps []float64
	for _, rp := range rps {
		total := 0.0
		for ti, tr := range sc.Trees {
			if tr.Group != group {
				continue
			}
			if name == "start instance" {
				for _, s := range rp.Trees[ti].Starts {
					total += s.get(metric)
					steps = append(steps, s.get(metric))
				}
				continue
			}
			for si, st := range tr.Steps {
				if st.Phase == name && !st.Restart {
					d := rp.Trees[ti].Steps[si].get(metric)
					total += d
					steps = append(steps, d)
				}
			}
		}
		totals = append(totals, total)
	}
	return phaseStats{n: len(steps) / max(len(rps), 1), total: median(totals), p50: median(steps)}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (t timing) get(metric string) float64 {
	if metric == "cpu" {
		return t.CPU
	}
	return t.Wall
}

// cpuTime is the processor time this process has used so far.
func cpuTime() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// threadCPU is the processor time the calling thread has used so far.
func threadCPU() time.Duration { return rusage(rusageThread) }

// rusageThread is Linux's RUSAGE_THREAD, which package syscall lacks.
const rusageThread = 1

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func msText(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

func ratioText(v, base float64) string {
	if base <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f×", v/base)
}

func matchText(names []string, mismatch map[string]int) string {
	var parts []string
	for _, n := range names[1:] {
		if mismatch[n] == 0 {
			parts = append(parts, n+" yes")
		} else {
			parts = append(parts, fmt.Sprintf("%s NO (%d responses differ)", n, mismatch[n]))
		}
	}
	return strings.Join(parts, ", ")
}

func nodeVersion(node string) string {
	if node == "" {
		return "no Node run"
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "Node (version unknown)"
	}
	return "Node " + string(bytes.TrimSpace(out))
}

// exitDetail adds a failed command's standard error to its error.
func exitDetail(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return err
}
