// Command build measures how fast a memory root is built from nothing:
// the cold open of a tree of entries of about 10 KB (one LongMemEval-S chat
// session each) on a fresh root, which reads and parses every file, builds
// the catalog, analyzes and indexes every document and, at close, persists
// index and catalog. It reports entries per CPU-second natively
// (core/engine on the disk), and against a textbook BM25 indexer run in
// the same process on the same files (bluge with its defaults, one text
// field, in memory, as bench/retrieval's plain BM25 peer), and optionally
// under wazero (host/runtime, as the CLI runs it).
//
//	go run ./bench/build -longmemeval bench/data/longmemeval_s_dev.json.gz -n 2000 > /tmp/build.md
//
// -cpuprofile writes a CPU profile of each native build (file, file.2, …);
// -memprofile a profile of what the whole run allocated (the tree written
// through curate, every build, the peer's: focus on engine.Open).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/blugelabs/bluge"

	"github.com/arbormem/arbor/bench/internal/dataset"
	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
	arbor "github.com/arbormem/arbor/host/runtime"
)

func main() {
	lme := flag.String("longmemeval", "bench/data/longmemeval_s_dev.json.gz", "a file of the LongMemEval-S shape")
	n := flag.Int("n", 2000, "entries: the first n distinct sessions of the file (0: all of them)")
	runs := flag.Int("runs", 3, "builds per indexer (the median is reported)")
	wasm := flag.String("wasm", "", "also build under wazero with this module (dist/arbor.wasm); empty skips it")
	profile := flag.String("cpuprofile", "", "write a CPU profile of each native build to this file (file, file.2, …)")
	memProfile := flag.String("memprofile", "", "write a heap profile (allocations of every sample, -sample_index=alloc_space) at the end to this file")
	flag.Parse()
	if *memProfile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	err := run(*lme, *n, *runs, *wasm, *profile)
	if err == nil && *memProfile != "" {
		err = writeHeapProfile(*memProfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/build:", err)
		os.Exit(1)
	}
}

func run(lmePath string, n, runs int, wasmPath, profile string) error {
	qs, _, err := dataset.LoadLongMemEval(lmePath)
	if err != nil {
		return err
	}
	entries := sessions(qs, n)
	dir, err := os.MkdirTemp("", "arbor-bench-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files, size, err := write(dir, entries)
	if err != nil {
		return err
	}
	runtime.GC()

	var wasm []byte
	if wasmPath != "" {
		if wasm, err = os.ReadFile(wasmPath); err != nil {
			return err
		}
	}
	cache, err := os.MkdirTemp("", "arbor-bench-build-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)

	var native, nativeOpen, nativeClose, peer, onWasm samples
	var indexBytes int64
	var segments int
	var linear uint64
	for i := range runs {
		// Alternated, so that the machine's drift reaches every indexer.
		stop, err := measure.StartCPUProfile(profile, i+1)
		if err != nil {
			return err
		}
		o, c, err := buildNative(dir, len(entries), len(files))
		stop()
		if err != nil {
			return err
		}
		nativeOpen.add(o)
		nativeClose.add(c)
		native.add(o.plus(c))
		if indexBytes, err = dirSize(filepath.Join(dir, ".arbor")); err != nil {
			return err
		}
		segs, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(engine.IndexDir), "*.seg"))
		if err != nil {
			return err
		}
		segments = len(segs)
		s, err := buildPeer(dir, files)
		if err != nil {
			return err
		}
		peer.add(s)
		if wasm != nil {
			if i == 0 {
				if err := warmWasm(wasm, cache); err != nil {
					return err
				}
			}
			s, mem, err := buildWasm(dir, wasm, cache, len(files))
			if err != nil {
				return err
			}
			onWasm.add(s)
			linear = max(linear, mem)
		}
	}

	fmt.Printf("# Build rate on 10 KB entries\n\n")
	fmt.Printf("Command: `go run ./bench/build -longmemeval %s -n %d -runs %d", lmePath, n, runs)
	if wasmPath != "" {
		fmt.Printf(" -wasm %s", wasmPath)
	}
	fmt.Printf("` (%s, %s/%s, %d CPUs, %s).\n\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Tree: %d entries, one LongMemEval-S session each (the first %d distinct sessions of the file), "+
		"written by `curate`, and the %d `context.md` it writes in new folders: %d files, %.1f MiB of markdown, %.1f KB a file on average. "+
		"Persisted after the build (`.arbor/`: index, catalog): %.1f MiB, the index in %d segments.\n\n",
		len(entries), len(entries), len(files)-len(entries), len(files), float64(size)/(1<<20), float64(size)/float64(len(files))/1000, float64(indexBytes)/(1<<20), segments)
	fmt.Printf("A build is an open of the tree with no `.arbor/` (read, parse, catalog, analyze, index) and the close "+
		"that persists index and catalog. Medians of %d builds each, alternated; CPU time counts every thread "+
		"of the process (bluge's merges, the garbage collector).\n\n", runs)
	fmt.Printf("| indexer | wall | CPU | files per CPU-second | CPU / BM25's | allocated |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(name string, s samples) {
		fmt.Printf("| %s | %s | %s | %.0f | %.2f | %s |\n", name, ms(s.median(wallOf)), ms(s.median(cpuOf)),
			float64(len(files))/s.median(cpuOf).Seconds(), s.median(cpuOf).Seconds()/peer.median(cpuOf).Seconds(), mib(s.median(allocOf)))
	}
	row("Arbor native: open + close", native)
	row("… of which open", nativeOpen)
	row("… of which close (persist)", nativeClose)
	if wasm != nil {
		row("Arbor wasm (wazero): start + open + close", onWasm)
	}
	row("textbook BM25 (bluge defaults, one field, in memory)", peer)
	if wasm != nil {
		fmt.Printf("\nThe module's linear memory after the wasm build: %.0f MiB.\n", float64(linear)/(1<<20))
	}
	return nil
}

// entry is one file of the tree before it is written.
type entry struct {
	path, title string
	time        time.Time
	body        string
}

// sessions are the first n distinct sessions of qs (all when n ≤ 0), laid
// out as bench/retrieval lays out a LongMemEval-S haystack: one entry per
// session, its messages "**User:** …" / "**Assistant:** …", numbered across
// the whole file since sessions of many haystacks share a tree here.
func sessions(qs []*dataset.LMEQuestion, n int) []entry {
	seen := map[string]bool{}
	var out []entry
	for _, q := range qs {
		for i, msgs := range q.Sessions {
			if seen[q.SessionIDs[i]] {
				continue
			}
			seen[q.SessionIDs[i]] = true
			if n > 0 && len(out) == n {
				return out
			}
			date := dataset.ParseLMEDate(q.Dates[i])
			topic, title := "undated", "Chat"
			if !date.IsZero() {
				topic, title = date.Format("2006_01"), title+" on "+dataset.DayText(date)
			}
			parts := make([]string, len(msgs))
			for j, m := range msgs {
				who := strings.ToLower(strings.TrimSpace(m.Role))
				parts[j] = "**" + strings.ToUpper(who[:1]) + who[1:] + ":** " + strings.TrimSpace(m.Content)
			}
			out = append(out, entry{
				path:  fmt.Sprintf("chats/%s/session_%05d.md", topic, len(out)+1),
				title: title, time: date, body: strings.Join(parts, "\n\n"),
			})
		}
	}
	return out
}

// write makes the tree in dir through the engine's curate, so that the
// files are what Arbor writes, then removes .arbor/: every build starts
// from the markdown alone. It returns the paths of the tree's files (the
// entries and the context.md curate writes in each new folder) and their
// size.
func write(dir string, entries []entry) ([]string, int64, error) {
	root, err := arborhost.NewRootFS(dir)
	if err != nil {
		return nil, 0, err
	}
	e, _, err := engine.Open(engine.Options{FS: root})
	if err != nil {
		return nil, 0, err
	}
	const chunk = 500
	for start := 0; start < len(entries); start += chunk {
		var ops []api.Operation
		for _, en := range entries[start:min(start+chunk, len(entries))] {
			rc := &api.RawConcept{Task: "Chat with the assistant", Author: "user"}
			if !en.time.IsZero() {
				rc.Timestamp = en.time.UTC().Format(time.RFC3339)
			}
			ops = append(ops, api.Operation{Type: api.OpAdd, Path: en.path, Title: en.title, Reason: "conversation memory import",
				Content: api.Content{RawConcept: rc, Narrative: &api.Narrative{Text: en.body}}})
		}
		r := e.Curate(api.CurateParams{Operations: ops})
		if r.Summary.Added != len(ops) {
			e.Close()
			return nil, 0, fmt.Errorf("curate added %d of %d entries: %+v", r.Summary.Added, len(ops), r.Applied[0])
		}
	}
	if err := e.Close(); err != nil {
		return nil, 0, err
	}
	var files []string
	var size int64
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".arbor" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, p)
			size += fi.Size()
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(files) < len(entries) {
		return nil, 0, fmt.Errorf("the tree holds %d files for %d entries", len(files), len(entries))
	}
	return files, size, os.RemoveAll(filepath.Join(dir, ".arbor"))
}

// buildNative opens dir without .arbor/ through core/engine and closes it,
// which persists the index and the catalog.
func buildNative(dir string, entries, files int) (open, close sample, err error) {
	if err := os.RemoveAll(filepath.Join(dir, ".arbor")); err != nil {
		return sample{}, sample{}, err
	}
	root, err := arborhost.NewRootFS(dir)
	if err != nil {
		return sample{}, sample{}, err
	}
	t := begin()
	e, res, err := engine.Open(engine.Options{FS: root})
	if err != nil {
		return sample{}, sample{}, err
	}
	open = t.end()
	if res.Index.Indexed != files || res.Entries != entries {
		e.Close()
		return sample{}, sample{}, fmt.Errorf("the build indexed %d documents and %d entries of %d files and %d entries", res.Index.Indexed, res.Entries, files, entries)
	}
	t = begin()
	if err := e.Close(); err != nil {
		return sample{}, sample{}, err
	}
	close = t.end()
	// The manifest a save writes last (docs/format.md, ".arbor/").
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(engine.IndexDir), "manifest.bin")); err != nil {
		return sample{}, sample{}, fmt.Errorf("the build persisted no index: %w", err)
	}
	return open, close, nil
}

// buildWasm is buildNative under wazero: start the module (its compiled
// code from cache), open, close. It also returns the size of the module's
// linear memory after the open, which never shrinks: its peak.
func buildWasm(dir string, wasm []byte, cache string, files int) (sample, uint64, error) {
	if err := os.RemoveAll(filepath.Join(dir, ".arbor")); err != nil {
		return sample{}, 0, err
	}
	ctx := context.Background()
	t := begin()
	e, err := arbor.New(ctx, dir, arbor.WithWasm(wasm), arbor.WithCacheDir(cache), arbor.WithStderr(io.Discard))
	if err != nil {
		return sample{}, 0, err
	}
	res, err := e.Open(ctx, api.OpenParams{})
	if err != nil {
		e.Close(ctx)
		return sample{}, 0, err
	}
	mem := e.MemoryBytes()
	if err := e.Close(ctx); err != nil {
		return sample{}, 0, err
	}
	s := t.end()
	if res.Index.Indexed != files {
		return sample{}, 0, fmt.Errorf("the wasm build indexed %d documents of %d files", res.Index.Indexed, files)
	}
	return s, mem, nil
}

// warmWasm compiles the module into the cache, on an empty root: the
// builds start from compiled code, as the CLI's do after its first run.
func warmWasm(wasm []byte, cache string) error {
	root, err := os.MkdirTemp("", "arbor-bench-build-empty-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	ctx := context.Background()
	e, err := arbor.New(ctx, root, arbor.WithWasm(wasm), arbor.WithCacheDir(cache), arbor.WithStderr(io.Discard))
	if err != nil {
		return err
	}
	return e.Close(ctx)
}

// buildPeer is the textbook BM25 indexer on the same files: each file's
// bytes read and indexed whole as one text field by bluge with its
// defaults (the standard analyzer: Unicode words, lower case), in memory,
// in one batch, as bench/retrieval builds its plain BM25 peer.
func buildPeer(dir string, files []string) (sample, error) {
	t := begin()
	w, err := bluge.OpenWriter(bluge.InMemoryOnlyConfig())
	if err != nil {
		return sample{}, err
	}
	b := bluge.NewBatch()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			w.Close()
			return sample{}, err
		}
		rel, _ := filepath.Rel(dir, f)
		d := bluge.NewDocument(filepath.ToSlash(rel))
		d.AddField(bluge.NewTextField("content", string(data)))
		b.Update(d.ID(), d)
	}
	if err := w.Batch(b); err != nil {
		w.Close()
		return sample{}, err
	}
	r, err := w.Reader()
	if err != nil {
		w.Close()
		return sample{}, err
	}
	count, err := r.Count()
	r.Close()
	if err := w.Close(); err != nil {
		return sample{}, err
	}
	s := t.end()
	if err != nil || count != uint64(len(files)) {
		return sample{}, fmt.Errorf("the BM25 peer indexed %d documents of %d: %v", count, len(files), err)
	}
	return s, nil
}

// sample is one measurement: wall time, the process's CPU time, and the
// bytes the Go heap allocated meanwhile.
type sample struct {
	wall, cpu time.Duration
	alloc     uint64
}

func (s sample) plus(o sample) sample {
	return sample{s.wall + o.wall, s.cpu + o.cpu, s.alloc + o.alloc}
}

type timer struct {
	wall  time.Time
	cpu   time.Duration
	alloc uint64
}

func begin() timer {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return timer{time.Now(), measure.CPUTime(), m.TotalAlloc}
}

func (t timer) end() sample {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return sample{time.Since(t.wall), measure.CPUTime() - t.cpu, m.TotalAlloc - t.alloc}
}

type samples []sample

func (ss *samples) add(s sample) { *ss = append(*ss, s) }

func wallOf(s sample) time.Duration  { return s.wall }
func cpuOf(s sample) time.Duration   { return s.cpu }
func allocOf(s sample) time.Duration { return time.Duration(s.alloc) }

func (ss samples) median(f func(sample) time.Duration) time.Duration {
	xs := make([]time.Duration, len(ss))
	for i, s := range ss {
		xs[i] = f(s)
	}
	slices.SortFunc(xs, cmp.Compare)
	return xs[len(xs)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func mib(d time.Duration) string { return fmt.Sprintf("%.0f MiB", float64(d)/(1<<20)) }

func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func dirSize(dir string) (int64, error) {
	var size int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			size += fi.Size()
		}
		return err
	})
	return size, err
}
