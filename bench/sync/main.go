// Command sync measures a sync of a large memory root through git (issue
// 19): two roots of one generated tree and a bare file remote; entries
// changed on one side are synced to the other, and the bench checks that
// the other side's engine reads again and re-indexes those entries and no
// others, and times the sync's phases (host/gitsync's steps) and the
// engine's catching up. It prints a markdown report on stdout.
//
//	go run ./bench/sync -n 10000 -changed 10 > bench/sync/REPORT.md
//
// The engine is core/engine in process, the code the wasm module runs
// (the CLI and the MCP server run it under wazero, slower by a constant
// factor); the sync is host/gitsync, the code arbor sync and arbor-sync
// run, with the core's merge.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/arbormem/arbor/bench/internal/gentree"
	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
	"github.com/arbormem/arbor/host/gitsync"
)

func main() {
	n := flag.Int("n", 10000, "entries to generate (approximately: whole copies of the example tree)")
	changed := flag.Int("changed", 10, "entries changed on one side between syncs")
	src := flag.String("src", "examples/notes", "the tree to repeat")
	runs := flag.Int("runs", 3, "repetitions per case (the median is reported)")
	flag.Parse()
	if err := run(*n, *changed, *src, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/sync:", err)
		os.Exit(1)
	}
}

// merger is the core's merge, as gitsync.Merger.
type merger struct{}

func (merger) Merge(_ context.Context, p api.MergeParams) (api.MergeResult, error) {
	return engine.Merge(p)
}

// phases are the sync's steps, then the engine's catching up.
var phases = []string{"setup", gitsync.PhaseCommit, gitsync.PhaseFetch, gitsync.PhaseMerge, gitsync.PhasePush, "engine"}

// sample is one sync: the wall and CPU time of each phase, and what the
// engine did after it.
type sample struct {
	wall, cpu map[string]time.Duration
	rep       gitsync.Report
	refresh   api.RefreshResult
	open      api.IndexStats
}

func (s sample) total(m map[string]time.Duration) time.Duration {
	var t time.Duration
	for _, d := range m {
		t += d
	}
	return t
}

// syncTimed syncs root, timing each step from its start to the next's.
func syncTimed(root, remote string) (sample, error) {
	s := sample{wall: map[string]time.Duration{}, cpu: map[string]time.Duration{}}
	phase, wall, cpu := "setup", time.Now(), measure.CPUTime()
	next := func(p string) {
		s.wall[phase] += time.Since(wall)
		s.cpu[phase] += measure.CPUTime() - cpu
		phase, wall, cpu = p, time.Now(), measure.CPUTime()
	}
	rep, err := gitsync.Sync(context.Background(), root, merger{}, gitsync.Options{Remote: remote, Progress: func(st gitsync.Step) { next(st.Phase) }})
	next("engine")
	s.rep = rep
	return s, err
}

// edit appends a line to k entries of root, from the i-th on (every
// 97th entry, so that they are spread over the tree), and returns them.
func edit(root string, entries []string, from, k int, what string) ([]string, error) {
	var out []string
	for j := range k {
		p := entries[(from+j*97)%len(entries)]
		f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(p)), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintf(f, "\n%s %d.\n", what, from)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

func run(n, k int, src string, runs int) error {
	dir, err := os.MkdirTemp("", "arbor-bench-sync-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	a, b, remote := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "team.git")
	count, size, err := gentree.Repeat(src, a, n)
	if err != nil {
		return err
	}
	if _, err := git.PlainInit(remote, true); err != nil {
		return err
	}
	if err := os.MkdirAll(b, 0o755); err != nil {
		return err
	}
	var entries []string
	err = filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "context.md" {
			r, _ := filepath.Rel(a, p)
			entries = append(entries, filepath.ToSlash(r))
		}
		return err
	})
	if err != nil {
		return err
	}

	fmt.Printf("# Sync of a tree of %d files: what is read again, and where the time goes\n\n", n)
	fmt.Printf("Command: `go run ./bench/sync -n %d -changed %d -runs %d` (%s, %s/%s, %d CPUs, %s).\n\n",
		n, k, runs, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Tree: %s repeated, %d markdown files (%d entries, the rest context.md), %.1f MiB; two roots, a and b, and a bare file remote.\n\n", src, count, len(entries), float64(size)/(1<<20))

	// Root a pushes the whole tree; b starts from the remote.
	first, err := syncTimed(a, remote)
	if err != nil {
		return fmt.Errorf("a's first sync: %w", err)
	}
	clone, err := syncTimed(b, remote)
	if err != nil {
		return fmt.Errorf("b's first sync: %w", err)
	}
	if clone.rep.Merge != "fast-forward" || len(clone.rep.Changed) != count {
		return fmt.Errorf("b's first sync: %s, %d files", clone.rep.Merge, len(clone.rep.Changed))
	}
	fsB, err := arborhost.NewRootFS(b)
	if err != nil {
		return err
	}
	t, c := time.Now(), measure.CPUTime()
	eng, open, err := engine.Open(engine.Options{FS: fsB})
	if err != nil {
		return err
	}
	coldWall, coldCPU := time.Since(t), measure.CPUTime()-c
	if open.Index.Indexed != count {
		return fmt.Errorf("b's first open indexed %d of %d", open.Index.Indexed, count)
	}
	fmt.Printf("Setting up: a's first sync (commit and push of %d files) took %s (CPU %s); b's (fetch, fast-forward, %d files written) %s (CPU %s); b's engine then indexed the tree in %s (CPU %s).\n\n",
		count, ms(first.total(first.wall)), ms(first.total(first.cpu)), count, ms(clone.total(clone.wall)), ms(clone.total(clone.cpu)), ms(coldWall), ms(coldCPU))

	// The cases, each run runs times with fresh edits.
	type result struct {
		name    string
		samples []sample
	}
	var results []result
	pass := 0
	// 1. b's engine stays open (an MCP server): after the sync it reads
	// again the files the sync changed.
	// 2. b's engine is closed during the sync (the CLI): the next open
	// finds what changed by the files' size and time.
	// 3. Both sides changed k entries: b's sync merges, and its engine
	// reads a's k entries again (its own it has read already).
	// 4. Nothing changed anywhere: what a sync costs on its own.
	for _, c := range []string{"long-lived engine: refresh", "fresh engine: open", "both sides changed: merge, refresh", "nothing changed"} {
		r := result{name: c}
		for range runs {
			pass++
			var want, own []string
			if !strings.HasPrefix(c, "nothing") {
				if want, err = edit(a, entries, pass*7, k, "Changed on a, pass"); err != nil {
					return err
				}
				if _, err := syncTimed(a, remote); err != nil {
					return fmt.Errorf("a's sync: %w", err)
				}
			}
			if strings.HasPrefix(c, "both") {
				if own, err = edit(b, entries, pass*7+3, k, "Changed on b, pass"); err != nil {
					return err
				}
				// b's engine reads its own edits first, as its watch
				// would have.
				if _, err := eng.Refresh(api.RefreshParams{Paths: own}); err != nil {
					return err
				}
			}
			fresh := strings.HasPrefix(c, "fresh")
			if fresh {
				if err := eng.Close(); err != nil {
					return err
				}
			}
			s, err := syncTimed(b, remote)
			if err != nil {
				return fmt.Errorf("b's sync (%s): %w", c, err)
			}
			wantMerge := map[bool]string{true: "fast-forward", false: "none"}[want != nil]
			if own != nil {
				wantMerge = "merge"
			}
			if s.rep.Merge != wantMerge || !slices.Equal(s.rep.Changed, want) {
				return fmt.Errorf("b's sync (%s): %s, changed %v, want %s %v", c, s.rep.Merge, s.rep.Changed, wantMerge, want)
			}
			t, cpu := time.Now(), measure.CPUTime()
			if fresh {
				eng, open, err = engine.Open(engine.Options{FS: fsB})
				if err != nil {
					return err
				}
				s.open = open.Index
				if open.Index.Indexed != len(want) || open.Index.Reused != count-len(want) {
					return fmt.Errorf("open after the sync: %+v, %d files changed", open.Index, len(want))
				}
			} else if len(s.rep.Changed) > 0 {
				if s.refresh, err = eng.Refresh(api.RefreshParams{Paths: s.rep.Changed}); err != nil {
					return err
				}
				if s.refresh.Checked != len(want) || s.refresh.Updated != len(want) || s.refresh.Scanned {
					return fmt.Errorf("refresh after the sync: %+v, %d files changed", s.refresh, len(want))
				}
			}
			s.wall["engine"] += time.Since(t)
			s.cpu["engine"] += measure.CPUTime() - cpu
			r.samples = append(r.samples, s)
			if own != nil {
				// a takes b's side too, so that the next case starts even.
				if _, err := syncTimed(a, remote); err != nil {
					return err
				}
			}
		}
		results = append(results, r)
	}
	if err := eng.Close(); err != nil {
		return err
	}

	fmt.Printf("Each case ran %d times with fresh edits (every 97th entry, a line appended); the median is shown, wall time then CPU time of the process. ", runs)
	fmt.Printf("`read again` is what b's engine read after the sync: for a long-lived engine the refresh of the files the sync changed (`checked`, of which `updated`), for a fresh one the open's index (`indexed`, and `reused`).\n\n")
	fmt.Printf("| case | read again | %s | total |\n| --- | --- |%s ---: |\n", strings.Join(phases, " | "), strings.Repeat(" ---: |", len(phases)))
	for _, r := range results {
		s := r.samples[0]
		read := "—"
		switch {
		case s.open != (api.IndexStats{}):
			read = fmt.Sprintf("indexed %d, reused %d", s.open.Indexed, s.open.Reused)
		case s.refresh.Checked > 0:
			read = fmt.Sprintf("checked %d, updated %d", s.refresh.Checked, s.refresh.Updated)
		}
		fmt.Printf("| %s (%s) | %s |", r.name, s.rep.Merge, read)
		for _, p := range phases {
			fmt.Printf(" %s |", median(r.samples, func(s sample) (time.Duration, time.Duration) { return s.wall[p], s.cpu[p] }))
		}
		fmt.Printf(" %s |\n", median(r.samples, func(s sample) (time.Duration, time.Duration) { return s.total(s.wall), s.total(s.cpu) }))
	}
	fmt.Println()
	return nil
}

// median formats the median wall and CPU times of the samples.
func median(ss []sample, f func(sample) (time.Duration, time.Duration)) string {
	var w, c []float64
	for _, s := range ss {
		x, y := f(s)
		w, c = append(w, float64(x)), append(c, float64(y))
	}
	if slices.Max(w) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s<br>%s", ms(time.Duration(measure.Percentile(w, 50))), ms(time.Duration(measure.Percentile(c, 50))))
}

func ms(d time.Duration) string {
	if d < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
