package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// benchTree copies examples/notes copies times into a MemFS, each copy made
// distinct by a line, as bench/index does on disk; 0 copies is the tree
// once, as it is, where every relation by path still resolves. Its files
// are dated a day before benchNow, as files on disk are, so that their
// sizes and times can stand for their bytes (catalog.Catalog.Note).
func benchTree(b testing.TB, copies int) *host.MemFS {
	b.Helper()
	src := filepath.Join("..", "..", "examples", "notes")
	mfs := host.NewMemFS()
	clock := benchNow.Add(-24 * time.Hour)
	mfs.SetNow(func() int64 { return clock.UnixMilli() })
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if copies == 0 {
			return mfs.WriteFile(filepath.ToSlash(rel), data)
		}
		for k := range copies {
			out := fmt.Sprintf("c%03d/%s", k, filepath.ToSlash(rel))
			content := data
			if d.Name() != "context.md" {
				content = append(append([]byte(nil), data...), fmt.Sprintf("\nCopy %d, marker m%d.\n", k, k)...)
			}
			if err := mfs.WriteFile(out, content); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	clock = benchNow
	return mfs
}

// benchNow is the clock of the open benchmarks' trees once written.
var benchNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkOpenCatalog opens trees of about 5k and 20k files (entries and
// context.md): unchanged since the last close, with 1 % of the files
// edited before each open, and cold (no .arbor/ at all). reads/op counts
// the tree's files each open reads: none when nothing changed
// (bench/index/REPORT.md).
func BenchmarkOpenCatalog(b *testing.B) {
	for _, copies := range []int{67, 267} {
		mfs := benchTree(b, copies)
		files := 0
		for p := range mfs.Files() {
			if !strings.HasPrefix(p, ".arbor/") {
				files++
			}
		}
		// Each open is a minute after the last, and a minute after the
		// storage's time of the edits before it: files written just before
		// an open are not trusted by their times (catalog Note).
		at := benchNow
		mfs.SetNow(func() int64 { return at.UnixMilli() })
		open := func(b *testing.B, fs host.FS) api.OpenResult {
			at = at.Add(time.Minute)
			e, res, err := Open(Options{FS: fs, Clock: host.FixedClock(at.Add(time.Minute))})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Close(); err != nil {
				b.Fatal(err)
			}
			return res
		}
		reads := &treeReads{FS: mfs}
		report := func(b *testing.B, n int) {
			b.ReportMetric(float64(len(reads.paths))/float64(n), "reads/op")
		}
		b.Run(fmt.Sprintf("files=%d/unchanged", files), func(b *testing.B) {
			open(b, mfs)
			reads.paths = nil
			n := 0
			for b.Loop() {
				open(b, reads)
				n++
			}
			report(b, n)
		})
		b.Run(fmt.Sprintf("files=%d/changed1pct", files), func(b *testing.B) {
			var paths []string
			for p := range mfs.Files() {
				if strings.HasSuffix(p, ".md") && !strings.HasSuffix(p, "context.md") && !strings.HasPrefix(p, ".arbor/") {
					paths = append(paths, p)
				}
			}
			sort.Strings(paths)
			open(b, mfs)
			reads.paths = nil
			n := 0
			for b.Loop() {
				b.StopTimer()
				for i := n % 100; i < len(paths); i += 100 {
					data, _ := mfs.ReadFile(paths[i])
					mfs.WriteFile(paths[i], append(data, fmt.Sprintf("Edited before open %d.\n", n)...))
				}
				b.StartTimer()
				open(b, reads)
				n++
			}
			report(b, n)
		})
		b.Run(fmt.Sprintf("files=%d/cold", files), func(b *testing.B) {
			reads.paths = nil
			n := 0
			for b.Loop() {
				b.StopTimer()
				for p := range mfs.Files() {
					if strings.HasPrefix(p, ".arbor/") {
						mfs.Remove(p)
					}
				}
				b.StartTimer()
				open(b, reads)
				n++
			}
			report(b, n)
		})
	}
}

// BenchmarkOpenPersisted is an open with an up-to-date persisted index:
// what remains is reading and parsing the tree (bench/index/REPORT.md).
func BenchmarkOpenPersisted(b *testing.B) {
	mfs := benchTree(b, 10)
	e, _, err := Open(Options{FS: mfs})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		e, res, err := Open(Options{FS: mfs})
		if err != nil {
			b.Fatal(err)
		}
		if res.Index.Indexed != 0 {
			b.Fatalf("persisted open indexed %d documents", res.Index.Indexed)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
