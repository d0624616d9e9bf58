package catalog

import (
	"slices"
	"testing"
)

// A scan marks what the walk lists, in or out of the records' order, and
// what is read during it; what it leaves unmarked below a folder is gone.
func TestScan(t *testing.T) {
	c := New()
	for _, p := range []string{"a/b/one.md", "a/b/two.md", "a/c/three.md", "d/e/four.md"} {
		c.SetStamp(p, "s-"+p)
		c.Note(p, FileInfo{Size: 10, ModTime: 1_000}, 0)
	}
	s := c.NewScan()
	if p, unchanged := s.File("a/b", "two.md", FileInfo{Size: 10, ModTime: 1_000}); p != "a/b/two.md" || !unchanged {
		t.Fatalf("two.md: %q, unchanged %v", p, unchanged)
	}
	if p, unchanged := s.File("a/b", "one.md", FileInfo{Size: 11, ModTime: 1_000}); p != "a/b/one.md" || unchanged {
		t.Fatalf("one.md changed: %q, unchanged %v", p, unchanged)
	}
	// A file no record holds, read during the scan (a new record).
	if p, unchanged := s.File("a/b", "new.md", FileInfo{Size: 5, ModTime: 2_000}); p != "a/b/new.md" || unchanged {
		t.Fatalf("new.md: %q, unchanged %v", p, unchanged)
	}
	c.SetStamp("a/b/new.md", "s-new")
	s.Listed("a/b/new.md")
	if gone, ok := s.Unlisted("a"); !ok || !slices.Equal(gone, []string{"a/c/three.md"}) {
		t.Fatalf("unlisted below a: %v, %v", gone, ok)
	}
	if gone, _ := s.Unlisted(""); !slices.Equal(gone, []string{"a/c/three.md", "d/e/four.md"}) {
		t.Fatalf("unlisted: %v", gone)
	}
	// A record forgotten during the scan is not reported gone.
	c.Forget("d/e/four.md")
	if gone, _ := s.Unlisted("d"); len(gone) != 0 {
		t.Fatalf("unlisted below d: %v", gone)
	}
	// Renumbered records: which were listed is not known.
	c.recs.Compact()
	if _, ok := s.Unlisted(""); ok {
		t.Fatal("a scan across a renumbering claims to know what was listed")
	}
}
