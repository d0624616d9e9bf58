package curate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Refresh brings the catalog in step with files others changed on disk
// (an editor, git, another process), as an operation does for the file it
// reads (refresh): the paths a host's watcher reported, or, without
// paths, every folder of the tree listed and every file whose size or
// modification time moved read again. Only what changed is read and
// parsed; OnChange hears of each change. Paths in dot-folders (.arbor,
// .git) are ignored: they are not knowledge. It writes nothing, and
// returns the entries that are gone, whose signals the caller drops.
func (c *Curator) Refresh(paths []string) (api.RefreshResult, []string, error) {
	c.lists = nil
	r := refresher{c: c, start: host.FileTime(c.FS)}
	if len(paths) == 0 {
		r.res.Scanned = true
		if err := r.folder(""); err != nil {
			return api.RefreshResult{}, nil, err
		}
	}
	for _, raw := range paths {
		clean, err := api.CleanPath(raw)
		if err != nil {
			if errors.Is(err, api.ErrInvalidPath) && hidden(raw) {
				continue
			}
			return api.RefreshResult{}, nil, err
		}
		if err := r.path(clean); err != nil {
			return api.RefreshResult{}, nil, err
		}
	}
	slices.Sort(r.res.Paths)
	r.res.Paths = slices.Compact(r.res.Paths)
	return r.res, r.removed, nil
}

// hidden reports a path inside a dot-folder or naming a dot-file (".."
// aside, which stays an error): a watcher reports changes in .arbor and
// .git too.
func hidden(p string) bool {
	segs := strings.Split(p, "/")
	for _, seg := range segs {
		if seg == ".." || seg == "." {
			return false
		}
	}
	for _, seg := range segs {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// refresher is one Refresh.
type refresher struct {
	c       *Curator
	res     api.RefreshResult
	start   int64    // when the listing began by the files' clock (host.FileTime), Unix milliseconds (catalog.Note)
	removed []string // entries that are gone
}

// path refreshes what is at p now: a file, a folder, or nothing.
func (r *refresher) path(p string) error {
	st, err := r.c.FS.Stat(p)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return r.gone(p)
	case errors.Is(err, host.ErrDenied):
		// A symbolic link of the tree, which hosts do not follow, or a
		// path leading out of the root: no part of the tree.
		return r.refused(p)
	case err != nil:
		return fmt.Errorf("refresh: stat %s: %w", p, err)
	case st.IsDir:
		// A file of that name the folder replaced is gone (check forgets
		// it); what the folder holds is new.
		if _, known := r.c.catalog().Stamp(p); known {
			if err := r.check(p); err != nil {
				return err
			}
		}
		return r.folder(p)
	}
	if r.wasFolder(p) {
		// A folder the file replaced is gone, with all it held.
		for _, q := range r.c.catalog().Stamped() {
			if below(q, p) {
				if err := r.check(q); err != nil {
					return err
				}
			}
		}
	}
	return r.file(p, st)
}

// wasFolder reports whether the catalog knows p as a folder (one holding
// files it read), not as a file.
func (r *refresher) wasFolder(p string) bool {
	cat := r.c.catalog()
	if _, file := cat.Stamp(p); file {
		return false
	}
	return slices.Contains(cat.Spellings(p), p)
}

// folder lists dir and everything below it, refreshes the markdown files
// whose listing changed, and forgets what the catalog holds below dir
// that is no longer there.
func (r *refresher) folder(dir string) error {
	scan := r.c.catalog().NewScan()
	if err := r.walk(dir, scan); err != nil {
		return err
	}
	gone, ok := scan.Unlisted(dir)
	if !ok {
		// Which files were listed is not known: each stamped one is read
		// again, which finds the gone ones too.
		for _, p := range r.c.catalog().Stamped() {
			if below(p, dir) {
				gone = append(gone, p)
			}
		}
	}
	for _, p := range gone {
		if err := r.check(p); err != nil {
			return err
		}
	}
	return nil
}

// walk refreshes every file below dir, the listings coming from one walk
// of the tree (host.WalkFiles), each file looked up and marked in scan.
func (r *refresher) walk(dir string, scan *catalog.Scan) error {
	var fileErr error // returned as it is; a listing's error is the walk's
	err := host.WalkFiles(r.c.FS, dir, nil, func(d string, de host.DirEntry) error {
		if !tree.IsMarkdown(de.Name) {
			return nil
		}
		fi := catalog.InfoOf(de)
		p, unchanged := scan.File(d, de.Name, fi)
		if unchanged {
			return nil
		}
		fileErr = r.changed(p, fi)
		scan.Listed(p)
		return fileErr
	})
	if err != nil && err != fileErr {
		return fmt.Errorf("refresh: %w", err)
	}
	return err
}

// file refreshes the file p, which the host reported and a stat
// describes as de, unless it is no markdown file. It is read whatever its
// size and time say: a tool that restores a time (cp -p, rsync -a, tar x,
// touch -r) can put other bytes of the same size under the time the
// catalog noted, and on a storage without change times (catalog.FileInfo)
// the report is the only sign of it.
func (r *refresher) file(p string, de host.DirEntry) error {
	if !tree.IsMarkdown(p) {
		return nil
	}
	return r.changed(p, catalog.InfoOf(de))
}

// changed reads again the markdown file p, which a listing or stat shows
// as fi, other than as the catalog read it. A file over the size limit
// stays out, as at open, unread: one the catalog held (a note grown into
// a log, a dump saved over it) was read whole, gigabytes, before the
// limit dropped it.
func (r *refresher) changed(p string, fi catalog.FileInfo) error {
	cat := r.c.catalog()
	if fi.Size > int64(r.c.maxBytes()) {
		return r.tally(p, func() (bool, error) { return r.c.forget(p), nil })
	}
	if err := r.check(p); err != nil {
		return err
	}
	cat.Note(p, fi, r.start)
	return nil
}

// gone forgets p and everything the catalog holds below it.
func (r *refresher) gone(p string) error {
	for _, q := range r.c.catalog().Stamped() {
		if q == p || below(q, p) {
			if err := r.check(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// refused forgets p and everything the catalog holds below it, without
// reading them (not counted as checked): the host refuses to.
func (r *refresher) refused(p string) error {
	for _, q := range r.c.catalog().Stamped() {
		if q == p || below(q, p) {
			if err := r.tally(q, func() (bool, error) { return r.c.forget(q), nil }); err != nil {
				return err
			}
		}
	}
	return nil
}

// check reads p again and counts what changed.
func (r *refresher) check(p string) error {
	r.res.Checked++
	return r.tally(p, func() (bool, error) { return r.c.refresh(p) })
}

// tally runs update, which brings the catalog's view of p in step, and
// counts what changed.
func (r *refresher) tally(p string, update func() (bool, error)) error {
	_, before := r.c.catalog().Stamp(p)
	wasEntry := r.c.catalog().Has(p)
	changed, err := update()
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if !changed {
		return nil
	}
	_, after := r.c.catalog().Stamp(p)
	r.res.Paths = append(r.res.Paths, p)
	switch {
	case before && !after:
		r.res.Removed++
		if wasEntry && tree.IsEntryPath(p) {
			r.removed = append(r.removed, p)
		}
	case !before:
		r.res.Added++
	default:
		r.res.Updated++
	}
	return nil
}

// below reports whether p lies inside folder dir ("" is the root).
func below(p, dir string) bool {
	return dir == "" || strings.HasPrefix(p, dir+"/")
}
