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
