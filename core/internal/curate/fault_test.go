package curate

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

// TestFaultInjection fails the Nth WriteFile/Remove of an operation, for
// every N, once as a single I/O error (the operation must roll back to the
// before state, or succeed with the after state) and once as a crash (every
// call from the Nth on fails, so the rollback fails too: every entry must
// still parse, every file must hold its before or its after content, and
// no knowledge may be lost).
func TestFaultInjection(t *testing.T) {
	files := fixtureWithSubtopic()
	const src, dst = "eng/billing/old_retry.md", "eng/billing/invoice_retry.md"
	ops := []struct {
		name string
		op   api.Operation
	}{
		{"merge", api.Operation{Type: "MERGE", Path: src, MergeTarget: dst, Reason: "dedupe"}},
		{"delete folder", api.Operation{Type: "DELETE", Path: "eng/billing", Reason: "drop"}},
		{"delete entry", api.Operation{Type: "DELETE", Path: src, Reason: "drop"}},
		{"add with contexts", api.Operation{Type: "ADD", Path: "ops/oncall/pager", Title: "Rota", Reason: "new"}},
		{"update", api.Operation{Type: "UPDATE", Path: dst, Summary: "new", Reason: "edit"}},
		{"move entry", api.Operation{Type: "MOVE", Path: src, To: "ops/billing/renamed.md", Reason: "move"}},
		{"move folder", api.Operation{Type: "MOVE", Path: "eng/billing", To: "finance/money", Reason: "move"}},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			ref := newEnv(t, files)
			before := treeFiles(ref.fs)
			mustSucceed(t, one(t, ref, tc.op))
			after := treeFiles(ref.fs)
			for _, sticky := range []bool{false, true} {
				for n := 1; ; n++ {
					mem := memOf(t, files)
					ffs := &faultFS{FS: mem, n: n, sticky: sticky}
					c := &Curator{FS: ffs, Clock: clock, Catalog: load(t, mem)}
					catBefore := catalogState(c.Catalog)
					a := c.Apply([]api.Operation{tc.op}).Applied[0]
					got := treeFiles(mem)
					for p, s := range got {
						if tree.IsEntryPath(p) && path.Base(p) != "broken.md" {
							if _, err := tree.ParseEntry(p, []byte(s)); err != nil {
								t.Fatalf("n=%d sticky=%v: %s does not parse: %v", n, sticky, p, err)
							}
						}
						if s != before[p] && s != after[p] {
							t.Fatalf("n=%d sticky=%v: %s holds neither its before nor its after content", n, sticky, p)
						}
					}
					if strings.HasPrefix(tc.name, "move") {
						// A crash never loses what moves: each file is at its
						// old path or already at its new one.
						for p := range before {
							if _, stays := after[p]; stays {
								continue
							}
							np := strings.Replace(p, "eng/billing", "finance/money", 1)
							if tc.name == "move entry" {
								np = tc.op.To
							}
							_, old := got[p]
							if _, moved := got[np]; !old && !moved {
								t.Fatalf("n=%d sticky=%v: %s lost in the move", n, sticky, p)
							}
						}
					}
					switch {
					case !sticky && a.Status == api.StatusFailed:
						if !strings.Contains(a.Message, "injected fault") {
							t.Errorf("n=%d: message %q", n, a.Message)
						}
						if d := diffFiles(before, got); d != "" {
							t.Fatalf("n=%d: failed op changed the tree:\n%s", n, d)
						}
						if catalogState(c.Catalog) != catBefore {
							t.Fatalf("n=%d: failed op changed the catalog", n)
						}
					case !sticky:
						if d := diffFiles(after, got); d != "" {
							t.Fatalf("n=%d: %s succeeded (%s) but the tree is not the after state:\n%s", n, tc.name, a.Message, d)
						}
						if catalogState(c.Catalog) != catalogState(load(t, mem)) {
							t.Fatalf("n=%d: catalog out of step", n)
						}
					case tc.name == "merge":
						// A crash never loses the source's knowledge: it is
						// gone only once the merged target is written.
						if _, ok := got[src]; !ok && got[dst] != after[dst] {
							t.Fatalf("n=%d: source removed before the merged target was written", n)
						}
					}
					if ffs.calls < n {
						break // the fault was never reached: every N was tried
					}
				}
			}
		})
	}
}

// fullFS is a disk that is full at the nth write: as a real host does, the
// write makes the file's missing folders first, then fails to write the
// file itself (ENOSPC on its temporary file). The writes of the rollback
// find the space the undone writes free (a disk full for good, where even
// the rollback's writes fail, is TestFaultInjection's crash).
type fullFS struct {
	*host.MemFS
	n, calls int
}

func (f *fullFS) WriteFile(p string, data []byte) error {
	if f.calls++; f.calls != f.n {
		return f.MemFS.WriteFile(p, data)
	}
	// The folders stay behind, as MkdirAll's do.
	probe := path.Join(path.Dir(p), "probe")
	if err := f.MemFS.WriteFile(probe, nil); err == nil {
		f.MemFS.Remove(probe)
	}
	return fmt.Errorf("write %s: no space left on device: %w", p, host.ErrIO)
}

// Swap is the compare-and-swap of MemFS, with the write of WriteFile.
func (f *fullFS) Swap(p string, data, old []byte, existed bool) error {
	now, err := f.MemFS.ReadFile(p)
	if ok := err == nil; ok != existed || (ok && !bytes.Equal(now, old)) {
		return fmt.Errorf("write %s: %w", p, host.ErrChanged)
	}
	return f.WriteFile(p, data)
}

// folders lists every folder of fsys below the root, .arbor/ left out.
func folders(t *testing.T, fsys host.FS) []string {
	t.Helper()
	var out []string
	err := host.Walk(fsys, "", func(dir string, list []host.DirEntry) error {
		for _, de := range list {
			if p := path.Join(dir, de.Name); de.IsDir && p != ".arbor" {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFullDiskLeavesNoFolders fills the disk at every write of operations
// that create folders: the failed operation leaves neither the files nor
// the folders its writes made (an empty folder in the tree is a domain or
// topic with nothing in it, listed by tree and status).
func TestFullDiskLeavesNoFolders(t *testing.T) {
	ops := []struct {
		name string
		op   api.Operation
	}{
		{"add", api.Operation{Type: "ADD", Path: "ops/oncall/pager", Title: "Rota", Reason: "new"}},
		{"move folder", api.Operation{Type: "MOVE", Path: "eng/billing", To: "finance/money", Reason: "move"}},
		{"move entry", api.Operation{Type: "MOVE", Path: "eng/billing/old_retry.md", To: "ops/billing/renamed.md", Reason: "move"}},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			for n := 1; ; n++ {
				mem := memOf(t, fixtureWithSubtopic())
				before, dirs := treeFiles(mem), folders(t, mem)
				ffs := &fullFS{MemFS: mem, n: n}
				c := &Curator{FS: ffs, Clock: clock, Catalog: load(t, mem)}
				a := c.Apply([]api.Operation{tc.op}).Applied[0]
				if a.Status == api.StatusSuccess {
					if ffs.calls >= n {
						t.Fatalf("n=%d: succeeded through a full disk", n)
					}
					break // the disk never filled: every n was tried
				}
				if !strings.Contains(a.Message, "no space left on device") {
					t.Errorf("n=%d: message %q does not say why", n, a.Message)
				}
				if d := diffFiles(before, treeFiles(mem)); d != "" {
					t.Fatalf("n=%d: the failed operation changed the tree:\n%s", n, d)
				}
				if got := folders(t, mem); !slices.Equal(got, dirs) {
					t.Fatalf("n=%d (%s): the failed operation left folders: %v, were %v", n, a.Message, got, dirs)
				}
			}
		})
	}
}

// spaceFS refuses writes for want of space (host.ErrNoSpace, the host's
// code -8): the nth write only, or, forGood, every write from the nth on,
// the undo's too. Removals free space and always succeed.
type spaceFS struct {
	*host.MemFS
	n, calls int
	forGood  bool
}

func (f *spaceFS) full(p string) error {
	if f.calls++; f.calls == f.n || (f.forGood && f.calls > f.n) {
		return fmt.Errorf("write %s: %w: no space left on device", p, host.ErrNoSpace)
	}
	return nil
}

func (f *spaceFS) WriteFile(p string, data []byte) error {
	if err := f.full(p); err != nil {
		return err
	}
	return f.MemFS.WriteFile(p, data)
}

func (f *spaceFS) Swap(p string, data, old []byte, existed bool) error {
	if err := f.full(p); err != nil {
		return err
	}
	return f.MemFS.Swap(p, data, old, existed)
}

func (f *spaceFS) Append(p string, data []byte) error {
	if err := f.full(p); err != nil {
		return err
	}
	return f.MemFS.Append(p, data)
}

// A write refused for want of space says so first, and that nothing was
// written, which holds when the undo finished; when the disk stays full
// and the undo could not finish, it says that instead, never "nothing".
func TestFullDiskSaysSo(t *testing.T) {
	ops := []api.Operation{
		{Type: "ADD", Path: "ops/oncall/pager", Title: "Rota", Reason: "new"},
		{Type: "UPDATE", Path: "eng/billing/invoice_retry.md", Summary: "new", Reason: "edit"},
		{Type: "MOVE", Path: "eng/billing", To: "finance/money", Reason: "move"},
		{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "eng/billing/invoice_retry.md", Reason: "dedupe"},
	}
	undoFailed := 0
	for _, op := range ops {
		for _, forGood := range []bool{false, true} {
			for n := 1; ; n++ {
				mem := memOf(t, fixtureWithSubtopic())
				before := treeFiles(mem)
				sfs := &spaceFS{MemFS: mem, n: n, forGood: forGood}
				c := &Curator{FS: sfs, Clock: clock, Catalog: load(t, mem)}
				a := c.Apply([]api.Operation{op}).Applied[0]
				if sfs.calls < n {
					break // the disk never filled: every n was tried
				}
				if a.Status == api.StatusSuccess {
					continue // the audit line was the write refused
				}
				switch {
				case strings.Contains(a.Message, "rollback incomplete"):
					undoFailed++
					if !strings.HasPrefix(a.Message, "the disk is full, and the undo could not finish") || strings.Contains(a.Message, "nothing was written") {
						t.Errorf("%s n=%d for good: %q", op.Type, n, a.Message)
					}
				case !strings.HasPrefix(a.Message, "the disk is full: nothing was written (") || !strings.Contains(a.Message, "no space left on device"):
					t.Errorf("%s n=%d forGood=%v: %q", op.Type, n, forGood, a.Message)
				default:
					if d := diffFiles(before, treeFiles(mem)); d != "" {
						t.Errorf("%s n=%d forGood=%v: said nothing was written, but:\n%s", op.Type, n, forGood, d)
					}
				}
			}
		}
	}
	if undoFailed == 0 {
		t.Error("no case where the undo failed: the second message was never checked")
	}
}
