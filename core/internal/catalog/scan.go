package catalog

import (
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/internal/pathtab"
)

// Scan is one stamp scan of the tree against the catalog (a refresh
// without paths): it finds each file a walk lists among the records in the
// walk's order, with one comparison where the records follow it, and marks
// it by its record's slot. What a scan then finds unmarked is gone. A set
// of the paths listed, a hash of each (in software under WebAssembly), was
// a fifth of a scan of 100,000 files there.
type Scan struct {
	c    *Catalog
	seen pathtab.Marks
	next uint32
}

// NewScan starts a scan.
func (c *Catalog) NewScan() *Scan {
	c.init()
	return &Scan{c: c, seen: pathtab.NewMarks(c.recs.Slots(), c.recs.Gen())}
}

// File finds the markdown file name of the folder dir that the walk lists
// as fi, and marks it: it returns the file's path, and whether the catalog
// holds the file as listed (stamped, with the same size and modification
// time), which need not be read again.
func (s *Scan) File(dir, name string, fi FileInfo) (p string, unchanged bool) {
	p, i, ok := s.c.recs.FindIn(dir, name, s.next)
	if !ok {
		return p, false
	}
	s.next = i + 1
	s.seen.Mark(i)
	r := s.c.recs.At(i)
	return p, r.stamped && r.unchanged(fi)
}

// Listed marks p, which the walk listed and which was read since File
// found no record of it.
func (s *Scan) Listed(p string) {
	if i, ok := s.c.recs.Peek(p); ok {
		s.seen.Mark(i)
	}
}

// Unlisted returns, sorted, the paths below dir ("" for the root) that the
// catalog holds a stamp for and the walk did not list. ok is false when
// the records were renumbered since the scan began (only Reload does
// that): which were listed is then not known.
func (s *Scan) Unlisted(dir string) (paths []string, ok bool) {
	if s.c.recs.Gen() != s.seen.Gen() {
		return nil, false
	}
	for p, i := range s.c.recs.All() {
		if !s.seen.Marked(i) && s.c.recs.At(i).stamped && (dir == "" || strings.HasPrefix(p, dir+"/")) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, true
}
