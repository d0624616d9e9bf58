// Command ingest measures ingesting one large markdown file whose text
// sits under a single heading: natively through core/engine (in process,
// a MemFS) and through the CLI (bin/arbor: wasm under wazero, on disk). It
// generates the files — prose paragraphs, and short lines without a blank
// line between them (a log pasted under a heading) — and prints a markdown
// report on stdout: wall time, CPU time, and memory (the native heap's
// peak, sampled, and the CLI process's maximum resident set).
//
//	go run ./bench/ingest -mb 7 -cli bin/arbor > /tmp/ingest.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
)

func main() {
	mb := flag.Float64("mb", 7, "size of each generated file, in MiB")
	cli := flag.String("cli", "bin/arbor", "the CLI to time; empty skips it")
	runs := flag.Int("runs", 3, "repetitions per measurement (the median is reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the native ingests to this file")
	flag.Parse()
	if *cpuprofile != "" {
		// The native engine runs the code the wasm module runs, about six
		// times faster: its profile shows where the CLI's time goes.
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/ingest:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(int(*mb*(1<<20)), *cli, *runs); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench/ingest:", err)
		os.Exit(1)
	}
}

// shape is one generated file.
type shape struct {
	name, what string
	text       string
}

func run(size int, cli string, runs int) error {
	dir, err := os.MkdirTemp("", "arbor-bench-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	shapes := []shape{
		{"paragraphs", "prose paragraphs of about 200 bytes, a blank line apart", generate(size, 30, "\n\n")},
		{"lines", "lines of about 60 bytes, no blank line", generate(size, 9, "\n")},
	}
	fmt.Printf("# Ingesting one large section\n\n")
	fmt.Printf("Command: `go run ./bench/ingest -mb %g -cli %s -runs %d` (%s, %s/%s, %d CPUs, %s).\n\n",
		float64(size)/(1<<20), cli, runs, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Each file is `# Notes` and %.1f MiB of text under it, ingested into an empty memory. Medians of %d runs; CPU time counts every thread.\n\n", float64(size)/(1<<20), runs)
	fmt.Printf("| file | entries | native wall | native CPU | native peak heap | CLI wall | CLI CPU | CLI max RSS |\n")
	fmt.Printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range shapes {
		var nat, com measures
		entries := 0
		for range runs {
			n, m, err := native(s)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			entries = n
			nat.add(m)
		}
		cliCells := "| | | "
		if cli != "" {
			file := filepath.Join(dir, s.name+".md")
			if err := os.WriteFile(file, []byte(s.text), 0o644); err != nil {
				return err
			}
			for i := range runs {
				m, err := viaCLI(cli, filepath.Join(dir, fmt.Sprintf("root_%s_%d", s.name, i)), file)
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				com.add(m)
			}
			cliCells = fmt.Sprintf("| %s | %s | %s ", secs(com.median(0)), secs(com.median(1)), mib(com.median(2)))
		}
		fmt.Printf("| %s: %s | %d | %s | %s | %s %s|\n", s.name, s.what, entries, secs(nat.median(0)), secs(nat.median(1)), mib(nat.median(2)), cliCells)
	}
	return nil
}

// generate makes "# Notes" followed by size bytes of pieces of words
// words each, joined by sep: words from a fixed list in a fixed
// pseudo-random order, so that every run indexes the same text.
func generate(size, words int, sep string) string {
	vocab := strings.Fields("invoice retry policy the a queue broker message lost Lisbon team meeting " +
		"decided to move deploy canary traffic percent minutes rollback on error budget alert " +
		"page owner weekly review notes customer refund approval finance limit escalate after " +
		"three days weather sunny rain tea coffee plan ship May June release version build test " +
		"flaky cache index search query answer memory tree entry folder context reason fact")
	var b strings.Builder
	b.WriteString("# Notes\n\n")
	r := uint32(1)
	for n := 0; b.Len() < size; n++ {
		if n > 0 {
			b.WriteString(sep)
		}
		for w := range words {
			if w > 0 {
				b.WriteByte(' ')
			}
			r = r*1664525 + 1013904223
			b.WriteString(vocab[int(r>>16)%len(vocab)])
		}
		fmt.Fprintf(&b, " %d.", n)
	}
	b.WriteByte('\n')
	return b.String()
}

// native ingests the file into a fresh in-memory root and returns the
// entries it made, with wall time, CPU time and the heap's peak (sampled
// every millisecond) of the call.
func native(s shape) (int, [3]time.Duration, error) {
	e, _, err := engine.Open(engine.Options{FS: host.NewMemFS()})
	if err != nil {
		return 0, [3]time.Duration{}, err
	}
	defer e.Close()
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	cpu0, t0 := measure.CPUTime(), time.Now()
	res, err := e.Ingest(api.IngestParams{Files: []api.SourceFile{{Name: "notes.md", Content: s.text}}})
	wall, cpu := time.Since(t0), measure.CPUTime()-cpu0
	if cpu0 < 0 {
		cpu = -1
	}
	close(done)
	<-sampled
	if err != nil {
		return 0, [3]time.Duration{}, err
	}
	if f := res.Files[0]; f.Status != api.IngestAdded || f.Failed != 0 {
		return 0, [3]time.Duration{}, fmt.Errorf("ingest: %+v", res.Summary)
	}
	return res.Summary.Added, [3]time.Duration{wall, cpu, time.Duration(peak.Load())}, nil
}

// viaCLI makes a memory root at root and ingests file into it with the
// CLI, returning the wall time, CPU time and maximum resident set (in
// bytes) of the ingest process.
func viaCLI(cli, root, file string) ([3]time.Duration, error) {
	if out, err := exec.Command(cli, "init", root).CombinedOutput(); err != nil {
		return [3]time.Duration{}, fmt.Errorf("%s init: %v: %s", cli, err, out)
	}
	cmd := exec.Command(cli, "--root", root, "ingest", file)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return [3]time.Duration{}, fmt.Errorf("%s ingest: %v: %s", cli, err, out.String())
	}
	wall := time.Since(t0)
	return [3]time.Duration{wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), time.Duration(measure.MaxRSS(cmd.ProcessState))}, nil
}

// measures are the runs of one measurement: wall time, CPU time, and a
// size in bytes (kept in a Duration to share the median).
type measures [3][]time.Duration

func (m *measures) add(v [3]time.Duration) {
	for i := range v {
		m[i] = append(m[i], v[i])
	}
}

func (m *measures) median(i int) time.Duration {
	s := slices.Clone(m[i])
	slices.Sort(s)
	return s[len(s)/2]
}

func secs(d time.Duration) string {
	if d < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mib(d time.Duration) string {
	if d <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB", float64(d)/(1<<20))
}
