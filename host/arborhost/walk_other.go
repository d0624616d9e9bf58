//go:build !linux

package arborhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arbormem/arbor/core/host"
)

// folderID tells folders apart by their path with links resolved, for
// the cycle check: without file descriptors to walk by (walk_linux.go),
// each folder's path is resolved anyway.
type folderID string

// walkDir is a folder of a walk, by its OS path (links unresolved).
type walkDir struct{ full string }

func (walkDir) close() {}

// openWalkRoot finds the folder a walk starts from, checked as ReadDir
// checks it.
func openWalkRoot(r *RootFS, rel string) (walkDir, folderID, error) {
	full, err := r.resolveRead("list", rel)
	if err != nil {
		return walkDir{}, "", err
	}
	fi, err := os.Stat(full)
	if err != nil {
		return walkDir{}, "", osError("list", rel, err)
	}
	if !fi.IsDir() {
		return walkDir{}, "", fmt.Errorf("list %q: not a directory: %w", rel, host.ErrInvalid)
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return walkDir{}, "", osError("list", rel, err)
	}
	return walkDir{full}, folderID(real), nil
}

// open finds the sub-folder name: not through a symbolic link unless the
// listing found it to be one (link).
func (d walkDir) open(name string, link bool) (walkDir, folderID, error) {
	full := filepath.Join(d.full, name)
	fi, err := os.Lstat(full)
	if err != nil {
		return walkDir{}, "", err
	}
	if fi.Mode()&fs.ModeSymlink != 0 && !link {
		return walkDir{}, "", fs.ErrNotExist // replaced by a link since the listing
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return walkDir{}, "", err
	}
	return walkDir{full}, folderID(real), nil
}

// walkScratch is what a walker keeps from one folder to the next: here,
// where ReadDir lists each folder, nothing.
type walkScratch struct{}

// isGone reports an error finding a folder listed a moment ago that is no
// longer there.
func isGone(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// list lists the folder d through ReadDir (dot-names left out), and adds
// its sub-folders to walk (full or not: ReadDir describes every name
// anyway).
func (w *walker) list(d walkDir, rel string, _ bool) ([]host.DirEntry, error) {
	all, err := w.r.ReadDir(rel)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, de := range all {
		if strings.HasPrefix(de.Name, ".") {
			continue
		}
		out = append(out, de)
		if !de.IsDir {
			continue
		}
		full := filepath.Join(d.full, de.Name)
		real, err := filepath.EvalSymlinks(full)
		if err != nil {
			continue
		}
		fi, err := os.Lstat(full)
		if err != nil {
			continue
		}
		w.addSub(de.Name, folderID(real), fi.Mode()&fs.ModeSymlink != 0)
	}
	return out, nil
}
