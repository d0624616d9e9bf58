package gitsync

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// go-git's file storage writes a reference, HEAD, the index, the config
// and a pack's index in place: it truncates the file, then writes it. A
// sync killed between the two (SIGKILL, a crash, a full disk) leaves the
// file empty or half written, and every later sync of the root, and git
// itself, fails on it ("ref file is empty"); the branch's last commit is
// then found only by hand. Git writes each of them to a lock file and
// renames it into place. gitDir gives go-git the repository folder with
// that done for it: a file opened for writing is written into memory, and
// on Close to a new file that replaces the old one at once, so a reader or
// the next process finds the old file or the new one, never part of
// either. (tests/faults -mode sync kills syncs to find such files.)
//
// What is kept as go-git does it: loose objects and packs, which go-git
// writes to a temporary file and renames itself; packed-refs, which it
// locks and rewrites the same way; appends. Lock is a no-op on the files
// gitDir writes: Arbor's syncs of a root take turns (.arbor/sync.lock),
// nothing else in Arbor writes the repository, and git takes no such lock
// either (its lock files are what gitDir's renames stand for).
type gitDir struct {
	billy.Filesystem
}

// tmpPrefix names gitDir's new files until they are renamed into place, in
// the repository folder itself: a file left in refs/ by a killed process
// would be read as a reference.
const tmpPrefix = "arbor-write-"

var tmpSeq atomic.Uint64

func (g gitDir) Capabilities() billy.Capability { return billy.Capabilities(g.Filesystem) }

func (g gitDir) Create(name string) (billy.File, error) {
	return g.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (g gitDir) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 || flag&os.O_APPEND != 0 || path.Clean(name) == "packed-refs" {
		return g.Filesystem.OpenFile(name, flag, perm)
	}
	// A file that does not exist is made only once written: go-git opens a
	// reference to create it before comparing its old value, and a failed
	// comparison left an empty reference (go-git#2399).
	f := &gitFile{fs: g.Filesystem, name: name, perm: perm}
	if flag&os.O_TRUNC != 0 {
		// Its old bytes are not needed: whether there were any (the
		// index, rewritten at every staging, can be megabytes).
		fi, err := g.Filesystem.Stat(name)
		switch {
		case errors.Is(err, os.ErrNotExist) && flag&os.O_CREATE != 0:
		case err != nil:
			return nil, err
		default:
			f.dirty = fi.Size() > 0
		}
		return f, nil
	}
	b, err := readAll(g.Filesystem, name)
	switch {
	case errors.Is(err, os.ErrNotExist) && flag&os.O_CREATE != 0:
	case err != nil:
		return nil, err
	default:
		f.buf = b
	}
	return f, nil
}

// sweep removes the new files of writes that never finished (a process
// killed before its rename), once they are older than any write running.
func (g gitDir) sweep() {
	entries, err := g.Filesystem.ReadDir("")
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) && time.Since(e.ModTime()) > time.Hour {
			_ = g.Filesystem.Remove(e.Name())
		}
	}
}

func readAll(fs billy.Filesystem, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// gitFile is a file of the repository opened for writing: its bytes in
// memory, put in place whole on Close.
type gitFile struct {
	fs     billy.Filesystem
	name   string
	perm   os.FileMode
	buf    []byte
	off    int64
	dirty  bool
	closed bool
}

func (f *gitFile) Name() string  { return f.name }
func (f *gitFile) Lock() error   { return nil }
func (f *gitFile) Unlock() error { return nil }

func (f *gitFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *gitFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s at %d: negative offset", f.name, off)
	}
	if off >= int64(len(f.buf)) {
		return 0, io.EOF
	}
	n := copy(p, f.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *gitFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += int64(len(f.buf))
	default:
		return 0, fmt.Errorf("seek %s: whence %d", f.name, whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek %s to %d: negative offset", f.name, offset)
	}
	f.off = offset
	return offset, nil
}

func (f *gitFile) Write(p []byte) (int, error) {
	if f.closed {
		return 0, os.ErrClosed
	}
	end := f.off + int64(len(p))
	if end > int64(len(f.buf)) {
		f.buf = append(f.buf, make([]byte, end-int64(len(f.buf)))...)
	}
	copy(f.buf[f.off:], p)
	f.off, f.dirty = end, true
	return len(p), nil
}

func (f *gitFile) Truncate(size int64) error {
	if size < 0 {
		return fmt.Errorf("truncate %s to %d: negative size", f.name, size)
	}
	if size <= int64(len(f.buf)) {
		f.buf = f.buf[:size]
	} else {
		f.buf = append(f.buf, make([]byte, size-int64(len(f.buf)))...)
	}
	f.dirty = true
	return nil
}

// Close puts the file in place when it was written: a new file in the
// repository folder, synced, then renamed over the old one.
func (f *gitFile) Close() error {
	if f.closed {
		return os.ErrClosed
	}
	f.closed = true
	if !f.dirty {
		return nil
	}
	// A name a killed process left (its pid reused since) is passed over.
	var tmp string
	var w billy.File
	var err error
	for range 8 {
		tmp = fmt.Sprintf("%s%d-%d-%08x", tmpPrefix, os.Getpid(), tmpSeq.Add(1), rand.Uint32())
		if w, err = f.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.perm); !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	_, err = w.Write(f.buf)
	if s, ok := w.(interface{ Sync() error }); ok && err == nil {
		err = s.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if dir := path.Dir(f.name); dir != "." {
			err = f.fs.MkdirAll(dir, 0o755)
		}
	}
	if err == nil {
		err = f.fs.Rename(tmp, f.name)
	}
	if err != nil {
		_ = f.fs.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	return nil
}

// openRepo opens the repository of root with its folder as a gitDir. A
// root whose .git is a file naming the folder elsewhere (a worktree, a
// submodule) is opened as go-git opens it, its writes in place.
func openRepo(root string) (*git.Repository, error) {
	wt := osfs.New(root)
	fi, err := wt.Stat(git.GitDirName)
	if err != nil || !fi.IsDir() {
		return git.PlainOpen(root)
	}
	dot, err := wt.Chroot(git.GitDirName)
	if err != nil {
		return nil, err
	}
	g := gitDir{dot}
	g.sweep()
	return git.Open(filesystem.NewStorage(g, cache.NewObjectLRUDefault()), wt)
}
