package catalog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/binrec"
)

// persistTree is a MemFS of n entries, a context file and a broken file,
// its clock at *now (Unix milliseconds).
func persistTree(t testing.TB, n int) (*host.MemFS, *int64) {
	t.Helper()
	mem := host.NewMemFS()
	now := int64(1_700_000_000_000)
	mem.SetNow(func() int64 { return now })
	write := func(p, text string) {
		if err := mem.WriteFile(p, []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		// Lifecycle keys in some cards: a restored card is decoded at its
		// first use, and dump compares what each decodes to.
		lifecycle := ""
		if i%3 == 0 {
			lifecycle = fmt.Sprintf("importance: %d\nmaturity: core\n", 50+i)
		}
		write(fmt.Sprintf("notes/n%03d.md", i), fmt.Sprintf("---\ntitle: Note %d\n%srelated: [notes/n%03d.md]\n---\n\n## Narrative\nBody %d.\n", i, lifecycle, (i+1)%n, i))
	}
	write("notes/context.md", "---\ntitle: Notes\n---\n\nAll the notes.\n")
	write("notes/broken.md", "---\ntitle: [unclosed\n---\n")
	now += 10_000
	return mem, &now
}

// loadTree reads mem's tree, over prev when not nil, as an open does.
func loadTree(t testing.TB, mem host.FS, prev *Catalog) *Catalog {
	t.Helper()
	c, _, err := Reload(mem, 1<<20, ReloadOptions{Prev: prev})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// restored restores mem's persisted catalog, failing the test on an error.
func restored(t testing.TB, mem host.FS) *Catalog {
	t.Helper()
	c, err := Restore(mem, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dump is everything a catalog persists, in order: two catalogs with the
// same dump are the same to the next open.
func dump(c *Catalog) string {
	var b strings.Builder
	for _, p := range c.Stamped() {
		rec, _ := c.record(p)
		fmt.Fprintf(&b, "%q\n", rec)
	}
	fmt.Fprintf(&b, "entries %d stamped %d conflicts %v contexts %v broken %v\n", c.Len(), c.nStamped, c.Conflicts(), c.ContextPaths(), c.BrokenPaths())
	return b.String()
}

// A save after a few changes writes them to the delta and leaves the base
// alone; the catalog restored from both is the one a whole save makes.
func TestDeltaRoundTrip(t *testing.T) {
	mem, now := persistTree(t, 20)
	c := loadTree(t, mem, nil)
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	base, _ := mem.ReadFile(api.CatalogFile)

	// Two opens, each after edits of the tree and before a save: the
	// second delta holds the first's records too.
	*now += 10_000
	mem.WriteFile("notes/n003.md", []byte("---\ntitle: Note three, longer now\n---\n\n## Narrative\nChanged.\n"))
	mem.WriteFile("notes/new.md", []byte("---\ntitle: New note\nrelated: [notes/n001.md]\n---\n\n## Narrative\nNew.\n"))
	mem.Remove("notes/n007.md")
	*now += 10_000
	c = loadTree(t, mem, restored(t, mem))
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	*now += 10_000
	mem.WriteFile("notes/context.md", []byte("---\ntitle: All notes\n---\n\nEvery note.\n"))
	mem.WriteFile("notes/broken.md", []byte("---\ntitle: Fixed\n---\n\n## Narrative\nFixed.\n"))
	mem.WriteFile("notes/n009.md", []byte("---\ntitle: [broken now\n---\n"))
	mem.Remove("notes/new.md")
	*now += 10_000
	c = loadTree(t, mem, restored(t, mem))
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	if b, _ := mem.ReadFile(api.CatalogFile); !bytes.Equal(b, base) {
		t.Fatal("a save of a few changes rewrote the base")
	}
	delta, err := mem.ReadFile(api.CatalogDeltaFile)
	if err != nil {
		t.Fatalf("no delta: %v", err)
	}
	if len(delta) >= len(base)/2 {
		t.Errorf("the delta of 7 changed files is %d bytes, the base of 22 %d", len(delta), len(base))
	}

	got := restored(t, mem)
	// Base and delta decode into records in path order, which an open
	// finds without a map of their paths (pathtab).
	if !got.recs.Sorted() {
		t.Error("the records of base and delta are not in path order")
	}
	whole := host.NewMemFS()
	whole.SetNow(func() int64 { return *now })
	if err := c.saveBase(whole); err != nil {
		t.Fatal(err)
	}
	want := restored(t, whole)
	if dump(got) != dump(want) {
		t.Errorf("base and delta restore\n%s\nwant, as a whole save\n%s", dump(got), dump(want))
	}
	if dump(got) != dump(loadTree(t, mem, nil)) {
		t.Error("the restored catalog is not the tree's")
	}
	// The open over it reads nothing: every record is current.
	reads := &countReads{FS: mem}
	again := loadTree(t, reads, got)
	if reads.tree != 0 || again.Unsaved() {
		t.Errorf("the open over base and delta read %d files, unsaved %v", reads.tree, again.Unsaved())
	}
}

// countReads counts the reads of the tree's files and of the catalog's.
type countReads struct {
	host.FS
	tree, base, delta int
}

func (c *countReads) ReadFile(p string) ([]byte, error) {
	switch {
	case p == api.CatalogFile:
		c.base++
	case p == api.CatalogDeltaFile:
		c.delta++
	case !strings.HasPrefix(p, api.StateDir+"/"):
		c.tree++
	}
	return c.FS.ReadFile(p)
}

// editedAfterBase saves a tree's catalog as a base, edits notes/n002.md,
// and saves again: the catalog holds a delta of that edit.
func editedAfterBase(t *testing.T) (*host.MemFS, *int64, *Catalog) {
	t.Helper()
	mem, now := persistTree(t, 10)
	c := loadTree(t, mem, nil)
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	*now += 10_000
	mem.WriteFile("notes/n002.md", []byte("---\ntitle: Two, edited\n---\n\n## Narrative\nEdited.\n"))
	*now += 10_000
	c = loadTree(t, mem, restored(t, mem))
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	return mem, now, c
}

// A delta that names another base (a crash after a base's write, before
// the delta's removal; a process that loaded an older base) is never
// applied: both files are read again, and the base is used alone; the
// files it shows changed are read from the tree.
func TestDeltaOfAnotherBaseIgnored(t *testing.T) {
	mem, now, c := editedAfterBase(t)
	stale, _ := mem.ReadFile(api.CatalogDeltaFile)

	// Another edit, saved whole: the new base names n002's edit too.
	*now += 10_000
	mem.WriteFile("notes/n004.md", []byte("---\ntitle: Four, edited\n---\n\n## Narrative\nEdited.\n"))
	*now += 10_000
	c = loadTree(t, mem, restored(t, mem))
	if err := c.saveBase(mem); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(api.CatalogDeltaFile); err == nil {
		t.Fatal("a base's write left the delta")
	}
	want := dump(restored(t, mem))
	mem.WriteFile(api.CatalogDeltaFile, stale)

	reads := &countReads{FS: mem}
	got, err := Restore(reads, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if reads.base != 2 || reads.delta != 2 {
		t.Errorf("read the base %d times and the delta %d, want both twice", reads.base, reads.delta)
	}
	if dump(got) != want {
		t.Errorf("restored with a stale delta\n%s\nwant the base alone\n%s", dump(got), want)
	}

	// The base an older delta is laid over is another process's, older
	// than the delta: its own edit since is found in the tree.
	*now += 10_000
	mem.WriteFile("notes/n005.md", []byte("---\ntitle: Five, edited by another\n---\n\n## Narrative\nEdited.\n"))
	*now += 10_000
	reads = &countReads{FS: mem}
	c = loadTree(t, reads, restored(t, mem))
	if reads.tree != 1 || !c.Unsaved() {
		t.Errorf("the open read %d files of the tree, unsaved %v; want the one edited", reads.tree, c.Unsaved())
	}
	if title, _ := c.Title("notes/n005.md"); title != "Five, edited by another" {
		t.Errorf("title %q", title)
	}
	// Its save writes a delta of its own base, over the stale one.
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	if dump(restored(t, mem)) != dump(loadTree(t, mem, nil)) {
		t.Error("the catalog saved over a stale delta is not the tree's")
	}
}

// A delta that does not decode (a byte changed, cut short, another
// format) makes the whole persisted catalog unusable: Restore says why,
// and the caller reads the tree.
func TestDeltaDamaged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"a byte flipped", func(b []byte) []byte { b[len(b)-3] ^= 0x20; return b }, "checksum"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-4] }, "checksum"},
		{"another format", func(b []byte) []byte { b[len(deltaMagic)] = 99; return b }, "format 99"},
		{"a base in its place", func([]byte) []byte { return []byte(catalogMagic + "\x04") }, "not a catalog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, _, _ := editedAfterBase(t)
			good, _ := mem.ReadFile(api.CatalogDeltaFile)
			mem.WriteFile(api.CatalogDeltaFile, tc.damage(bytes.Clone(good)))
			_, err := Restore(mem, 1<<20)
			if err == nil || !strings.Contains(err.Error(), api.CatalogDeltaFile) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore: %v, want an error of %s saying %q", err, api.CatalogDeltaFile, tc.want)
			}
			// Read from the tree, the catalog is saved whole: a base, no delta.
			c := loadTree(t, mem, nil)
			if err := c.Save(mem); err != nil {
				t.Fatal(err)
			}
			if _, err := mem.Stat(api.CatalogDeltaFile); err == nil {
				t.Error("the damaged delta is still there")
			}
			if dump(restored(t, mem)) != dump(c) {
				t.Error("the catalog saved after the damage is not the tree's")
			}
		})
	}
}

// The delta grows with the changes since the base until it passes
// binrec.CompactAt of the base's records: that save writes a new base
// holding them all, and removes the delta.
func TestDeltaCompacted(t *testing.T) {
	mem, now := persistTree(t, 30)
	c := loadTree(t, mem, nil)
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	base, _ := mem.ReadFile(api.CatalogFile)
	limit := binrec.CompactAt(32)
	for i := 0; ; i++ {
		*now += 10_000
		for j := range 10 {
			mem.WriteFile(fmt.Sprintf("added/a%02d_%d.md", i, j), []byte(fmt.Sprintf("---\ntitle: Added %d %d\n---\n\n## Narrative\nAdded.\n", i, j)))
		}
		*now += 10_000
		c = loadTree(t, mem, restored(t, mem))
		changed := len(c.saved.since)
		if err := c.Save(mem); err != nil {
			t.Fatal(err)
		}
		now, _ := mem.ReadFile(api.CatalogFile)
		_, derr := mem.Stat(api.CatalogDeltaFile)
		if changed <= limit {
			if !bytes.Equal(now, base) || derr != nil {
				t.Fatalf("save %d of %d changes (limit %d): base rewritten %v, delta %v", i, changed, limit, !bytes.Equal(now, base), derr)
			}
			continue
		}
		if bytes.Equal(now, base) || derr == nil {
			t.Fatalf("save %d of %d changes (limit %d): base rewritten %v, delta left %v", i, changed, limit, !bytes.Equal(now, base), derr == nil)
		}
		if r := restored(t, mem); len(r.saved.since) != 0 || dump(r) != dump(loadTree(t, mem, nil)) {
			t.Fatal("the compacted base is not the tree's")
		}
		return
	}
}

// The fingerprints written in the code are what the code makes of the
// probes: change them with parsing, and every catalog and source key is
// made anew.
func TestFingerprints(t *testing.T) {
	doc := computeDocFingerprint()
	if cat := computeCatalogFingerprint(doc); doc != docFP || cat != catalogFP {
		t.Fatalf("parsing changed: set docFP to %q and catalogFP to %q", doc, cat)
	}
	if err := checkFingerprints(); err != nil {
		t.Fatal(err)
	}
}

// A restored record's path is not checked against the path rules again
// (the file's checksum holds for it): one no walk can list, as a catalog
// written by hand might hold, is dropped by the open's listing like a
// file removed since, and nothing is read for it.
func TestRestoredPathNoWalkLists(t *testing.T) {
	mem, now := persistTree(t, 3)
	c := loadTree(t, mem, nil)
	const odd = "../outside.md"
	c.putCard(odd, newCard("Outside", nil, nil, nil, false))
	c.SetStamp(odd, "stamp")
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	prev := restored(t, mem)
	if !prev.Has(odd) {
		t.Fatalf("restored catalog lacks %s", odd)
	}
	*now += 10_000
	read := 0
	got, _, err := Reload(mem, 1<<20, ReloadOptions{Prev: prev, Read: func(n int) { read = n }})
	if err != nil {
		t.Fatal(err)
	}
	if got.Has(odd) || got.Len() != 3 || read != 0 {
		t.Errorf("after the open: has %s %v, %d entries, %d files read; want false, 3, 0", odd, got.Has(odd), got.Len(), read)
	}
}
