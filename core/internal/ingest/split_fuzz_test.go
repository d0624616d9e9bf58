package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// FuzzSplit feeds any bytes to every format: Split must not panic, must
// refuse with ErrBadInput or return pieces whose paths are valid entry
// paths under domain/topic[/subtopic], unique within the file.
func FuzzSplit(f *testing.F) {
	names, _ := filepath.Glob("testdata/*")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Ext(n), string(b))
	}
	f.Fuzz(func(t *testing.T, ext, content string) {
		name := "in/file" + strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' {
				return -1
			}
			return r
		}, ext)
		ps, _, err := Split(api.SourceFile{Name: name, Content: content}, api.IngestOptions{})
		if err != nil {
			if !errors.Is(err, api.ErrBadInput) {
				t.Fatalf("error without ErrBadInput: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range ps {
			path := p.Path()
			clean, err := api.CleanPath(path)
			if err != nil || clean != path || !tree.IsEntryPath(path) {
				t.Fatalf("bad path %q: %v", path, err)
			}
			if d := strings.Count(path, "/"); d < 2 || d > 3 {
				t.Fatalf("path %q is not under domain/topic[/subtopic]", path)
			}
			if seen[path] {
				t.Fatalf("two pieces at %s", path)
			}
			seen[path] = true
			if len(p.Text) > maxPieceBytes {
				t.Fatalf("piece of %d bytes", len(p.Text))
			}
		}
	})
}
