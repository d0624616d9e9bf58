package catalog

import (
	"bytes"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// catalogBodies are the bodies of the base and the delta a small tree's
// catalog saves, for the fuzzer to start from.
func catalogBodies(t testing.TB) (base, delta []byte) {
	mem, now := persistTree(t, 12)
	c := loadTree(t, mem, nil)
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	*now += 10_000
	mem.WriteFile("notes/n001.md", []byte("---\ntitle: Changed\n---\n\nNew.\n"))
	mem.Remove("notes/n002.md")
	*now += 10_000
	c = loadTree(t, mem, restored(t, mem))
	if err := c.Save(mem); err != nil {
		t.Fatal(err)
	}
	body := func(p, magic string) []byte {
		b, err := mem.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := readFile(b, magic)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Clone(r.Rest())
	}
	return body(api.CatalogFile, catalogMagic), body(api.CatalogDeltaFile, deltaMagic)
}

// A persisted catalog is never trusted: whatever its files hold under a
// valid checksum (a version's bug, a hand's edit), the restore refuses
// them with an error or gives a catalog that answers, reloads over the
// tree and saves, without a panic.
func FuzzRestore(f *testing.F) {
	base, delta := catalogBodies(f)
	f.Add(base, delta)
	f.Add(base, []byte(nil))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0}, []byte(nil))
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		mem, _ := persistTree(t, 4)
		mem.WriteFile(api.CatalogFile, appendFile(catalogMagic, base))
		if delta != nil {
			mem.WriteFile(api.CatalogDeltaFile, appendFile(deltaMagic, delta))
		}
		c, err := Restore(mem, 1<<20)
		if err != nil {
			return
		}
		for _, p := range c.Paths() {
			c.Title(p)
			c.Forward(p)
			c.Backlinks(p)
			c.Changed(p)
			c.Sources(p)
			c.Get(p)
		}
		c.Conflicts()
		if _, err := c.Outline(api.TreeParams{}); err != nil {
			t.Logf("outline: %v", err)
		}
		c, _, err = Reload(mem, 1<<20, ReloadOptions{Prev: c})
		if err != nil {
			t.Fatalf("reload over a restored catalog: %v", err)
		}
		if err := c.Save(mem); err != nil {
			t.Fatalf("save: %v", err)
		}
		again, err := Restore(mem, 1<<20)
		if err != nil {
			t.Fatalf("restore of what was saved: %v", err)
		}
		if dump(again) != dump(c) {
			t.Fatalf("saved and restored:\n%s\nwas:\n%s", dump(again), dump(c))
		}
	})
}
