package arborhost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/arbormem/arbor/core/host"
)

// folderID tells folders apart (device and inode), for the cycle check.
type folderID struct{ dev, ino uint64 }

func statID(st *unix.Stat_t) folderID { return folderID{uint64(st.Dev), uint64(st.Ino)} }

// walkDir is an open folder of a walk: its descriptor, and for the walk's
// first folder its OS path (links unresolved). A symbolic link in a
// folder needs the folder's OS path (walker.osPath), which is not joined
// for every folder of a walk that meets none.
type walkDir struct {
	fd   int
	full string
}

func (d walkDir) close() { unix.Close(d.fd) }

// openDirAt opens the folder name of the folder fd (AT_FDCWD: a path),
// not following a symbolic link unless follow.
func openDirAt(fd int, name string, follow bool) (walkDir, folderID, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	var nfd int
	var err error
	for {
		if nfd, err = unix.Openat(fd, name, flags, 0); err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return walkDir{}, folderID{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(nfd, &st); err != nil {
		unix.Close(nfd)
		return walkDir{}, folderID{}, err
	}
	return walkDir{fd: nfd}, statID(&st), nil
}

// openWalkRoot opens the folder a walk starts from, checked as ReadDir
// checks it.
func openWalkRoot(r *RootFS, rel string) (walkDir, folderID, error) {
	full, err := r.resolveRead("list", rel)
	if err != nil {
		return walkDir{}, folderID{}, err
	}
	d, id, err := openDirAt(unix.AT_FDCWD, full, true)
	if errors.Is(err, unix.ENOTDIR) {
		if fi, serr := os.Stat(full); serr == nil && !fi.IsDir() {
			return walkDir{}, folderID{}, fmt.Errorf("list %q: not a directory: %w", rel, host.ErrInvalid)
		}
	}
	if err != nil {
		return walkDir{}, folderID{}, osError("list", rel, err)
	}
	d.full = full
	return d, id, nil
}

// open opens the sub-folder name: not through a symbolic link unless the
// listing found it to be one (link, leading inside the root).
func (d walkDir) open(name string, link bool) (walkDir, folderID, error) {
	return openDirAt(d.fd, name, link)
}

// osPath is the OS path of the folder rel of the walk, links unresolved.
func (w *walker) osPath(rel string) string {
	if rel == w.rootRel {
		return w.rootFull
	}
	below := rel
	if w.rootRel != "" {
		below = rel[len(w.rootRel)+1:]
	}
	return filepath.Join(w.rootFull, filepath.FromSlash(below))
}

// isGone reports an error opening a folder listed a moment ago that is no
// longer one: removed, replaced by a file, or by a symbolic link.
func isGone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
}

// dirent is a name of a folder and its type as getdents gives it
// (DT_UNKNOWN where the file system does not say).
type dirent struct {
	name       string
	start, end int // of the name in walkScratch.names, which ends it with a NUL
	typ        uint8
}

// walkScratch is what a walker keeps from one folder to the next: an open
// lists every folder of the tree, and the Go host's collector cannot stop
// the module's thread to collect what each listing left behind
// (pauseCollector, host/cmd/arbor).
type walkScratch struct {
	buf   []byte          // getdents' records
	names []byte          // the names of the folder being read, each ended by a NUL (fstatatIn)
	ents  []dirent        // its entries
	list  []host.DirEntry // its listing, when the walker's caller consumes each before the next (walker.reuse)
}

// readDir reads the names of the open folder fd with their types,
// dot-names left out, sorted by name. Not unix.ParseDirent, which drops
// the types: a walk resumed from the folder it reached lists the folders
// above it again only for their sub-folders, and the types spare it a
// stat of each of their files. The names share one string, and the
// entries are the walker's until its next readDir; so are the names
// themselves when the walker's caller is done with each listing before
// the next (walker.reuse).
func (w *walker) readDir(fd int) ([]dirent, error) {
	sc := w.scratch
	if sc.buf == nil {
		sc.buf = make([]byte, 32<<10)
	}
	sc.names, sc.ents = sc.names[:0], sc.ents[:0]
	for {
		n, err := unix.ReadDirent(fd, sc.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		for b := sc.buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, fmt.Errorf("getdents: a record of %d bytes: %w", reclen, host.ErrIO)
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) > 0 && name[0] != '.' {
				sc.ents = append(sc.ents, dirent{start: len(sc.names), end: len(sc.names) + len(name), typ: b[18]})
				sc.names = append(sc.names, name...)
				sc.names = append(sc.names, 0)
			}
			b = b[reclen:]
		}
	}
	var all string
	switch {
	case len(sc.names) == 0:
	case w.reuse:
		all = unsafe.String(&sc.names[0], len(sc.names))
	default:
		all = string(sc.names)
	}
	for i := range sc.ents {
		sc.ents[i].name = all[sc.ents[i].start:sc.ents[i].end]
	}
	slices.SortFunc(sc.ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return sc.ents, nil
}

// list lists the open folder d, as ReadDir would (dot-names left out),
// and adds its sub-folders to walk (addSub): each name described relative
// to d's descriptor (fstatat), with no path to resolve. Unless full, only
// the sub-folders: a file that getdents says is one is not described.
func (w *walker) list(d walkDir, rel string, full bool) ([]host.DirEntry, error) {
	ents, err := w.readDir(d.fd)
	if err != nil {
		return nil, err
	}
	var out []host.DirEntry
	switch {
	case full && w.reuse:
		w.scratch.list = slices.Grow(w.scratch.list[:0], len(ents))
		out = w.scratch.list
	case full:
		out = make([]host.DirEntry, 0, len(ents))
	}
	for _, e := range ents {
		if !full && e.typ != unix.DT_DIR && e.typ != unix.DT_LNK && e.typ != unix.DT_UNKNOWN {
			continue
		}
		name := e.name
		st, err := fstatatIn(d.fd, w.scratch.names[e.start:e.end+1])
		if err != nil {
			continue // removed since the listing
		}
		var de host.DirEntry
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if inTree(path.Join(rel, name)) {
				continue // not followed, as ReadDir leaves it out
			}
			full := filepath.Join(w.osPath(rel), name)
			own, err := os.Lstat(full)
			if err != nil {
				continue
			}
			fi := w.r.linkInfo(full, own)
			de = dirEntry(name, fi)
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok && de.IsDir {
				w.addSub(name, folderID{uint64(sys.Dev), uint64(sys.Ino)}, true)
			}
		case unix.S_IFDIR:
			de = statEntry(name, &st)
			w.addSub(name, statID(&st), false)
		default:
			de = statEntry(name, &st)
		}
		if full {
			out = append(out, de)
		}
	}
	return out, nil
}
