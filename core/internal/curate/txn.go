package curate

import (
	"bytes"
	"errors"
	"fmt"
	"path"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// txn plans the file writes, removals and renames of one operation, makes
// them in order (apply) and can undo them. Planning reads what each file
// written or removed holds now, so that the change can be undone (a rename
// is undone by a rename back, and need not read its file), and checks it;
// nothing is changed until apply, which first hands the whole plan to
// before (the journal: after a crash, what the operation meant to write
// tells what it did). The catalog is only touched by commit, after every
// file change succeeded.
//
// Every change is a compare-and-swap on the catalog's stamp of the file:
// it is planned only while the file on disk is still what the catalog last
// read or wrote there (or absent, when the catalog holds nothing there).
// Someone else's change in between (an editor, another process) fails the
// operation with a conflict, and what it already did is undone.
type txn struct {
	fs      host.FS
	cat     *catalog.Catalog
	before  func([]planned) error // run once, before the first change
	plan    []planned
	applied bool
	undo    []func() error // applied in reverse order
	staged  []func()       // catalog updates, run by commit
	changes []Change
}

// planned is one file change of a txn, with what the file held before.
type planned struct {
	path    string
	data    []byte // the new bytes; nil for a removal
	remove  bool
	old     []byte
	existed bool
	// from, when set, makes the change a rename of the file at from to
	// path; read says whether old holds what the plan read of it (an
	// entry, a context file) or it was carried unread (an attachment).
	from string
	read bool
}

// newTxn starts a transaction; before, when not nil, runs once with the
// whole plan before the first change is made.
func newTxn(fs host.FS, cat *catalog.Catalog, before func([]planned) error) *txn {
	return &txn{fs: fs, cat: cat, before: before}
}

// expect fails when the file at p is not what the catalog holds of it.
// removal allows what a removal may find: p already gone, or a file the
// catalog never read (a folder's other files).
func (t *txn) expect(p string, old []byte, existed, removal bool) error {
	want, known := t.cat.Stamp(p)
	switch {
	case known && existed && catalog.SourceKey(old) != want:
		return conflictf("%s changed on disk while the operation ran", p)
	case removal:
		return nil
	case known && !existed:
		return conflictf("%s was removed on disk while the operation ran", p)
	case !known && existed:
		return conflictf("%s appeared on disk while the operation ran", p)
	}
	return nil
}

// snapshot returns the current bytes of p, or nil and false when p does
// not exist.
func (t *txn) snapshot(p string) ([]byte, bool, error) {
	old, err := t.fs.ReadFile(p)
	switch {
	case err == nil:
		return old, true, nil
	case errors.Is(err, host.ErrNotFound):
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("read %s before writing it: %w", p, err)
}

// write plans to replace (or create) p atomically.
func (t *txn) write(p string, data []byte) error {
	old, existed, err := t.snapshot(p)
	if err != nil {
		return err
	}
	if err := t.expect(p, old, existed, false); err != nil {
		return err
	}
	if tree.IsMarkdown(p) {
		// The catalog stamps the files it reads; a MOVE also carries a
		// folder's other files (attachments), which it never reads.
		stamp := catalog.SourceKey(data)
		t.staged = append(t.staged, func() { t.cat.SetStamp(p, stamp) })
	}
	t.plan = append(t.plan, planned{path: p, data: data, old: old, existed: existed})
	return nil
}

// remove plans to delete the file p.
func (t *txn) remove(p string) error {
	old, existed, err := t.snapshot(p)
	if err != nil {
		return err
	}
	if err := t.expect(p, old, existed, true); err != nil {
		return err
	}
	if existed {
		t.plan = append(t.plan, planned{path: p, remove: true, old: old, existed: true})
	}
	return nil
}

// rename plans to carry the file from to to, where nothing is, with the
// host's rename: no byte is read or written, so a file of any size or kind
// (a video, a FIFO) moves whole or not at all, and a rename back undoes
// it. When read, old is what the plan read of the file (an entry, a
// context file), which it must still hold at the rename; a file the plan
// did not read is carried as it is then.
func (t *txn) rename(from, to string, old []byte, read bool) error {
	if _, err := t.fs.Stat(to); err == nil {
		return conflictf("%s appeared on disk while the operation ran", to)
	} else if !errors.Is(err, host.ErrNotFound) {
		return fmt.Errorf("stat %s before carrying %s there: %w", to, from, err)
	}
	if err := t.expect(to, nil, false, false); err != nil {
		return err
	}
	if read {
		if err := t.expect(from, old, true, true); err != nil {
			return err
		}
		if tree.IsMarkdown(to) {
			stamp := catalog.SourceKey(old)
			t.staged = append(t.staged, func() { t.cat.SetStamp(to, stamp) })
		}
	}
	t.plan = append(t.plan, planned{path: to, from: from, old: old, read: read})
	return nil
}

// apply makes the planned changes in order, remembering how to undo each:
// restore the previous bytes, or remove a new file and the folders its
// write created, or rename a carried file back. Calling it again does
// nothing.
func (t *txn) apply() error {
	if t.applied {
		return nil
	}
	t.applied = true
	if len(t.plan) == 0 {
		return nil
	}
	if t.before != nil {
		if err := t.before(t.plan); err != nil {
			return err
		}
	}
	for _, ch := range t.plan {
		if err := t.change(ch); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) change(ch planned) error {
	p, old := ch.path, ch.old
	if ch.from != "" {
		return t.carry(ch)
	}
	if ch.remove {
		// The plan read the file a moment ago: an editor's save since must
		// not be deleted unseen.
		now, exists, err := t.snapshot(p)
		if err != nil {
			return err
		}
		if !exists || !bytes.Equal(now, old) {
			return conflictf("%s changed on disk while the operation ran", p)
		}
		if err := t.fs.Remove(p); err != nil {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		t.undo = append(t.undo, func() error { return t.fs.WriteFile(p, old) })
		return nil
	}
	var missing []string
	if !ch.existed {
		missing = t.missing(p)
	}
	// A compare-and-swap with what the plan read: a save by an editor
	// since (the journal was written in between) fails the operation
	// instead of being overwritten.
	if err := host.Swap(t.fs, p, ch.data, old, ch.existed); err != nil {
		t.unmake(missing)
		if errors.Is(err, host.ErrChanged) {
			return conflictf("%s changed on disk while the operation ran", p)
		}
		return fmt.Errorf("write %s: %w", p, err)
	}
	if ch.existed {
		t.undo = append(t.undo, func() error { return t.fs.WriteFile(p, old) })
		return nil
	}
	for _, d := range missing {
		t.undo = append(t.undo, func() error { t.fs.Remove(d); return nil }) // best effort: an empty folder holds no knowledge
	}
	t.undo = append(t.undo, func() error { return t.fs.Remove(p) })
	return nil
}

// carry renames ch.from to ch.path; undone by a rename back.
func (t *txn) carry(ch planned) error {
	from, to := ch.from, ch.path
	if ch.read {
		// As for a removal: an editor's save since the plan read the file
		// would be carried unseen by the catalog.
		now, exists, err := t.snapshot(from)
		if err != nil {
			return err
		}
		if !exists || !bytes.Equal(now, ch.old) {
			return conflictf("%s changed on disk while the operation ran", from)
		}
	}
	// The host's rename replaces what it finds: a file made at to since
	// the plan must not be.
	if _, err := t.fs.Stat(to); err == nil {
		return conflictf("%s appeared on disk while the operation ran", to)
	}
	missing := t.missing(to)
	if err := t.fs.Rename(from, to); err != nil {
		t.unmake(missing)
		if errors.Is(err, host.ErrNotFound) {
			return conflictf("%s was removed on disk while the operation ran", from)
		}
		return fmt.Errorf("rename %s to %s: %w", from, to, err)
	}
	for _, d := range missing {
		t.undo = append(t.undo, func() error { t.fs.Remove(d); return nil }) // best effort: an empty folder holds no knowledge
	}
	t.undo = append(t.undo, func() error {
		// Renamed back only onto nothing: a file made at from since stays,
		// and the carried one with it at to, where the rollback says so.
		if _, err := t.fs.Stat(from); err == nil {
			return fmt.Errorf("rename %s back to %s: a file is there now", to, from)
		}
		return t.fs.Rename(to, from)
	})
	return nil
}

// missing returns the folders a write or a rename to p will create,
// outermost first (undone innermost first).
func (t *txn) missing(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != ""; d = path.Dir(d) {
		if _, err := t.fs.Stat(d); err == nil {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// unmake removes, innermost first, the folders a failed write or rename
// made: a host makes the folders before the file, and a disk that filled
// up in between leaves them, empty, unless they go now.
func (t *txn) unmake(missing []string) {
	for i := len(missing) - 1; i >= 0; i-- {
		t.fs.Remove(missing[i]) // best effort, as in the undo
	}
}

// rollback undoes every change, newest first, and reports the first
// failure (the tree may then hold part of the operation).
func (t *txn) rollback() error {
	var first error
	for i := len(t.undo) - 1; i >= 0; i-- {
		if err := t.undo[i](); err != nil && first == nil {
			first = err
		}
	}
	t.undo = nil
	t.staged = nil
	t.changes = nil
	t.plan = nil
	return first
}

// stage records a change and the catalog update that goes with it, run
// by commit.
func (t *txn) stage(cat *catalog.Catalog, ch Change, update func(*catalog.Catalog)) {
	t.staged = append(t.staged, func() { update(cat) })
	t.changes = append(t.changes, ch)
}

// putEntry stages a catalog Put of e (and forgets a broken file there).
func (t *txn) putEntry(cat *catalog.Catalog, e *tree.Entry) {
	t.stage(cat, Change{Path: e.Path, Entry: e}, func(cat *catalog.Catalog) {
		cat.ClearBroken(e.Path)
		cat.Put(e)
	})
}

// putContext stages a catalog PutContext.
func (t *txn) putContext(cat *catalog.Catalog, c *tree.Context) {
	t.stage(cat, Change{Path: c.Path, Context: c}, func(cat *catalog.Catalog) {
		cat.ClearBroken(c.Path)
		cat.PutContext(c)
	})
}

// removed stages the catalog removal of p, an entry or a context file.
func (t *txn) removed(cat *catalog.Catalog, p string) {
	t.stage(cat, Change{Path: p, Removed: true}, func(cat *catalog.Catalog) { cat.Forget(p) })
}

// commit applies the staged catalog updates and reports every change.
func (t *txn) commit(onChange func(Change)) {
	for _, f := range t.staged {
		f()
	}
	if onChange != nil {
		for _, ch := range t.changes {
			onChange(ch)
		}
	}
}
