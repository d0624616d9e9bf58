// Command scale measures how Arbor's costs grow with the size of the
// memory: trees of 1k to 1M entries, one conversation message per entry
// (the LoCoMo and LongMemEval-S messages, topped up with generated text),
// each built cold, opened with its persisted index and queried, natively,
// as WebAssembly under wazero, in Node and in headless Chromium, with
// MiniSearch in Node on the same entries and questions; and the whole
// `arbor query` process on the persisted tree. Each host runs in a process
// of its own, so its peak resident set is its own.
//
//	./build.sh cli
//	go run ./bench/scale -sizes 1000,10000
//
// Results are merged into bench/scale/results.json (one row per size and
// host, each with its date and the machine's load), from which
// bench/scale/REPORT.md and its plots are rewritten; -report-only rewrites
// them without measuring. Trees are cached in bench/scale/.trees
// (git-ignored).
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/arborhost"
	hostrt "github.com/arbormem/arbor/host/runtime"
)

// allHosts are the ways the trees are measured, in report order.
var allHosts = []string{"native", "wazero", "node", "chromium", "minisearch"}

type options struct {
	sizes      []int
	hosts      []string
	queries    int
	cliRuns    int
	cache      string
	results    string
	report     string
	locomo     string
	lme        string
	cli        string
	wasm       string
	node       string
	reportOnly bool
	reuseIndex bool
	keepHosts  bool
}

func main() {
	var o options
	sizes := flag.String("sizes", "1000,10000", "tree sizes in entries, comma-separated (1000000 works: the generator streams)")
	hosts := flag.String("hosts", strings.Join(allHosts, ","), "hosts to measure, comma-separated (none: only the whole-process figures)")
	flag.IntVar(&o.queries, "queries", 100, "questions asked of each tree in each host")
	flag.IntVar(&o.cliRuns, "cli-runs", 5, "runs of the whole `arbor query` process (after one warm-up)")
	flag.StringVar(&o.cache, "trees", "bench/scale/.trees", "where the generated trees are cached")
	flag.StringVar(&o.results, "results", "bench/scale/results.json", "the results file the run is merged into")
	flag.StringVar(&o.report, "report", "bench/scale/REPORT.md", "the report rewritten from the results (the plots go next to it); empty skips it")
	flag.StringVar(&o.locomo, "locomo", "bench/data/locomo10.json.gz", "LoCoMo data (bench/data/fetch.sh)")
	flag.StringVar(&o.lme, "longmemeval", "", "LongMemEval-S data (default: bench/data/longmemeval_s_dev.json.gz if present, else longmemeval_s.json.gz)")
	flag.StringVar(&o.cli, "cli", "bin/arbor", "the CLI timed as a whole process; empty skips it")
	flag.StringVar(&o.wasm, "wasm", "dist/arbor.wasm", "the engine module for wazero, Node and Chromium")
	flag.StringVar(&o.node, "node", "node", "the Node.js binary (Node, Chromium through playwright-core, MiniSearch)")
	flag.BoolVar(&o.reportOnly, "report-only", false, "rewrite the report and plots from the results file without measuring")
	flag.BoolVar(&o.keepHosts, "keep-hosts", false, "keep the hosts (and the CLI figures) an earlier run measured at the same size that this run does not measure; with -reuse-index and no native host, the index persisted in the tree is opened")
	flag.BoolVar(&o.reuseIndex, "reuse-index", false, "wazero and Node open the index the native host built instead of building their own (for sizes where a wasm cold build outlasts the run); their build columns then read \"native's index\"")
	child := flag.String("child", "", "internal: run one host (native or wazero) on -dir with -script and print its figures, generate -n entries under -dir, walk -dir alone, or warm the compilation cache for -wasm")
	dir := flag.String("dir", "", "internal: the tree of -child")
	scriptPath := flag.String("script", "", "internal: the script of -child")
	n := flag.Int("n", 0, "internal: the entries of -child generate")
	flag.Parse()

	if *child == "generate" {
		if err := generate(*dir, *n, o.queries, o.locomo, o.lme); err != nil {
			fmt.Fprintln(os.Stderr, "bench/scale:", err)
			os.Exit(1)
		}
		return
	}
	if *child == "walk" {
		if err := walkTree(*dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench/scale:", err)
			os.Exit(1)
		}
		return
	}
	if *child == "warm" {
		if err := warmCache(o.wasm); err != nil {
			fmt.Fprintln(os.Stderr, "bench/scale:", err)
			os.Exit(1)
		}
		return
	}
	if *child != "" {
		if err := runChild(*child, *dir, *scriptPath, o.wasm); err != nil {
			fmt.Fprintln(os.Stderr, "bench/scale:", err)
			os.Exit(1)
		}
		return
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench/scale: -sizes: %q is not a number of entries\n", s)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue // -hosts '' -keep-hosts: the whole-process figures alone
		}
		if !slices.Contains(allHosts, h) {
			fmt.Fprintf(os.Stderr, "bench/scale: -hosts: %q is not one of %s\n", h, strings.Join(allHosts, ", "))
			os.Exit(2)
		}
		o.hosts = append(o.hosts, h)
	}
	if o.lme == "" && *child == "" {
		o.lme = "bench/data/longmemeval_s.json.gz"
		if _, err := os.Stat("bench/data/longmemeval_s_dev.json.gz"); err == nil {
			o.lme = "bench/data/longmemeval_s_dev.json.gz"
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/scale:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// script is what every host does with a tree (the same requests, docs/ABI.md
// §3): open it without a persisted index (the cold build), close it (which
// persists the index), open it again, ask every question, close.
type script struct {
	FixedTime string   `json:"fixedTime"`
	Queries   []string `json:"queries"`
	Limit     int      `json:"limit"`
}

// hostResult is one host's figures on one tree, in milliseconds and MiB.
// The Node scripts print the same fields.
type hostResult struct {
	BuildMs    float64   `json:"buildMs"`              // open without a persisted index: every entry read and indexed
	BuildCPUMs float64   `json:"buildCpuMs,omitempty"` // processor time of the build, every thread
	PersistMs  float64   `json:"persistMs"`            // the close after the build, which writes the index
	OpenMs     float64   `json:"openMs"`               // open with the persisted index
	OpenCPUMs  float64   `json:"openCpuMs,omitempty"`  // processor time of that open, every thread
	QueryMs    []float64 `json:"queryMs,omitempty"`    // each question's wall time
	QueryP50   float64   `json:"queryP50"`
	QueryP95   float64   `json:"queryP95"`
	// QueryCPUMs is the processor time of all the questions (the process's,
	// every thread), divided by their number: the steadier figure for
	// ratios between hosts on a shared machine.
	QueryCPUMs float64 `json:"queryCpuMs,omitempty"`
	// LinearMiB is the module's linear memory after the build: its peak
	// until then, since a wasm memory never shrinks.
	LinearMiB float64 `json:"linearMiB,omitempty"`
	// PeakRSSMiB is the process's maximum resident set over the whole
	// script (the build is its largest part): for Chromium, the largest of
	// the Node driver and the browser processes it reaped.
	PeakRSSMiB float64 `json:"peakRssMiB,omitempty"`
	HeapMiB    float64 `json:"heapMiB,omitempty"` // MiniSearch: V8 heap in use after indexing
	// ReusedIndex: the host's first open found the index the native host
	// built (-reuse-index), so it measured no build; LinearMiB is then the
	// peak of that open.
	ReusedIndex bool `json:"reusedIndex,omitempty"`
	// From is the date of the earlier run that measured the host, when
	// this run kept its figures (-keep-hosts) instead of measuring it.
	From string `json:"from,omitempty"`
	// Results are each question's result paths, compared with native's.
	Results [][]string `json:"results,omitempty"`
	// Digests are native's results, a SHA-256 prefix of each question's
	// paths: kept in the results file, so that a later run of other hosts
	// (-keep-hosts) is compared with them.
	Digests []string `json:"digests,omitempty"`
	// Differ is how many questions ranked otherwise than natively.
	Differ  *int   `json:"differ,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// warmCache starts the engine module under wazero on an empty folder and
// closes it, so that its compiled code is in the compilation cache before
// a wazero host is measured. The wazero hosts' wazero is not the CLI's
// (patched, with a cache of its own): the CLI's runs do not warm it, and a
// host that compiled the module had its compiler's memory in its peak RSS
// (385 against 184 MiB at 1,000 entries). In a child, since a process's
// peak RSS is carried into the children it starts.
func warmCache(wasmPath string) error {
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return fmt.Errorf("%w (build it with ./build.sh wasm)", err)
	}
	dir, err := os.MkdirTemp("", "arbor-scale-warm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	e, err := hostrt.New(ctx, dir, hostrt.WithWasm(wasm), hostrt.WithStderr(io.Discard))
	if err != nil {
		return err
	}
	return e.Close(ctx)
}

// runChild runs the script natively or under wazero in this process and
// prints a hostResult as JSON.
func runChild(host, dir, scriptPath, wasmPath string) error {
	raw, err := os.ReadFile(scriptPath)
	if err != nil {
		return err
	}
	var sc script
	if err := json.Unmarshal(raw, &sc); err != nil {
		return err
	}
	var call func([]byte) ([]byte, error)
	linear := func() float64 { return 0 }
	switch host {
	case "native":
		fs, err := arborhost.NewRootFS(dir)
		if err != nil {
			return err
		}
		s := engine.NewSession(fs, nil)
		call = func(req []byte) ([]byte, error) { return s.Call(req), nil }
	case "wazero":
		wasm, err := os.ReadFile(wasmPath)
		if err != nil {
			return fmt.Errorf("%w (build it with ./build.sh wasm)", err)
		}
		ctx := context.Background()
		// The compilation cache, warmed by a child of the parent before
		// the first size (warmCache): the build is timed, not the
		// compiler, and the peak RSS is the engine's.
		e, err := hostrt.New(ctx, dir, hostrt.WithWasm(wasm), hostrt.WithStderr(io.Discard))
		if err != nil {
			return err
		}
		defer e.Close(ctx)
		call = func(req []byte) ([]byte, error) { return e.Call(ctx, req) }
		linear = func() float64 { return mib(int64(e.MemoryBytes())) }
	default:
		return fmt.Errorf("-child %q: want native or wazero", host)
	}
	var r hostResult
	id := 0
	do := func(method string, params any) (json.RawMessage, float64, float64, error) {
		id++
		req, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		if err != nil {
			return nil, 0, 0, err
		}
		t, c := time.Now(), measure.CPUTime()
		out, err := call(req)
		wall, cpu := msSince(t), float64(measure.CPUTime()-c)/1e6
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", method, err)
		}
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code, Message string
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", method, err)
		}
		if env.Error != nil {
			return nil, 0, 0, fmt.Errorf("%s: %s: %s", method, env.Error.Code, env.Error.Message)
		}
		return env.Result, wall, cpu, nil
	}
	open := map[string]any{"fixedTime": sc.FixedTime}
	var err2 error
	if _, r.BuildMs, r.BuildCPUMs, err2 = do("open", open); err2 != nil {
		return err2
	}
	if _, r.PersistMs, _, err2 = do("close", nil); err2 != nil {
		return err2
	}
	r.LinearMiB = linear()
	if _, r.OpenMs, r.OpenCPUMs, err2 = do("open", open); err2 != nil {
		return err2
	}
	for _, q := range sc.Queries {
		res, wall, cpu, err := do("query", map[string]any{"query": q, "limit": sc.Limit})
		if err != nil {
			return err
		}
		var qr struct {
			Results []struct {
				Path string `json:"path"`
			} `json:"results"`
		}
		if err := json.Unmarshal(res, &qr); err != nil {
			return err
		}
		paths := []string{}
		for _, h := range qr.Results {
			paths = append(paths, h.Path)
		}
		r.QueryMs = append(r.QueryMs, wall)
		r.QueryCPUMs += cpu / float64(len(sc.Queries))
		r.Results = append(r.Results, paths)
	}
	if _, _, _, err := do("close", nil); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// sizeResult is every measurement of one tree size.
type sizeResult struct {
	Entries   int                    `json:"entries"`
	Real      int                    `json:"real"`
	Generated int                    `json:"generated"`
	MiB       float64                `json:"mib"`
	Hosts     map[string]*hostResult `json:"hosts"`
	CLI       *cliResult             `json:"cli,omitempty"`
	// Walk is the tree's stat walk alone, in a process of its own: the
	// floor of any open that looks at every file (walkTree).
	Walk *cliResult `json:"walk,omitempty"`
	Run  runInfo    `json:"run"`
}

// runInfo says when and where a size was measured.
type runInfo struct {
	Date    string `json:"date"`
	Load    string `json:"load"` // /proc/loadavg at the start: 1, 5, 15 minutes
	CPUs    int    `json:"cpus"`
	Go      string `json:"go"`
	Queries int    `json:"queries"`
	// FloorMiB is the harness's own peak resident set: no child's peak
	// RSS can read below it (see measure.SelfMaxRSS).
	FloorMiB float64 `json:"floorMiB"`
}

// cliResult is the whole `arbor query` process on the persisted tree.
type cliResult struct {
	Runs       int     `json:"runs"`
	WallMs     float64 `json:"wallMs"` // median
	CPUMs      float64 `json:"cpuMs"`  // median, user + system
	PeakRSSMiB float64 `json:"peakRssMiB"`
}

// results is the file every run is merged into.
type results struct {
	Module struct {
		Bytes     int    `json:"bytes"`
		GzipBytes int    `json:"gzipBytes"`
		Date      string `json:"date"`
	} `json:"module"`
	// Floor is `arbor query` on an empty memory: the process's own cost.
	Floor *cliResult             `json:"floor,omitempty"`
	Sizes map[string]*sizeResult `json:"sizes"`
}

func run(o options) error {
	var res results
	if b, err := os.ReadFile(o.results); err == nil {
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("%s: %w", o.results, err)
		}
	}
	if res.Sizes == nil {
		res.Sizes = map[string]*sizeResult{}
	}
	if !o.reportOnly {
		if err := measureAll(o, &res); err != nil {
			return err
		}
	}
	if o.report == "" {
		return nil
	}
	return writeReport(o.report, &res)
}

func measureAll(o options, res *results) error {
	wasm, err := os.ReadFile(o.wasm)
	if err != nil {
		return fmt.Errorf("%w (build it with ./build.sh cli)", err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(wasm)
	zw.Close()
	res.Module.Bytes, res.Module.GzipBytes, res.Module.Date = len(wasm), gz.Len(), today()
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if o.cli != "" {
		if res.Floor, err = cliFloor(o); err != nil {
			return err
		}
	}
	if slices.Contains(o.hosts, "wazero") {
		warm := exec.Command(self, "-child", "warm", "-wasm", o.wasm)
		if out, err := warm.CombinedOutput(); err != nil {
			return fmt.Errorf("warm the compilation cache: %w: %s", err, out)
		}
	}
	for _, n := range o.sizes {
		// A child makes the tree: the data sets it loads would otherwise
		// stay in this process's peak resident set, which Linux carries
		// into every child's (the high-water mark survives exec).
		gen := exec.Command(self, "-child", "generate", "-dir", o.cache, "-n", fmt.Sprint(n), "-queries", fmt.Sprint(o.queries),
			"-locomo", o.locomo, "-longmemeval", o.lme)
		gen.Stderr = os.Stderr
		out, err := gen.Output()
		if err != nil {
			return fmt.Errorf("generate %d entries: %w", n, err)
		}
		var info treeInfo
		if err := json.Unmarshal(out, &info); err != nil {
			return fmt.Errorf("generate %d entries: %w", n, err)
		}
		tree := filepath.Join(o.cache, fmt.Sprint(n), "tree")
		scriptPath := filepath.Join(o.cache, fmt.Sprint(n), "script.json")
		var sc script
		if b, err := os.ReadFile(scriptPath); err != nil {
			return err
		} else if err := json.Unmarshal(b, &sc); err != nil {
			return fmt.Errorf("%s: %w", scriptPath, err)
		}
		sr := &sizeResult{Entries: n, Real: info.Real, Generated: info.Generated, MiB: mib(info.Bytes), Hosts: map[string]*hostResult{},
			Run: runInfo{Date: today(), Load: loadAvg(), CPUs: runtime.NumCPU(), Go: runtime.Version(), Queries: o.queries}}
		// built: the native host persisted an index of the tree, in this
		// run or, kept from an earlier one, before it.
		prev := res.Sizes[fmt.Sprint(n)]
		built := false
		if o.keepHosts && prev != nil && !slices.Contains(o.hosts, "native") {
			_, err := os.Stat(filepath.Join(tree, ".arbor", "index", "manifest.bin"))
			built = err == nil && prev.Hosts["native"] != nil && prev.Hosts["native"].Error == ""
		}
		for _, h := range o.hosts {
			reuse := o.reuseIndex && built && (h == "wazero" || h == "node")
			// Each host that builds on the folder starts from nothing
			// (Chromium and MiniSearch read a copy without .arbor).
			if (h == "native" || h == "wazero" || h == "node") && !reuse {
				if err := os.RemoveAll(filepath.Join(tree, ".arbor")); err != nil {
					return err
				}
				if err := os.MkdirAll(filepath.Join(tree, ".arbor"), 0o755); err != nil {
					return err
				}
			}
			if reuse {
				// The index and catalog only: the lifecycle signals the
				// questions of the hosts before left (state.json) would
				// change the order of this host's answers.
				if err := os.Remove(filepath.Join(tree, ".arbor", "state.json")); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
			logf("%d entries: %s (load %s)", n, h, loadAvg())
			var cmd *exec.Cmd
			switch h {
			case "native", "wazero":
				cmd = exec.Command(self, "-child", h, "-dir", tree, "-script", scriptPath, "-wasm", o.wasm)
			default:
				cmd = exec.Command(o.node, "bench/scale/hosts.mjs", "--host", h, "--dir", tree, "--script", scriptPath, "--wasm", o.wasm)
			}
			r := runHost(cmd)
			if r.Error != "" {
				logf("  %s failed: %s", h, r.Error)
			}
			built = built || (h == "native" && r.Error == "")
			r.ReusedIndex = reuse
			sr.Hosts[h] = r
		}
		if o.keepHosts && prev != nil {
			for h, r := range prev.Hosts {
				if _, ok := sr.Hosts[h]; !ok {
					if r.From == "" {
						r.From = prev.Run.Date
					}
					sr.Hosts[h] = r
				}
			}
		}
		agree(sr)
		if o.keepHosts && prev != nil && o.cli == "" {
			sr.CLI, sr.Walk = prev.CLI, prev.Walk
		}
		if o.cli != "" {
			// The last engine host's close persisted the index, unless
			// none ran or it failed.
			if _, err := os.Stat(filepath.Join(tree, ".arbor", "index", "manifest.bin")); err != nil {
				logf("%d entries: CLI: the persisted index comes from the native host", n)
				if r := runHost(exec.Command(self, "-child", "native", "-dir", tree, "-script", scriptPath)); r.Error != "" {
					return fmt.Errorf("persist the index for the CLI: %s", r.Error)
				}
			}
			logf("%d entries: arbor query, whole process", n)
			if sr.CLI, err = timeCLI(o, tree, sc.Queries); err != nil {
				return err
			}
			logf("%d entries: the stat walk alone, whole process", n)
			if sr.Walk, err = timeProcess(o.cliRuns, func(int) *exec.Cmd { return exec.Command(self, "-child", "walk", "-dir", tree) }); err != nil {
				return err
			}
		}
		for _, r := range sr.Hosts {
			r.QueryMs = nil // p50 and p95 are kept
		}
		sr.Run.FloorMiB = mib(measure.SelfMaxRSS())
		res.Sizes[fmt.Sprint(n)] = sr
		if err := writeJSON(o.results, res); err != nil {
			return err
		}
	}
	return nil
}

// runHost runs one host's process and reads its figures, adding its peak
// resident set and the query percentiles.
func runHost(cmd *exec.Cmd) *hostResult {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := &hostResult{}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 600 {
			msg = "…" + msg[len(msg)-600:]
		}
		r.Error = fmt.Sprintf("%v: %s", err, msg)
		if cmd.ProcessState != nil {
			r.PeakRSSMiB = mib(measure.MaxRSS(cmd.ProcessState))
		}
		return r
	}
	if err := json.Unmarshal(stdout.Bytes(), r); err != nil {
		return &hostResult{Error: fmt.Sprintf("its output: %v", err)}
	}
	if rss := measure.MaxRSS(cmd.ProcessState); rss > 0 && r.PeakRSSMiB == 0 {
		r.PeakRSSMiB = mib(rss)
	}
	r.QueryP50, r.QueryP95 = measure.Percentile(r.QueryMs, 50), measure.Percentile(r.QueryMs, 95)
	return r
}

// agree counts, for each host, the questions it ranked otherwise than the
// native engine (the wasm hosts run the same engine, so they must not).
func agree(sr *sizeResult) {
	base := sr.Hosts["native"]
	if base != nil && base.Results != nil {
		base.Digests = digests(base.Results)
	}
	for name, r := range sr.Hosts {
		if name == "native" || name == "minisearch" || base == nil || base.Error != "" || r.Error != "" || r.Results == nil {
			continue
		}
		d := 0
		mine := digests(r.Results)
		for i := range base.Digests {
			if i >= len(mine) || mine[i] != base.Digests[i] {
				d++
			}
		}
		r.Differ = &d
	}
	for _, r := range sr.Hosts {
		r.Results = nil
	}
}

// digests are a SHA-256 prefix of each question's result paths.
func digests(results [][]string) []string {
	out := make([]string, len(results))
	for i, paths := range results {
		h := sha256.Sum256([]byte(strings.Join(paths, "\n")))
		out[i] = hex.EncodeToString(h[:8])
	}
	return out
}

// timeCLI runs `arbor query` as a whole process on the persisted tree, one
// warm-up (which also fills the compilation cache) and then cliRuns runs,
// a different question each.
func timeCLI(o options, tree string, qs []string) (*cliResult, error) {
	return timeProcess(o.cliRuns, func(i int) *exec.Cmd {
		return exec.Command(o.cli, "--root", tree, "query", qs[i%len(qs)])
	})
}

// timeProcess runs the command cmd(i) makes, once to warm up and then runs
// times, and returns the medians of their wall and CPU times and the
// largest peak resident set.
func timeProcess(runs int, cmd func(i int) *exec.Cmd) (*cliResult, error) {
	var wall, cpu []float64
	var rss int64
	for i := range runs + 1 {
		c := cmd(i)
		var stderr bytes.Buffer
		c.Stdout, c.Stderr = io.Discard, &stderr
		t := time.Now()
		if err := c.Run(); err != nil {
			return nil, fmt.Errorf("%s: %v: %s", strings.Join(c.Args, " "), err, stderr.String())
		}
		if i == 0 {
			continue
		}
		wall = append(wall, msSince(t))
		cpu = append(cpu, float64((c.ProcessState.UserTime()+c.ProcessState.SystemTime()).Microseconds())/1000)
		rss = max(rss, measure.MaxRSS(c.ProcessState))
	}
	return &cliResult{Runs: runs, WallMs: measure.Percentile(wall, 50), CPUMs: measure.Percentile(cpu, 50), PeakRSSMiB: mib(rss)}, nil
}

// walkTree lists every folder of the tree at dir and describes every file
// in it, as the Go host does for the module's open (arborhost.RootFS.Walk:
// each folder read relative to its parent, each file's size and times),
// and nothing else: the part of an open that any design looking at every
// file pays, whatever it then does with what it sees. It prints how many
// files it described.
func walkTree(dir string) error {
	fs, err := arborhost.NewRootFS(dir)
	if err != nil {
		return err
	}
	files := 0
	if err := fs.Walk("", func(_ string, list []host.DirEntry) error {
		for _, e := range list {
			if !e.IsDir {
				files++
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("walk %s: %w", dir, err)
	}
	fmt.Println(files)
	return nil
}

// cliFloor times `arbor query` on an empty memory root.
func cliFloor(o options) (*cliResult, error) {
	dir, err := os.MkdirTemp("", "arbor-bench-scale-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command(o.cli, "--root", dir, "init").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s init: %v: %s", o.cli, err, out)
	}
	logf("arbor query on an empty memory (the CLI's floor)")
	return timeCLI(o, dir, []string{"what did we decide about retries?"})
}

func today() string { return time.Now().UTC().Format("2006-01-02") }

// loadAvg is the machine's load (1, 5 and 15 minutes), or "n/a".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
