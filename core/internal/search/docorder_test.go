package search

import (
	"testing"

	"github.com/arbormem/arbor/core/internal/binrec"
)

// A documents section is trusted only in path order: a path that does not
// come after the one before it (out of order, repeated, or sharing more of
// it than it has) is damage, whatever the prefix the two share.
func TestDocReaderRefusesPathsOutOfOrder(t *testing.T) {
	read := func(paths ...string) (n int, err error) {
		docs := make([]docEntry, len(paths))
		for i, p := range paths {
			docs[i] = docEntry{Path: p, Hash: "h", Key: "k"}
		}
		r := binrec.NewReader(appendDocs(nil, docs, false))
		dr := docReader{r: r, n: r.Count(1)}
		for {
			d, ok := dr.next()
			if !ok {
				return n, dr.err
			}
			if d.Path != paths[n] {
				t.Fatalf("%q: record %d decoded as %q", paths, n, d.Path)
			}
			n++
		}
	}
	if n, err := read("a/b/c.md", "a/b/d.md", "a/c.md", "b.md"); err != nil || n != 4 {
		t.Fatalf("in order: %d read, %v", n, err)
	}
	for _, paths := range [][]string{
		{"a/b/d.md", "a/b/c.md"},         // the rest out of order
		{"a/b/c.md", "a/b/c.md"},         // repeated
		{"a/b/c.md", "a/b/c.md", "z.md"}, // repeated, then in order
		{"a/b/c.md", "a/b/"},             // a prefix of the one before
		{"conversations/x/2.md", "conversations/x/10.md"},
	} {
		if n, err := read(paths...); err == nil || n != 1 {
			t.Errorf("%q: %d read, %v; want the second refused as damage", paths, n, err)
		}
	}
}
