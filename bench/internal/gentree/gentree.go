// Package gentree generates large memory roots for the benchmarks by
// repeating a small tree (examples/notes).
package gentree

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Repeat copies the markdown files of src into dir until there are about
// n of them (whole copies of src), copy k of each domain in c<k>_<domain>,
// appending a line that makes each copy's text distinct, and makes dir
// a memory root (.arbor/). It returns the files written and their bytes.
func Repeat(src, dir string, n int) (count int, total int64, err error) {
	var files []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		return 0, 0, fmt.Errorf("read %s: %v (%d files)", src, err, len(files))
	}
	slices.Sort(files)
	for k := 0; count < n; k++ {
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				return 0, 0, err
			}
			rel, _ := filepath.Rel(src, p)
			rel = filepath.ToSlash(rel)
			domain, rest, _ := strings.Cut(rel, "/")
			if rest == "" {
				domain, rest = "root", rel
			}
			out := filepath.Join(dir, fmt.Sprintf("c%03d_%s", k, domain), filepath.FromSlash(rest))
			if path.Base(rel) != "context.md" {
				b = append(b, fmt.Sprintf("\nCopy %d of %s; marker m%dx%d.\n", k, rel, k, count)...)
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return 0, 0, err
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return 0, 0, err
			}
			count++
			total += int64(len(b))
		}
	}
	return count, total, os.MkdirAll(filepath.Join(dir, ".arbor"), 0o755)
}
