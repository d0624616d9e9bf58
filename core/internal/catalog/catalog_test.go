package catalog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

func entryWith(path string, related []string, body string) *tree.Entry {
	return &tree.Entry{Path: path, Title: path, Related: related, Preamble: body}
}

func TestCatalogBasics(t *testing.T) {
	c := New()
	a := entryWith("eng/a.md", nil, "")
	c.Put(a)
	c.Put(entryWith("eng/b.md", nil, ""))
	if got, ok := c.Get("eng/a.md"); !ok || got != a {
		t.Fatalf("Get = %v, %v", got, ok)
	}
	if got := c.Paths(); !reflect.DeepEqual(got, []string{"eng/a.md", "eng/b.md"}) {
		t.Errorf("Paths = %q", got)
	}
	c.Delete("eng/a.md")
	c.Delete("missing.md")
	if _, ok := c.Get("eng/a.md"); ok {
		t.Error("deleted entry still there")
	}
	if got := c.Paths(); !reflect.DeepEqual(got, []string{"eng/b.md"}) {
		t.Errorf("Paths = %q", got)
	}
	var zero Catalog // the zero value works too
	zero.Put(a)
	if _, ok := zero.Get("eng/a.md"); !ok {
		t.Error("zero Catalog lost the entry")
	}
}

func TestCatalogResolution(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		link    string
		want    string // "" when unresolved
	}{
		{"exact path", []string{"engineering/billing/invoice_retry_policy.md"}, "engineering/billing/invoice_retry_policy.md", "engineering/billing/invoice_retry_policy.md"},
		{"path without .md", []string{"engineering/billing/invoice_retry_policy.md"}, "engineering/billing/invoice_retry_policy", "engineering/billing/invoice_retry_policy.md"},
		{"legacy @ and leading slash", []string{"a/b.md"}, "@/a/b.md", "a/b.md"},
		{"path case and spaces", []string{"Eng/Invoice_Retry.md"}, "eng/invoice retry", "Eng/Invoice_Retry.md"},
		{"base name as title", []string{"engineering/billing/invoice_retry_policy.md"}, "Invoice Retry Policy", "engineering/billing/invoice_retry_policy.md"},
		{"base name snake", []string{"engineering/billing/invoice_retry_policy.md"}, "invoice_retry_policy", "engineering/billing/invoice_retry_policy.md"},
		{"base name with .md", []string{"engineering/billing/invoice_retry_policy.md"}, "Invoice_Retry_Policy.MD", "engineering/billing/invoice_retry_policy.md"},
		{"obsidian file name", []string{"Vault/My Note.md"}, "my note", "Vault/My Note.md"},
		{"ambiguous base name", []string{"a/x.md", "b/x.md"}, "x", ""},
		{"exact path beats ambiguity", []string{"a/x.md", "b/x.md"}, "b/x.md", "b/x.md"},
		{"partial path is not a base name", []string{"a/b/x.md"}, "b/x", ""},
		{"missing", []string{"a/x.md"}, "y", ""},
	}
	for _, tt := range tests {
		c := New()
		for _, p := range tt.entries {
			c.Put(entryWith(p, nil, ""))
		}
		c.Put(entryWith("src.md", []string{tt.link}, ""))
		fwd := c.Forward("src.md")
		if tt.want == "" {
			if !reflect.DeepEqual(fwd, []string{tt.link}) {
				t.Errorf("%s: Forward = %q, want the raw link", tt.name, fwd)
			}
			for _, p := range tt.entries {
				if bl := c.Backlinks(p); len(bl) != 0 {
					t.Errorf("%s: Backlinks(%s) = %q", tt.name, p, bl)
				}
			}
			continue
		}
		if !reflect.DeepEqual(fwd, []string{tt.want}) {
			t.Errorf("%s: Forward = %q, want %q", tt.name, fwd, tt.want)
		}
		if bl := c.Backlinks(tt.want); !reflect.DeepEqual(bl, []string{"src.md"}) {
			t.Errorf("%s: Backlinks(%s) = %q", tt.name, tt.want, bl)
		}
	}
}

func TestCatalogLinkSequences(t *testing.T) {
	c := New()
	target := "engineering/billing/invoice_retry_policy.md"

	// Links written before the target exists resolve once it is Put.
	c.Put(entryWith("notes/a.md", nil, "see [[Invoice Retry Policy]]"))
	c.Put(entryWith("notes/b.md", []string{target}, ""))
	c.Put(&tree.Entry{Path: "notes/c.md", LegacyRelations: []string{"engineering/billing/invoice_retry_policy"}})
	if got := c.Forward("notes/a.md"); !reflect.DeepEqual(got, []string{"Invoice Retry Policy"}) {
		t.Errorf("Forward before target = %q", got)
	}
	c.Put(entryWith(target, []string{"notes/a.md"}, "[[b]]"))
	want := []string{"notes/a.md", "notes/b.md", "notes/c.md"}
	if got := c.Backlinks(target); !reflect.DeepEqual(got, want) {
		t.Errorf("Backlinks = %q, want %q", got, want)
	}
	if got := c.Forward(target); !reflect.DeepEqual(got, []string{"notes/a.md", "notes/b.md"}) {
		t.Errorf("Forward(target) = %q", got)
	}
	if got := c.Forward("notes/a.md"); !reflect.DeepEqual(got, []string{target}) {
		t.Errorf("Forward(a) = %q", got)
	}

	// Replacing an entry re-indexes its links.
	c.Put(entryWith("notes/a.md", nil, "no links now"))
	if got := c.Backlinks(target); !reflect.DeepEqual(got, []string{"notes/b.md", "notes/c.md"}) {
		t.Errorf("Backlinks after replace = %q", got)
	}
	if got := c.Forward("notes/a.md"); len(got) != 0 {
		t.Errorf("Forward after replace = %q", got)
	}

	// A second entry with the same base name makes base-name links ambiguous.
	c.Put(entryWith("notes/d.md", nil, "[[invoice_retry_policy]]"))
	if got := c.Backlinks(target); !reflect.DeepEqual(got, []string{"notes/b.md", "notes/c.md", "notes/d.md"}) {
		t.Errorf("Backlinks with d = %q", got)
	}
	c.Put(entryWith("archive/invoice_retry_policy.md", nil, ""))
	if got := c.Backlinks(target); !reflect.DeepEqual(got, []string{"notes/b.md", "notes/c.md"}) {
		t.Errorf("Backlinks when ambiguous = %q", got)
	}
	if got := c.Forward("notes/d.md"); !reflect.DeepEqual(got, []string{"invoice_retry_policy"}) {
		t.Errorf("Forward when ambiguous = %q", got)
	}
	c.Delete("archive/invoice_retry_policy.md")
	if got := c.Backlinks(target); !reflect.DeepEqual(got, []string{"notes/b.md", "notes/c.md", "notes/d.md"}) {
		t.Errorf("Backlinks after removing the twin = %q", got)
	}

	// Deleting the target leaves dangling links; putting it back restores them.
	c.Delete(target)
	if got := c.Forward("notes/b.md"); !reflect.DeepEqual(got, []string{target}) {
		t.Errorf("Forward to deleted = %q", got)
	}
	if got := c.Backlinks(target); len(got) != 0 {
		t.Errorf("Backlinks of deleted = %q", got)
	}
	if got := c.Forward(target); len(got) != 0 {
		t.Errorf("Forward of deleted = %q", got)
	}
	c.Put(entryWith(target, nil, ""))
	if got := c.Backlinks(target); !reflect.DeepEqual(got, []string{"notes/b.md", "notes/c.md", "notes/d.md"}) {
		t.Errorf("Backlinks after re-adding = %q", got)
	}

	// Deleting a linking entry removes its links.
	c.Delete("notes/b.md")
	if got := c.Backlinks(target); !reflect.DeepEqual(got, []string{"notes/c.md", "notes/d.md"}) {
		t.Errorf("Backlinks after deleting b = %q", got)
	}
}

func TestCatalogForwardDedup(t *testing.T) {
	c := New()
	c.Put(entryWith("x/target.md", nil, ""))
	c.Put(entryWith("src.md", []string{"x/target.md", "x/target", "zz-missing"}, "[[target]] [[Target|again]] [[aa missing]]"))
	want := []string{"aa missing", "x/target.md", "zz-missing"}
	if got := c.Forward("src.md"); !reflect.DeepEqual(got, want) {
		t.Errorf("Forward = %q, want %q", got, want)
	}
	if got := c.Backlinks("x/target.md"); !reflect.DeepEqual(got, []string{"src.md"}) {
		t.Errorf("Backlinks = %q", got)
	}
}

func TestCatalogContextsAndBroken(t *testing.T) {
	c := New()
	c.PutContext(&tree.Context{Path: "eng/context.md", Title: "Eng"})
	c.PutContext(&tree.Context{Path: "art/context.md", Title: "Art"})
	c.PutContext(nil)
	if got := c.ContextPaths(); !reflect.DeepEqual(got, []string{"art/context.md", "eng/context.md"}) {
		t.Errorf("ContextPaths = %q", got)
	}
	if ctx, ok := c.Context("eng/context.md"); !ok || ctx.Title != "Eng" {
		t.Errorf("Context = %v, %v", ctx, ok)
	}
	c.DeleteContext("eng/context.md")
	if _, ok := c.Context("eng/context.md"); ok {
		t.Error("context not deleted")
	}

	bad := errors.New("boom")
	c.MarkBroken("eng/b.md", bad)
	c.MarkBroken("eng/a.md", nil)
	if got := c.BrokenPaths(); !reflect.DeepEqual(got, []string{"eng/a.md", "eng/b.md"}) {
		t.Errorf("BrokenPaths = %q", got)
	}
	if err, ok := c.Broken("eng/b.md"); !ok || err != bad {
		t.Errorf("Broken = %v, %v", err, ok)
	}
	if err, ok := c.Broken("eng/a.md"); !ok || err == nil {
		t.Errorf("Broken without error = %v, %v", err, ok)
	}
	c.ClearBroken("eng/b.md")
	if _, ok := c.Broken("eng/b.md"); ok {
		t.Error("ClearBroken did not clear")
	}
	// A successful Put means the file parses again.
	c.Put(entryWith("eng/a.md", nil, ""))
	if _, ok := c.Broken("eng/a.md"); ok {
		t.Error("Put did not clear broken state")
	}
}

func TestCatalogCloneIsIndependent(t *testing.T) {
	c := New()
	c.Put(entryWith("a/b/x.md", []string{"a/b/y.md"}, ""))
	c.Put(entryWith("a/b/y.md", nil, ""))
	n := c.Clone()
	n.Delete("a/b/x.md")
	n.Put(entryWith("a/b/z.md", []string{"a/b/y.md"}, ""))
	if got := fmt.Sprint(c.Paths(), c.Backlinks("a/b/y.md")); got != "[a/b/x.md a/b/y.md] [a/b/x.md]" {
		t.Fatalf("the original changed with its clone: %s", got)
	}
	if got := fmt.Sprint(n.Paths(), n.Backlinks("a/b/y.md")); got != "[a/b/y.md a/b/z.md] [a/b/z.md]" {
		t.Fatalf("clone: %s", got)
	}
}

// The link index, once built, is kept in step by every Put and Delete:
// it equals the one built afresh from the cards.
func TestRelationsKeptInStep(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	paths := []string{"a/x.md", "a/y.md", "b/x.md", "b/Z z.md", "c/d/y.md", "top.md"}
	targets := append([]string{"x", "y", "Z z", "a/x", "@b/x.md", "./top", "missing", "c/d/y.md"}, paths...)
	c := New()
	c.Resolve("x") // builds the index while the catalog is empty
	for i := range 500 {
		p := paths[rnd.IntN(len(paths))]
		if rnd.IntN(3) == 0 {
			c.Delete(p)
		} else {
			var links []string
			for range rnd.IntN(3) {
				links = append(links, targets[rnd.IntN(len(targets))])
			}
			c.putCard(p, newCard(p, links, nil, nil, false))
		}
		fresh := &Catalog{recs: c.recs}
		if !reflect.DeepEqual(c.rel, fresh.relations()) {
			t.Fatalf("step %d: kept %+v, afresh %+v", i, *c.rel, *fresh.rel)
		}
	}
}

// The catalog counts its entries and stamps as it changes (Len, and the
// listing's check that nothing is gone): the counts must match what it
// holds through every change, a save and restore, and a clone.
func TestCatalogCountsFollowChanges(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	paths := []string{"a/x.md", "a/y.md", "b/z.md", "b/context.md", "c/w.md", "c/v.md"}
	c := New()
	check := func(c *Catalog, when string) {
		t.Helper()
		if c.Len() != len(c.Paths()) {
			t.Fatalf("%s: Len %d, Paths %d", when, c.Len(), len(c.Paths()))
		}
		if c.nStamped != len(c.Stamped()) {
			t.Fatalf("%s: counted %d stamps, holds %d", when, c.nStamped, len(c.Stamped()))
		}
		conflicts := 0
		for _, i := range c.recs.All() {
			if r := c.recs.At(i); r.entry && r.card.conflict() {
				conflicts++
			}
		}
		if c.nConflict != conflicts {
			t.Fatalf("%s: counted %d conflicts, holds %d", when, c.nConflict, conflicts)
		}
		// A Reload marks the files listed by their records' slots.
		for p, i := range c.recs.All() {
			if j, ok := c.recs.Slot(p); !ok || j != i {
				t.Fatalf("%s: %s is at slot %d, found at %d (%v)", when, p, i, j, ok)
			}
		}
	}
	for i := range 2000 {
		p := paths[rnd.IntN(len(paths))]
		switch rnd.IntN(7) {
		case 0:
			c.Put(entryWith(p, nil, ""))
		case 1:
			e := entryWith(p, nil, "")
			e.Other = []tree.Section{{Heading: tree.ConflictHeading, Body: "ours and theirs"}}
			c.Put(e)
		case 2:
			c.Delete(p)
		case 3:
			c.SetStamp(p, fmt.Sprint(i))
		case 4:
			c.Forget(p)
		case 5:
			c.MarkBroken(p, errors.New("bad"))
		case 6:
			c.Note(p, FileInfo{Size: int64(i), ModTime: 1}, 0)
		}
		check(c, fmt.Sprintf("step %d", i))
		if i%100 == 0 {
			check(c.Clone(), fmt.Sprintf("clone at step %d", i))
		}
	}
	fs := host.NewMemFS()
	if err := c.Save(fs); err != nil {
		t.Fatal(err)
	}
	r, err := Restore(fs, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	check(r, "restored")
	if r.Len() == 0 || r.nStamped == 0 {
		t.Fatalf("restored %d entries, %d stamps: the test saved nothing", r.Len(), r.nStamped)
	}
}

// Folder lists the entries directly in a folder, sorted, and stays in
// step with later writes and deletions once indexed; a clone indexes its
// own.
func TestFolder(t *testing.T) {
	c := New()
	for _, p := range []string{"chat/s1/turn_002.md", "chat/s1/turn_001.md", "chat/s1/deeper/x.md", "chat/s2/turn_001.md", "top.md"} {
		c.Put(entryWith(p, nil, ""))
	}
	if got, want := c.Folder("chat/s1"), []string{"chat/s1/turn_001.md", "chat/s1/turn_002.md"}; !slices.Equal(got, want) {
		t.Errorf("Folder(chat/s1) = %v, want %v", got, want)
	}
	if got := c.Folder(""); !slices.Equal(got, []string{"top.md"}) {
		t.Errorf("Folder(\"\") = %v", got)
	}
	c.Put(entryWith("chat/s1/turn_000.md", nil, ""))
	c.Put(entryWith("chat/s1/turn_002.md", nil, "changed")) // replaced, not doubled
	c.Delete("chat/s1/turn_001.md")
	c.Delete("chat/s2/turn_001.md")
	if got, want := c.Folder("chat/s1"), []string{"chat/s1/turn_000.md", "chat/s1/turn_002.md"}; !slices.Equal(got, want) {
		t.Errorf("after writes, Folder(chat/s1) = %v, want %v", got, want)
	}
	if got := c.Folder("chat/s2"); len(got) != 0 {
		t.Errorf("Folder of a folder emptied = %v", got)
	}
	n := c.Clone()
	n.Put(entryWith("chat/s1/turn_003.md", nil, ""))
	if got := c.Folder("chat/s1"); len(got) != 2 {
		t.Errorf("a clone's write changed the original's folder: %v", got)
	}
	if got := n.Folder("chat/s1"); len(got) != 3 {
		t.Errorf("clone: Folder(chat/s1) = %v", got)
	}
}
