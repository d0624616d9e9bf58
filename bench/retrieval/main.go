// Command retrieval is Arbor's retrieval benchmark (issue 3, capability 6;
// issue 17).
//
// It loads LoCoMo and LongMemEval-S, builds one Context Tree per LoCoMo
// conversation and per LongMemEval question through the engine's Curate,
// asks every question through Query (the API users call), and scores the
// rankings against the gold turns and sessions, on a tuning and a
// validation half of the questions (split.go). In the same run it scores
// simple peers on the same protocol: textbook BM25, BM25+ and BM25F
// (okapi.go), bluge's default BM25 (bm25.go) and MiniSearch in Node with
// the ByteRover settings (minisearch.mjs), plus Arbor's wasm module in
// Node on a subset (arbor-wasm.mjs). It writes a markdown report; with
// -ablation, also the ablation of Arbor's mechanisms, each switched off
// alone (variants.go, ablationreport.go).
//
//	go run ./bench/retrieval -locomo bench/data/locomo10.json.gz \
//	    -longmemeval bench/data/longmemeval_s.json.gz -out bench/retrieval/REPORT.md \
//	    [-ablation bench/retrieval/ABLATION.md]
//
// bench/data/fetch.sh downloads both files; bench/README.md says where they
// come from. ./build.sh bench runs this command.
//
// Nothing here runs in CI; metrics_test.go tests the metric functions.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
)

type config struct {
	locomo, lme   string
	out, dump     string
	node          string
	noNode        bool
	noWasm        bool
	wasmConvs     int
	wasmQuestions int
	lmeTurns      int
	locomoContext int
	examples      int
	command       string
	cpuProfile    string
	lifecycle     *api.LifecycleModel
	ablation      string // ABLATION.md path
	ablate        []mechanism
}

func main() {
	var c config
	flag.StringVar(&c.locomo, "locomo", "", "LoCoMo file, .json or .json.gz (bench/data/fetch.sh puts it at bench/data/locomo10.json.gz)")
	flag.StringVar(&c.lme, "longmemeval", "", "LongMemEval-S file, .json or .json.gz (bench/data/fetch.sh puts it at bench/data/longmemeval_s.json.gz)")
	flag.StringVar(&c.out, "out", "", "write the markdown report here (default: stdout)")
	flag.StringVar(&c.dump, "dump", "", "also write every question's rankings and Arbor answers as JSON here")
	flag.IntVar(&poolDepth, "dump-pool", 0, "with -dump: also ask Arbor for every question's N best matches, in the order its evidence rules leave them, as \"pool\" (for tuning; after the timed passes)")
	flag.StringVar(&c.node, "node", "node", "the node executable, for MiniSearch and the wasm run")
	flag.BoolVar(&c.noNode, "no-node", false, "skip MiniSearch and the wasm run")
	flag.BoolVar(&c.noWasm, "no-wasm", false, "skip Arbor wasm-in-Node")
	flag.IntVar(&c.wasmConvs, "wasm-conversations", 2, "LoCoMo conversations in the wasm subset")
	flag.IntVar(&c.wasmQuestions, "wasm-questions", 10, "LongMemEval questions in the wasm subset")
	flag.IntVar(&c.locomoContext, "locomo-context", 2, "LoCoMo: preceding turns of the session written into each turn's entry as context (0: none)")
	flag.Func("lifecycle", "lifecycle parameters as JSON over the defaults, e.g. '{\"recencyWeight\":0}' (docs/ABI.md §4.1)", func(v string) error {
		p := api.DefaultLifecycleModel()
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return err
		}
		c.lifecycle = &p
		return p.Validate()
	})
	flag.IntVar(&c.lmeTurns, "lme-turns", 0, "LongMemEval: turns per entry (0: one entry per session)")
	flag.IntVar(&c.examples, "examples", 6, "failing questions listed per dataset in the report")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the run here")
	flag.StringVar(&c.ablation, "ablation", "", "also build Arbor without each mechanism of -ablate, one at a time, and write the ablation (off vs on, tuning and validation halves, latency) here")
	ablate := flag.String("ablate", "all", "with -ablation: the mechanisms to switch off, \"all\" or names separated by commas")
	flag.Parse()
	if c.ablation != "" {
		ms, err := parseMechanisms(*ablate)
		if err != nil {
			fmt.Fprintln(os.Stderr, "retrieval:", err)
			os.Exit(2)
		}
		c.ablate = ms
	}
	if c.locomo == "" && c.lme == "" {
		fmt.Fprintln(os.Stderr, "usage: retrieval -locomo FILE -longmemeval FILE [-out REPORT.md]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	c.command = "go run ./bench/retrieval " + strings.Join(os.Args[1:], " ")
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "retrieval: cpu profile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(c); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "retrieval:", err)
		os.Exit(1)
	}
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(c config) error {
	start := time.Now()
	rep := &report{cfg: c, started: start}
	// Both datasets are loaded first: each is the other's source of
	// off-topic questions (offtopic.go).
	var convs []*locomoConv
	var qs []*lmeQuestion
	var err error
	if c.locomo != "" {
		progress("loading %s", c.locomo)
		if convs, rep.locomoBytes, err = loadLocomo(c.locomo); err != nil {
			return err
		}
	}
	if c.lme != "" {
		progress("loading %s", c.lme)
		if qs, rep.lmeBytes, err = loadLongMemEval(c.lme); err != nil {
			return err
		}
	}
	if c.locomo != "" {
		rep.locomo = runLocomo(convs, c.locomoContext, variants(c.lifecycle, c.ablate), lmeOffTopic(qs))
	}
	if c.lme != "" {
		rep.lme = runLME(qs, c.lmeTurns, variants(c.lifecycle, c.ablate), locomoOffTopic(convs))
	}
	if !c.noNode {
		rep.node = nodeVersion(c.node)
		if rep.node != "" {
			runNodePeers(c, rep)
		} else {
			rep.notes = append(rep.notes, "node not found: MiniSearch and wasm-in-Node were not run")
		}
	}
	rep.total = time.Since(start)
	md := rep.markdown()
	if c.out == "" {
		fmt.Print(md)
	} else {
		if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(c.out, []byte(md), 0o644); err != nil {
			return err
		}
		progress("wrote %s", c.out)
	}
	if c.ablation != "" {
		if err := os.WriteFile(c.ablation, []byte(rep.ablationReport()), 0o644); err != nil {
			return err
		}
		progress("wrote %s", c.ablation)
	}
	if c.dump != "" {
		data, err := json.MarshalIndent(rep.dump(), "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.dump, data, 0o644); err != nil {
			return err
		}
		progress("wrote %s", c.dump)
	}
	progress("done in %s", rep.total.Round(time.Second))
	return nil
}
