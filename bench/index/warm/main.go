// Command warm measures what a process pays to open a tree whose search
// index is persisted, and to query it: the engine module's linear memory
// (wazero) or the Go heap (native) after the open and after the queries,
// the open's wall and CPU time, and each query's. The tree and its
// questions come from bench/scale's generator (-child generate); the index
// is built first, in an engine of its own, when the tree has none, so that
// the figures are those of a warm open alone (a linear memory never
// shrinks: measured in the engine that built the index, it would show the
// build).
//
//	go run ./bench/index/warm -dir /tmp/segtrees/10000 -host wazero -wasm dist/arbor.wasm
//
// It prints one JSON object on stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
	hostrt "github.com/arbormem/arbor/host/runtime"
)

type script struct {
	FixedTime string   `json:"fixedTime"`
	Queries   []string `json:"queries"`
	Limit     int      `json:"limit"`
}

// result is what one run prints.
type result struct {
	Host string `json:"host"`
	// LinearMiB is the module's linear memory (wazero), HeapMiB the Go
	// heap in use after a collection (native).
	OpenLinearMiB  float64 `json:"openLinearMiB,omitempty"`
	QueryLinearMiB float64 `json:"queryLinearMiB,omitempty"`
	OpenHeapMiB    float64 `json:"openHeapMiB,omitempty"`
	QueryHeapMiB   float64 `json:"queryHeapMiB,omitempty"`
	OpenMs         float64 `json:"openMs"`
	OpenCPUMs      float64 `json:"openCpuMs"`
	// The first round of questions, which loads what they need (the
	// dictionaries bluge keeps once read, the blocks the cache keeps).
	QueryP50Ms float64 `json:"queryP50Ms"`
	QueryP95Ms float64 `json:"queryP95Ms"`
	QueryCPUMs float64 `json:"queryCpuMs"` // mean per query
	Queries    int     `json:"queries"`
	// The later rounds: the same questions for one more hit each time,
	// which the engine's query cache (keyed by the limit) does not answer.
	SteadyP50Ms float64 `json:"steadyP50Ms,omitempty"`
	SteadyCPUMs float64 `json:"steadyCpuMs,omitempty"`
	IndexMiB    float64 `json:"indexMiB"`
	// The build, when the tree had no index: its CPU time and the memory
	// of the engine that built it, after the build and the save.
	BuildCPUMs float64 `json:"buildCpuMs,omitempty"`
	BuildMiB   float64 `json:"buildMiB,omitempty"`
}

func main() {
	dir := flag.String("dir", "", "a tree of bench/scale's generator: DIR/tree and DIR/script.json")
	host := flag.String("host", "wazero", "native or wazero")
	wasm := flag.String("wasm", "dist/arbor.wasm", "the engine module (wazero)")
	rounds := flag.Int("rounds", 2, "times every question is asked, for one more hit each time (the query cache is keyed by the limit)")
	fixed := flag.Bool("fixed-time", false, "open with the script's fixed time, as bench/scale does (the catalog then trusts no listed time: every file is read again)")
	flag.Parse()
	if err := run(*dir, *host, *wasm, *rounds, *fixed); err != nil {
		fmt.Fprintln(os.Stderr, "bench/index/warm:", err)
		os.Exit(1)
	}
}

// caller sends raw requests to one engine.
type caller struct {
	call   func([]byte) ([]byte, error)
	memory func() float64 // MiB
	close  func()
	id     int
}

func (c *caller) do(method string, params any) (json.RawMessage, error) {
	c.id++
	req, err := json.Marshal(map[string]any{"id": c.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	out, err := c.call(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct{ Code, Message string }
	}
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if env.Error != nil {
		return nil, fmt.Errorf("%s: %s: %s", method, env.Error.Code, env.Error.Message)
	}
	return env.Result, nil
}

func newCaller(host, root, wasmPath string) (*caller, error) {
	switch host {
	case "native":
		fs, err := arborhost.NewRootFS(root)
		if err != nil {
			return nil, err
		}
		s := engine.NewSession(fs, nil)
		heap := func() float64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return float64(ms.HeapInuse) / (1 << 20)
		}
		return &caller{call: func(r []byte) ([]byte, error) { return s.Call(r), nil }, memory: heap, close: func() {}}, nil
	case "wazero":
		wasm, err := os.ReadFile(wasmPath)
		if err != nil {
			return nil, err
		}
		ctx := context.Background()
		e, err := hostrt.New(ctx, root, hostrt.WithWasm(wasm), hostrt.WithStderr(io.Discard))
		if err != nil {
			return nil, err
		}
		return &caller{
			call:   func(r []byte) ([]byte, error) { return e.Call(ctx, r) },
			memory: func() float64 { return float64(e.MemoryBytes()) / (1 << 20) },
			close:  func() { e.Close(ctx) },
		}, nil
	}
	return nil, fmt.Errorf("-host %q: want native or wazero", host)
}

func run(dir, host, wasmPath string, rounds int, fixed bool) error {
	var sc script
	b, err := os.ReadFile(filepath.Join(dir, "script.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		return err
	}
	root := filepath.Join(dir, "tree")
	open := map[string]any{}
	if fixed {
		open["fixedTime"] = sc.FixedTime
	}
	r := result{Host: host}
	if _, err := os.Stat(filepath.Join(root, ".arbor", "index")); err != nil {
		// Built in an engine of its own: its memory shows the build.
		c, err := newCaller(host, root, wasmPath)
		if err != nil {
			return err
		}
		cpu := measure.CPUTime()
		if _, err := c.do("open", open); err != nil {
			return err
		}
		if _, err := c.do("close", nil); err != nil {
			return err
		}
		r.BuildCPUMs, r.BuildMiB = ms(measure.CPUTime()-cpu), c.memory()
		c.close()
	}
	c, err := newCaller(host, root, wasmPath)
	if err != nil {
		return err
	}
	defer c.close()
	t, cpu := time.Now(), measure.CPUTime()
	if _, err := c.do("open", open); err != nil {
		return err
	}
	r.OpenMs, r.OpenCPUMs = ms(time.Since(t)), ms(measure.CPUTime()-cpu)
	openMem := c.memory()
	var first, steady []float64
	var firstCPU, steadyCPU time.Duration
	for round := range rounds {
		cpu := measure.CPUTime()
		for _, q := range sc.Queries {
			t := time.Now()
			if _, err := c.do("query", map[string]any{"query": q, "limit": sc.Limit + round}); err != nil {
				return err
			}
			if round == 0 {
				first = append(first, ms(time.Since(t)))
			} else {
				steady = append(steady, ms(time.Since(t)))
			}
		}
		if round == 0 {
			firstCPU = measure.CPUTime() - cpu
		} else {
			steadyCPU += measure.CPUTime() - cpu
		}
	}
	r.Queries = len(first)
	r.QueryCPUMs = ms(firstCPU) / float64(max(len(first), 1))
	r.QueryP50Ms, r.QueryP95Ms = measure.Percentile(first, 50), measure.Percentile(first, 95)
	if len(steady) > 0 {
		r.SteadyCPUMs = ms(steadyCPU) / float64(len(steady))
		r.SteadyP50Ms = measure.Percentile(steady, 50)
	}
	queryMem := c.memory()
	if host == "native" {
		r.OpenHeapMiB, r.QueryHeapMiB = openMem, queryMem
	} else {
		r.OpenLinearMiB, r.QueryLinearMiB = openMem, queryMem
	}
	if _, err := c.do("close", nil); err != nil {
		return err
	}
	r.IndexMiB = dirMiB(filepath.Join(root, ".arbor", "index"))
	return json.NewEncoder(os.Stdout).Encode(r)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func dirMiB(dir string) float64 {
	var n int64
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if fi, err := e.Info(); err == nil && !fi.IsDir() {
			n += fi.Size()
		}
	}
	return float64(n) / (1 << 20)
}
