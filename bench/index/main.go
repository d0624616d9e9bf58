// Command index measures opening a large memory root with and without the
// persisted search index (.arbor/index): natively through core/engine, and
// through the CLI (bin/arbor: wasm under wazero). It generates the tree by
// repeating examples/notes under numbered domains, each copy made distinct
// by a generated line, and prints a markdown report on stdout.
//
//	go run ./bench/index -n 5000 -cli bin/arbor > bench/index/REPORT.md
//
// -cpuprofile writes a CPU profile of the native opens with the persisted
// index, the case the tree's parsing dominates.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/bench/internal/gentree"
	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
)

func main() {
	n := flag.Int("n", 5000, "entries to generate (approximately: whole copies of the example tree)")
	src := flag.String("src", "examples/notes", "the tree to repeat")
	cli := flag.String("cli", "bin/arbor", "the CLI to time; empty skips it")
	runs := flag.Int("runs", 3, "repetitions per measurement (the median is reported)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the native opens with the persisted index to this file")
	flag.Parse()
	if err := run(*n, *src, *cli, *runs, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "bench/index:", err)
		os.Exit(1)
	}
}

func run(n int, src, cli string, runs int, profile string) error {
	dir, err := os.MkdirTemp("", "arbor-bench-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	entries, bytesTotal, err := gentree.Repeat(src, dir, n)
	if err != nil {
		return err
	}
	root, err := arborhost.NewRootFS(dir)
	if err != nil {
		return err
	}
	indexDir := filepath.Join(dir, filepath.FromSlash(engine.IndexDir))
	dropIndex := func() error { return os.RemoveAll(indexDir) }

	fmt.Printf("# Persisted index: open time, cold rebuild vs persisted\n\n")
	fmt.Printf("Command: `go run ./bench/index -n %d -cli %s -runs %d` (%s, %s/%s, %d CPUs, %s).\n\n",
		n, cli, runs, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Tree: %s repeated, %d markdown files (entries and context.md), %.1f MiB.\n\n", src, entries, float64(bytesTotal)/(1<<20))

	// Native: open, close (which persists), reopen.
	var cold, closeT, warm, edited, curateT, flushT timings
	var res api.OpenResult
	for run := range runs {
		if err := dropIndex(); err != nil {
			return err
		}
		t := start()
		e, r, err := engine.Open(engine.Options{FS: root})
		if err != nil {
			return err
		}
		cold.add(t)
		if r.Index.Indexed != entries {
			return fmt.Errorf("cold open indexed %d of %d", r.Index.Indexed, entries)
		}
		t = start()
		if err := e.Close(); err != nil {
			return err
		}
		closeT.add(t)

		stop, err := measure.StartCPUProfile(profile, run+1)
		if err != nil {
			return err
		}
		t = start()
		e, res, err = engine.Open(engine.Options{FS: root})
		if err != nil {
			return err
		}
		warm.add(t)
		stop()
		if res.Index.Reused != entries {
			return fmt.Errorf("persisted open reused %d of %d", res.Index.Reused, entries)
		}

		// One curate (one new entry), then its flush.
		t = start()
		cr := e.Curate(api.CurateParams{Operations: []api.Operation{addOp(len(curateT.wall))}})
		curateT.add(t)
		if cr.Summary.Added != 1 {
			return fmt.Errorf("curate: %+v", cr.Applied)
		}
		t = start()
		if _, err := e.Flush(); err != nil {
			return err
		}
		flushT.add(t)
		if err := e.Close(); err != nil {
			return err
		}

		// One file edited on disk between opens.
		if err := touch(dir, len(edited.wall)); err != nil {
			return err
		}
		t = start()
		e, r, err = engine.Open(engine.Options{FS: root})
		if err != nil {
			return err
		}
		edited.add(t)
		if r.Index.Indexed != 1 {
			return fmt.Errorf("open after an edit indexed %d", r.Index.Indexed)
		}
		if err := e.Close(); err != nil {
			return err
		}
		if err := removeCurated(dir); err != nil {
			return err
		}
	}
	size, files, err := dirSize(indexDir)
	if err != nil {
		return err
	}
	fmt.Printf("Persisted index: %.1f MiB in %d files.\n\n", float64(size)/(1<<20), files)
	fmt.Printf("| native (core/engine, in process) | median of %d | CPU time |\n| --- | ---: | ---: |\n", runs)
	fmt.Printf("| open, no persisted index (cold rebuild) | %s |\n", cold)
	fmt.Printf("| close after the cold open (writes the index) | %s |\n", closeT)
	fmt.Printf("| open with the persisted index | %s |\n", warm)
	fmt.Printf("| open with the persisted index, one file edited | %s |\n", edited)
	fmt.Printf("| curate one ADD | %s |\n", curateT)
	fmt.Printf("| flush after that curate | %s |\n\n", flushT)

	if cli == "" {
		return nil
	}
	// The CLI: every command opens the root in a fresh process (wasm under
	// wazero, compiled module cached) and closes it, which persists.
	stats := func(ts *timings) error {
		t := time.Now()
		cmd := exec.Command(cli, "--root", dir, "stats")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s stats: %v: %s", cli, err, stderr.String())
		}
		if ts != nil {
			ts.wall = append(ts.wall, time.Since(t))
			ts.cpu = append(ts.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		return nil
	}
	if err := stats(nil); err != nil { // warms the compilation cache
		return err
	}
	var cliCold, cliWarm timings
	for range runs {
		if err := dropIndex(); err != nil {
			return err
		}
		if err := stats(&cliCold); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(indexDir, "manifest.bin")); err != nil {
			return fmt.Errorf("the CLI did not persist the index: %w", err)
		}
		if err := stats(&cliWarm); err != nil {
			return err
		}
	}
	fmt.Printf("| CLI (`%s stats`, whole process) | median of %d | CPU time |\n| --- | ---: | ---: |\n", cli, runs)
	fmt.Printf("| no persisted index (cold rebuild, then persist at close) | %s |\n", cliCold)
	fmt.Printf("| persisted index | %s |\n", cliWarm)
	return nil
}

// timings are the wall-clock and CPU times of the runs of one measurement.
// CPU time (all threads of the process) is steadier than wall time on a
// machine shared with other jobs.
type timings struct{ wall, cpu []time.Duration }

// stamp is when a measurement started.
type stamp struct {
	wall time.Time
	cpu  time.Duration
}

func start() stamp { return stamp{time.Now(), measure.CPUTime()} }

func (ts *timings) add(s stamp) {
	ts.wall = append(ts.wall, time.Since(s.wall))
	cpu := time.Duration(-1)
	if s.cpu >= 0 {
		cpu = measure.CPUTime() - s.cpu
	}
	ts.cpu = append(ts.cpu, cpu)
}

// String is the table cells: the medians of wall and CPU time.
func (ts timings) String() string {
	cpu := "n/a"
	if ts.cpu[0] >= 0 {
		cpu = ms(ts.cpu)
	}
	return ms(ts.wall) + " | " + cpu
}

func addOp(i int) api.Operation {
	return api.Operation{Type: "ADD", Path: "benchmark/curate", Title: fmt.Sprintf("Benchmark note %d", i),
		Content: api.Content{Keywords: []string{"benchmark"}}, Reason: "bench/index measures curate and flush"}
}

// touch edits one generated entry on disk.
func touch(dir string, i int) error {
	var target string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && target == "" && !d.IsDir() && strings.HasSuffix(p, ".md") && filepath.Base(p) != "context.md" && !strings.Contains(p, ".arbor") {
			target = p
		}
		return err
	})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "Edited between opens, pass %d.\n", i); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeCurated deletes the folder curate wrote into, so each run starts
// from the same tree.
func removeCurated(dir string) error {
	return os.RemoveAll(filepath.Join(dir, "benchmark"))
}

func dirSize(dir string) (size int64, files int, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			size += fi.Size()
			files++
		}
		return err
	})
	return size, files, err
}

func ms(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%.0f ms", float64(s[len(s)/2].Microseconds())/1000)
}
