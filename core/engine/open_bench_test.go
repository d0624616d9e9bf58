package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// benchTree copies examples/notes copies times into a MemFS, each copy made
// distinct by a line, as bench/index does on disk.
func benchTree(b *testing.B, copies int) *host.MemFS {
	b.Helper()
	src := filepath.Join("..", "..", "examples", "notes")
	mfs := host.NewMemFS()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
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
	return mfs
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
