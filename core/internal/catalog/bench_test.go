package catalog

import (
	"fmt"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// benchTree is a MemFS of n entries laid out as bench/scale's trees are
// (domain/topic/subtopic/entry.md, a title and two times in the front
// matter, no relations), with its catalog saved.
func benchTree(b *testing.B, n int) *host.MemFS {
	b.Helper()
	mem := host.NewMemFS()
	now := int64(1_700_000_000_000)
	mem.SetNow(func() int64 { return now })
	for i := range n {
		p := fmt.Sprintf("conversations/conv_%03d/session_%04d/message_%05d.md", i/5000, i/20, i)
		text := fmt.Sprintf("---\ntitle: Caroline on %d May 2023\ncreatedAt: 2026-01-01T00:00:00Z\nupdatedAt: 2026-01-01T00:00:00Z\n---\n\n## Narrative\nMessage %d of the session.\n", i%28+1, i)
		if err := mem.WriteFile(p, []byte(text)); err != nil {
			b.Fatal(err)
		}
	}
	now += 10_000
	c, _, err := Reload(mem, 1<<20, ReloadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Save(mem); err != nil {
		b.Fatal(err)
	}
	return mem
}

// Restoring a persisted catalog of 20,000 entries, the first part of an
// open. Under WebAssembly it costs about ten times what it does natively
// (2.5 against 25 ms here); from the vendored tree `./build.sh wasm`
// leaves in .build/wasm (bluge builds for wasip1 only with its shims):
//
//	go build -o /tmp/wasiexec ./internal/wasiexec
//	GOFLAGS=-mod=vendor GOOS=wasip1 GOARCH=wasm go test \
//	  -exec /tmp/wasiexec -run - -bench Restore ./core/internal/catalog
func BenchmarkRestore(b *testing.B) {
	const n = 20_000
	mem := benchTree(b, n)
	b.ReportAllocs()
	for b.Loop() {
		c, err := Restore(mem, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if c.Len() != n {
			b.Fatalf("restored %d entries, want %d", c.Len(), n)
		}
	}
}

// walkRecords are the fs_walk records a host gives for a walk of mem.
func walkRecords(b *testing.B, mem *host.MemFS) []byte {
	b.Helper()
	var records []byte
	if err := host.Walk(mem, "", func(dir string, list []host.DirEntry) error {
		records = host.AppendWalkRecord(records, dir, list)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return records
}

// walkedFS is an FS whose walk answers with the records a host's fs_walk
// gives (host.AppendWalkRecord), decoded at each walk as the module
// decodes its host's answers.
type walkedFS struct {
	*host.MemFS
	records []byte
}

func (w walkedFS) Walk(dir string, fn func(string, []host.DirEntry) error) error {
	_, err := host.DecodeWalk(w.records, fn)
	return err
}

// Comparing the listing of an unchanged tree of 20,000 entries with its
// restored catalog, the rest of an open once the catalog is restored: the
// walk's records decoded, each file found in the catalog and its stamp
// compared (the index's side is search's). Under WebAssembly about 8× its
// native time (11 against 1.4 ms here), run as BenchmarkRestore is.
func BenchmarkReload(b *testing.B) {
	const n = 20_000
	mem := benchTree(b, n)
	fs := walkedFS{mem, walkRecords(b, mem)}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		prev, err := Restore(mem, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c, _, err := Reload(fs, 1<<20, ReloadOptions{Prev: prev})
		if err != nil {
			b.Fatal(err)
		}
		if c.Len() != n || c.Unsaved() {
			b.Fatalf("%d entries, unsaved %v: the tree read as changed", c.Len(), c.Unsaved())
		}
	}
}

// Decoding the walk's records of the same tree alone, the first part of
// BenchmarkReload: under WebAssembly a fifth of an unchanged open's time
// in the module at 100,000 entries (bench/scale/notes.md).
func BenchmarkDecodeWalk(b *testing.B) {
	records := walkRecords(b, benchTree(b, 20_000))
	b.SetBytes(int64(len(records)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := host.DecodeWalk(records, func(string, []host.DirEntry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
