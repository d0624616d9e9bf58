package curate

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// A MOVE carries an entry, or a folder and everything in it, to another
// place in the tree, and points every link that named what moved at its
// new path (docs/ABI.md §4.2). Files move as they are: a move says where
// knowledge belongs, not what it says, so an entry keeps its bytes (and
// its dates) unless one of its own links must change. A file it leaves as
// it is (an attachment, whatever its size or kind, an entry whose links
// stay) is carried by the host's rename, which reads nothing and is undone
// by a rename back; one it edits is written at its new place and removed
// from the old. Changes are ordered so that a crash leaves each file at
// its old place or its new one (an edited one perhaps at both), never
// lost: the destination first, then the entries whose links change, the
// sources' removal last.

// moveFile is one file a MOVE carries.
type moveFile struct {
	from, to string
	data     []byte // the bytes written at to, or read at from when renamed
	rename   bool   // carried by a rename: its bytes stay as they are
	read     bool   // data holds what was read at from (renamed: an entry, a context file)
	entry    *tree.Entry
	context  *tree.Context
	broken   bool // an unparseable .md, moved as it is and still reported
	links    int  // links of the entry itself rewritten
}

// move moves the entry or the folder v names to where v.target says.
// A rename cannot cross from one device to another (a mount inside the
// tree): then every file renamed went back, and the MOVE is made again
// by copying, which a copy's limits bound (checkCarry).
func (c *Curator) move(a *Applied, v valid) error {
	err := c.moveBy(a, v, false)
	if errors.Is(err, host.ErrCrossDevice) && !errors.Is(err, errRollbackIncomplete) {
		return c.moveBy(a, v, true)
	}
	return err
}

// moveBy makes the MOVE, each file it does not edit carried by a rename,
// or, byCopy, every file read and written at its new place.
func (c *Curator) moveBy(a *Applied, v valid, byCopy bool) error {
	src, folder, err := c.moveSource(a, v)
	if err != nil {
		return err
	}
	dst, err := c.moveDest(src, folder, v)
	if err != nil {
		return err
	}
	a.Path = src
	var files, dirs []string
	if folder {
		if err := c.walk(src, &files, &dirs); err != nil {
			return fmt.Errorf("move %s: %w", src, err)
		}
	} else {
		files = []string{src}
	}
	if err := c.refreshMoved(src, folder, files); err != nil {
		return err
	}
	if folder && byCopy {
		if err := c.checkCarry(src, dst, files); err != nil {
			return err
		}
	}
	if folder && v.base != "" {
		return fmt.Errorf("base is the version of an entry; %s is a folder, which has none", src)
	}
	if err := c.checkBase("move", src, v.base, nil); err != nil {
		return err
	}
	cat := c.catalog()
	newPath := func(p string) string { return dst + strings.TrimPrefix(p, src) }
	moved := map[string]string{}
	for _, p := range files {
		if cat.Has(p) {
			moved[p] = newPath(p)
		}
	}
	if !folder && !c.known(src) {
		return fmt.Errorf("cannot move %s: the file is not loaded (over the size limit or unreadable)", src)
	}
	pinned := c.pinned(moved)
	relink := c.noted(relinkMoved(cat, moved, pinned))
	referrers, err := c.referrers(moved, pinned)
	if err != nil {
		return err
	}
	since, err := c.linkersSince(relink, func(p string) bool {
		_, moves := moved[p]
		return moves || below(p, src) || slices.Contains(referrers, p)
	})
	if err != nil {
		return err
	}
	referrers = append(referrers, since...)
	slices.Sort(referrers)

	var plan []moveFile
	links, relinked := 0, 0
	for _, p := range files {
		f, err := c.planMove(p, newPath(p), relink, byCopy)
		if err != nil {
			return err
		}
		plan = append(plan, f)
		if f.links > 0 {
			links += f.links
			relinked++
		}
	}
	type rewrite struct {
		data   []byte
		parsed *tree.Entry
	}
	var rewrites []rewrite
	for _, r := range referrers {
		ref, ok := cat.Get(r)
		if !ok {
			continue
		}
		data, parsed, n, err := c.rewriteReferrer(ref, relink)
		if err != nil {
			return fmt.Errorf("rewrite links of %s: %w", r, err)
		}
		if n > 0 {
			rewrites = append(rewrites, rewrite{data, parsed})
			links += n
			relinked++
		}
	}

	t := c.newTxn(cat)
	// Folders above the destination get their context.md first, as ADD's.
	if up := parentDir(dst); folder && up != "" {
		err = c.writeContexts(t, up)
	} else if !folder {
		err = c.writeContexts(t, path.Dir(dst))
	}
	// Each folder's context.md before its entries, outermost first.
	order := slices.Clone(plan)
	slices.SortStableFunc(order, func(x, y moveFile) int {
		if cx, cy := x.context != nil, y.context != nil; cx != cy {
			if cx {
				return -1
			}
			return 1
		}
		return strings.Count(x.to, "/") - strings.Count(y.to, "/")
	})
	for _, f := range order {
		if err != nil {
			break
		}
		if f.rename {
			err = t.rename(f.from, f.to, f.data, f.read)
		} else {
			err = t.write(f.to, f.data)
		}
		if err != nil {
			break
		}
		switch {
		case f.entry != nil:
			t.putEntry(cat, f.entry)
		case f.context != nil:
			t.putContext(cat, f.context)
		case f.broken:
			to, data := f.to, f.data
			t.stage(cat, Change{Path: to, Removed: true}, func(cat *catalog.Catalog) { cat.Take(to, data) })
		}
	}
	for _, rw := range rewrites {
		if err != nil {
			break
		}
		c.relinking(rw.parsed.Path)
		if err = t.write(rw.parsed.Path, rw.data); err == nil {
			t.putEntry(cat, rw.parsed)
		}
	}
	// The sources last: deepest first, a folder's context.md after its entries.
	slices.SortStableFunc(order, func(x, y moveFile) int {
		if dx, dy := strings.Count(x.from, "/"), strings.Count(y.from, "/"); dx != dy {
			return dy - dx
		}
		if cx, cy := x.context != nil, y.context != nil; cx != cy {
			if cx {
				return 1
			}
			return -1
		}
		return strings.Compare(x.from, y.from)
	})
	for _, f := range order {
		if err != nil {
			break
		}
		if !f.rename { // a renamed file left its old place already
			if err = t.remove(f.from); err != nil {
				break
			}
		}
		if f.entry != nil || f.context != nil || f.broken {
			t.removed(cat, f.from)
		}
	}
	if err == nil && folder {
		// The files go before their folders can.
		err = t.apply()
	}
	var notes []string
	if byCopy {
		notes = append(notes, "copied, not renamed: a rename cannot carry its files to "+dst+", on another device (a mount inside the tree)")
	}
	if err == nil && folder {
		notes = append(notes, c.removeFolders(append(dirs, src), nil)...)
	}
	if err := c.finish(t, err); err != nil {
		return fmt.Errorf("move %s to %s: %w", src, dst, err)
	}
	a.To, a.Moved = dst, moved
	if folder {
		entries, contexts := 0, 0
		for _, f := range plan {
			switch {
			case f.context != nil:
				contexts++
			case f.entry != nil:
				entries++
			}
		}
		a.Message = fmt.Sprintf("moved folder %s to %s: %s", src, dst, folderCounts(entries, contexts, len(plan)))
	} else {
		a.Message = fmt.Sprintf("moved %s to %s", src, dst)
	}
	a.Message += fmt.Sprintf("; rewrote %s in %s", atoms.Count(links, "link", "links"), atoms.Count(relinked, "entry", "entries"))
	if len(notes) > 0 {
		a.Message += " (" + strings.Join(notes, "; ") + ")"
	}
	return nil
}

// moveSource resolves what a MOVE moves: an entry, or a folder (a path
// without .md that is no folder may name the entry path.md, as in DELETE).
func (c *Curator) moveSource(a *Applied, v valid) (string, bool, error) {
	if v.folder {
		st, ok, err := c.exists(v.path)
		switch {
		case err != nil:
			return "", false, err
		case ok && st.IsDir:
			return v.path, true, nil
		case ok:
			return "", false, fmt.Errorf("not found: %s (a file that is not an entry)", v.path)
		}
		p, err := c.spellPath(v.path+".md", "", false, false)
		if err != nil {
			return "", false, err
		}
		if !c.known(p) {
			return "", false, fmt.Errorf("not found: %s", v.path)
		}
		a.Path = p
		return p, false, nil
	}
	st, ok, err := c.exists(v.path)
	switch {
	case err != nil:
		return "", false, err
	case ok && st.IsDir:
		return "", false, fmt.Errorf("not found: %s (a folder; to move it, give its path without .md)", v.path)
	case !ok && !c.known(v.path):
		return "", false, fmt.Errorf("not found: %s", v.path)
	}
	return v.path, false, nil
}

// moveDest resolves where src goes. An entry moves into the folder
// v.target (keeping its file name) or to the entry path v.target (its own
// file name kept as spelt when v.target names it); a
// folder moves into v.target when that folder exists, else becomes
// v.target, as mv does. Folders that exist keep their spelling and new
// names take the form the engine creates (spell.go).
func (c *Curator) moveDest(src string, folder bool, v valid) (string, error) {
	var dst string
	switch {
	case folder:
		to, err := c.spellPath(v.target, "", true, true)
		if err != nil {
			return "", err
		}
		st, ok, err := c.exists(to)
		switch {
		case err != nil:
			return "", err
		case ok && !st.IsDir:
			return "", fmt.Errorf("cannot move %s to %s: a file is there", src, to)
		case ok:
			dst = to + "/" + baseName(src)
		default:
			dst = to
		}
		if dst == src || below(dst, src) {
			return "", fmt.Errorf("cannot move %s into itself (%s)", src, dst)
		}
		if _, ok, err := c.exists(dst); err != nil {
			return "", err
		} else if ok || len(c.twins(true, dst)) > 0 {
			return "", fmt.Errorf("already exists: %s", dst)
		}
		return dst, nil
	case v.toFolder:
		to, err := c.spellPath(v.target, "", true, true)
		if err != nil {
			return "", err
		}
		dst = to + "/" + baseName(src)
	case baseName(v.target) == baseName(src) && parentDir(v.target) != "":
		// The entry's own name, as a person gave it ("Fax Machine.md"),
		// moves with it (tidy archives an entry to _archive/<its path>):
		// only the folders take the engine's spelling.
		to, err := c.spellPath(parentDir(v.target), "", true, true)
		if err != nil {
			return "", err
		}
		dst = to + "/" + baseName(src)
	default:
		var err error
		if dst, err = c.spellPath(v.target, "", false, true); err != nil {
			return "", err
		}
	}
	if dst == src {
		return "", fmt.Errorf("%s is already there", src)
	}
	return dst, nil
}

// refreshMoved reads again what a MOVE carries, so that it moves what is
// on disk now; catalog records below a moved folder whose file is gone
// are forgotten (refresh).
func (c *Curator) refreshMoved(src string, folder bool, files []string) error {
	for _, p := range files {
		if tree.IsMarkdown(p) {
			if _, err := c.refresh(p); err != nil {
				return err
			}
		}
	}
	if !folder {
		return nil
	}
	for _, p := range c.catalog().Stamped() {
		if below(p, src) && !slices.Contains(files, p) {
			if _, err := c.refresh(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// pinned returns the entries that stay where they are but whose base name
// an entry that moves under a new name takes: links naming them by that
// name alone would stop resolving (relinkMoved).
func (c *Curator) pinned(moved map[string]string) map[string]bool {
	cat := c.catalog()
	out := map[string]bool{}
	for from, to := range moved {
		if strings.EqualFold(baseName(from), baseName(to)) {
			continue
		}
		if q, ok := cat.Resolve(strings.TrimSuffix(baseName(to), ".md")); ok {
			if _, moves := moved[q]; !moves {
				out[q] = true
			}
		}
	}
	return out
}

// referrers returns, read again from disk, the entries outside the moved
// set that link to a moved or pinned entry, sorted.
func (c *Curator) referrers(moved map[string]string, pinned map[string]bool) ([]string, error) {
	cat := c.catalog()
	var targets []string
	for p := range moved {
		targets = append(targets, p)
	}
	for p := range pinned {
		targets = append(targets, p)
	}
	slices.Sort(targets)
	var out []string
	for _, p := range targets {
		for _, r := range cat.Backlinks(p) {
			if _, moves := moved[r]; !moves && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	for _, r := range out {
		if _, err := c.refresh(r); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// A MOVE whose renames cannot cross to the destination (another device)
// copies each file of the folder, reading it and writing it at its new
// place (and keeps the old bytes until the move is whole, to undo it):
// maxCarry bounds one file it copies, maxCarryTotal all of them. A folder
// of attachments past either is refused before anything is written: read
// whole, a 1.5 GB file ran the engine out of memory part way, leaving its
// copy beside the original.
const (
	maxCarry      = 64 << 20
	maxCarryTotal = 256 << 20
)

// checkCarry refuses the MOVE by copying of the folder src to dst when a
// file of it, or all of them, are larger than a MOVE copies.
func (c *Curator) checkCarry(src, dst string, files []string) error {
	why := fmt.Sprintf("cannot move %s to %s: a rename cannot carry its files there, on another device (a mount inside the tree), and a copy reads each file whole", src, dst)
	var total int64
	for _, p := range files {
		fi, err := c.FS.Stat(p)
		if err != nil {
			continue // planMove's read says why
		}
		if fi.Size > maxCarry {
			return fmt.Errorf("%s: %s is %s, over the %s a MOVE copies; move that file by hand first (the engine follows what moves on disk), then the folder", why, p, mib(fi.Size), mib(maxCarry))
		}
		total += fi.Size
	}
	if total > maxCarryTotal {
		return fmt.Errorf("%s: its files hold %s, over the %s a MOVE copies at once; move its largest files by hand first (the engine follows what moves on disk), or its subfolders one by one", why, mib(total), mib(maxCarryTotal))
	}
	return nil
}

// mib says a size in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// planMove checks the destination to of the file from and returns how it
// is carried there. A file the catalog holds is read: an entry with its
// links rewritten by relink, or a context.md (the engine's default one
// written anew for its new folder), is written at to, one left as it is
// renamed. Any other file (an attachment, a FIFO, a note over the size
// limit) is renamed unread; byCopy, every file is read and written.
func (c *Curator) planMove(from, to string, relink tree.Relink, byCopy bool) (moveFile, error) {
	cat := c.catalog()
	f := moveFile{from: from, to: to}
	if err := c.checkAbsent(to); err != nil {
		return f, err
	}
	if tw := c.twins(false, to); len(tw) > 0 {
		return f, fmt.Errorf("already exists: %s (as %s, which differs only in case or Unicode form)", to, tw[0])
	}
	_, f.broken = cat.Broken(from)
	e, isEntry := cat.Get(from)
	if _, isContext := cat.Context(from); !byCopy && !isEntry && !isContext && !f.broken {
		f.rename = true
		return f, nil
	}
	data, err := c.FS.ReadFile(from)
	switch {
	case errors.Is(err, host.ErrInvalid) && !errors.Is(err, host.ErrTooLong) && byCopy:
		// Hosts read regular files only: a FIFO or a socket named like
		// a note (a DELETE keeps such a file), which a rename carries.
		return f, fmt.Errorf("cannot carry %s: a rename cannot carry it to %s, on another device (a mount inside the tree), and it is not a regular file (a FIFO or a socket?), which a copy cannot read; move it by hand first: %w", from, to, err)
	case err != nil:
		return f, fmt.Errorf("read %s: %w", from, err)
	}
	f.data = data
	switch {
	case isEntry:
		if err := tree.CheckNewEntryPath(to); err != nil {
			return f, err
		}
		if nd, _, n, err := c.rewriteReferrer(e, relink); err != nil {
			return f, fmt.Errorf("rewrite links of %s: %w", from, err)
		} else if n > 0 {
			f.data, f.links = nd, n
		}
		if f.entry, err = tree.ParseEntry(to, f.data); err != nil {
			return f, fmt.Errorf("entry %s does not parse at %s (refused): %w", from, to, err)
		}
	case path.Base(from) == "context.md" && !f.broken:
		if bytes.Equal(data, tree.NewContext(path.Dir(from))) {
			f.data = tree.NewContext(path.Dir(to))
		}
		if f.context, err = tree.ParseContext(to, f.data); err != nil {
			return f, fmt.Errorf("context %s does not parse at %s (refused): %w", from, to, err)
		}
	case f.broken:
		if err := tree.CheckNewEntryPath(to); err != nil && path.Base(from) != "context.md" {
			return f, err
		}
	}
	f.rename = !byCopy && bytes.Equal(f.data, data)
	f.read = f.rename
	return f, nil
}

// folderCounts says what a folder operation touched, of files in all.
func folderCounts(entries, contexts, files int) string {
	s := atoms.Count(entries, "entry", "entries") + ", " + atoms.Count(contexts, "context file", "context files")
	if other := files - entries - contexts; other > 0 {
		s += ", " + atoms.Count(other, "other file", "other files")
	}
	return s
}
