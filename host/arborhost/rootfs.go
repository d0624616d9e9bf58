package arborhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/rootlock"
)

// RootFS is a host.FS over one folder of the real file system: the memory
// root the engine is granted, and nothing else. It backs the arbor_host
// imports of docs/ABI.md §2, and natively it can serve engine.Open too.
//
// Every path is checked against the ABI's rules (a violation wraps
// host.ErrInvalid), and every existing part of it is resolved through
// symbolic links, which must stay inside the root (an escape wraps
// host.ErrDenied). The tree is read without following a symbolic link:
// listings leave links out, and a read, listing or stat through one is
// refused (host.ErrDenied), in .arbor/ aside. Writes never follow a
// symbolic link: they are refused.
// Writes are atomic: a temporary file in the same folder, synced, then
// renamed over the target.
type RootFS struct {
	dir      string // absolute, symbolic links evaluated
	readOnly bool
	open     openFiles // the files ReadAt read, kept open
	lockMu   sync.Mutex
	held     *rootlock.Lock // nil when unlocked, or when the root is read-only
	// full is set while a call runs whose lock file could not be written
	// for want of space: the call is served for reading, every write
	// refused with host.ErrNoSpace.
	full atomic.Bool
	// fullSaid is set once the full disk was logged, until a lock is
	// taken again: one engine locks several times per command.
	fullSaid atomic.Bool
	// written holds the tree's paths this RootFS wrote, removed or renamed
	// since the last TakeWritten, once RecordWrites was called.
	writtenMu sync.Mutex
	written   map[string]bool
	// leftOutSeen holds the folders walks left out (leftOut), and
	// leftOutNew the warnings not taken yet.
	leftOutMu   sync.Mutex
	leftOutSeen map[string]bool
	leftOutNew  []string
	// ahead is the walk being listed ahead of the module's fs_walk calls
	// (walkAnswer), or nil.
	aheadMu sync.Mutex
	ahead   *walkAhead
	// answerBufs holds buffers of fs_walk answers the module has copied
	// (answerBuf), as *[]byte.
	answerBufs sync.Pool
	// walkers holds the *walker of walkChunk calls that are over.
	walkers sync.Pool
}

// RecordWrites makes r note the paths of the tree it writes, removes and
// renames (paths in dot-folders such as .arbor/ left out), for
// TakeWritten: a host that serves reads from other engines on the same
// root tells them what changed, at once and exactly, where a watcher
// would hear of it later.
func (r *RootFS) RecordWrites() {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	if r.written == nil {
		r.written = map[string]bool{}
	}
}

// TakeWritten returns the paths noted since the last call (sorted), and
// forgets them.
func (r *RootFS) TakeWritten() []string {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	paths := make([]string, 0, len(r.written))
	for p := range r.written {
		paths = append(paths, p)
	}
	clear(r.written)
	slices.Sort(paths)
	return paths
}

// noteWritten notes paths for TakeWritten.
func (r *RootFS) noteWritten(paths ...string) {
	r.writtenMu.Lock()
	defer r.writtenMu.Unlock()
	if r.written == nil {
		return
	}
	for _, p := range paths {
		if walked(p) {
			r.written[p] = true
		}
	}
}

var (
	_ host.FS      = (*RootFS)(nil)
	_ host.Locker  = (*RootFS)(nil)
	_ host.Swapper = (*RootFS)(nil)
)

// tempPattern names the temporary files of atomic writes. It starts with a
// dot, so a file left behind by a crash is skipped when the tree is read.
const tempPattern = api.TempPrefix + "*"

// renameFile is the last step of an atomic write. Tests replace it to make
// a write fail after its temporary file is complete, the one failure that
// cannot be provoked from outside.
var renameFile = os.Rename

// appendFile writes an append's bytes. Tests replace it to make a write
// stop part way, as a disk that fills up does.
var appendFile = (*os.File).Write

// NewRootFS returns the file system rooted at dir, which must be an
// existing directory.
func NewRootFS(dir string) (*RootFS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("arbor: root %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("arbor: root %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("arbor: root %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("arbor: root %s: not a directory", dir)
	}
	return &RootFS{dir: real}, nil
}

// Dir returns the root folder, absolute and with symbolic links resolved.
func (r *RootFS) Dir() string { return r.dir }

// ReadOnly returns the same root under a read-only grant: every write,
// append, removal and rename is refused with host.ErrReadOnly (DENIED over
// the ABI), whatever the engine asks, and Lock takes no lock (its file
// would be a write); reads are served as before.
func (r *RootFS) ReadOnly() *RootFS { return &RootFS{dir: r.dir, readOnly: true} }

// IsReadOnly reports whether the root is granted read-only.
func (r *RootFS) IsReadOnly() bool { return r.readOnly }

// writable refuses op on p under a read-only grant.
func (r *RootFS) writable(op, p string) error {
	if r.readOnly {
		return fmt.Errorf("%s %q: %w", op, p, host.ErrReadOnly)
	}
	if r.full.Load() {
		return fmt.Errorf("%s %q: %w: %w", op, p, errLockNoSpace, host.ErrNoSpace)
	}
	if link := r.linkAbove(p); link != "" {
		return fmt.Errorf("%s %q: %s is a symbolic link, and writes never pass through one: %w", op, p, link, host.ErrDenied)
	}
	return nil
}

// linkAbove returns the first folder of p (relative) that is a symbolic
// link, or "". A link to a folder inside the root shows that folder's files
// under a second name: removing or writing one through the link would
// change the files at the first name, which a DELETE of the link's folder,
// or a MERGE of the two names of one entry, must never do.
func (r *RootFS) linkAbove(p string) string {
	cur := r.dir
	segs := strings.Split(p, "/")
	for i, seg := range segs[:len(segs)-1] {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return strings.Join(segs[:i+1], "/")
		}
	}
	return ""
}

// inside reports whether the resolved OS path real lies in the root.
func (r *RootFS) inside(real string) bool {
	if real == r.dir {
		return true
	}
	prefix := r.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(real, prefix)
}

// resolve checks p against the path rules and returns its OS path. The
// deepest part of the path that exists is resolved through symbolic links
// and must stay inside the root; what does not exist yet will be created
// as plain folders and files below it.
func (r *RootFS) resolve(op, p string) (string, error) {
	return r.resolvePath(op, p, false)
}

// resolveRead is resolve for a read, a listing or a stat, which never
// passes through a symbolic link of the tree (linkInside).
func (r *RootFS) resolveRead(op, p string) (string, error) {
	return r.resolvePath(op, p, true)
}

func (r *RootFS) resolvePath(op, p string, read bool) (string, error) {
	if err := checkPath(p); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	full := filepath.Join(r.dir, filepath.FromSlash(p))
	if r.plain(p) {
		return full, nil
	}
	if read && inTree(p) {
		if link, real := r.linkInside(p); link != "" {
			return "", fmt.Errorf("%s %q: %s is a symbolic link, which the engine does not follow: what it leads to is read under its own name, %q: %w", op, p, link, real, host.ErrDenied)
		}
	}
	existing := full
	for existing != r.dir {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling or looping link: where it leads cannot be checked.
		return "", fmt.Errorf("%s %q: cannot resolve symbolic links: %w: %w", op, p, host.ErrDenied, err)
	}
	if !r.inside(real) {
		return "", fmt.Errorf("%s %q: resolves outside the memory root: %w", op, p, host.ErrDenied)
	}
	return full, nil
}

// inTree reports whether p is a path of the tree, not of the engine's own
// state (.arbor/).
func inTree(p string) bool {
	return p != privateDir && !strings.HasPrefix(p, privateDir+"/")
}

// linkInside returns the first segment of p that is a symbolic link
// leading inside the root, and p with that link replaced by the path it
// leads to; "" when none is (a link leading out, or nowhere, is resolve's
// to refuse). The tree is read without following such links: a folder or
// file under two names was found twice, and a watcher, which hears an
// edit under the real name only, left the other name's text stale.
func (r *RootFS) linkInside(p string) (link, real string) {
	cur := r.dir
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil {
			return "", ""
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		to, err := filepath.EvalSymlinks(cur)
		if err != nil || !r.inside(to) {
			return "", ""
		}
		rel, err := filepath.Rel(r.dir, to)
		if err != nil {
			return "", ""
		}
		return strings.Join(segs[:i+1], "/"), path.Join(append([]string{filepath.ToSlash(rel)}, segs[i+1:]...)...)
	}
	return "", ""
}

// plain reports whether no existing segment of the clean relative path p
// is a symbolic link. Then p cannot leave the root (whose own path is
// resolved), and resolve is spared EvalSymlinks, which walks every
// component from the file system's root: at open, one call per file. The
// walk stops at the first segment that does not exist (what follows will
// be created as plain folders and files); any other error, or a link,
// sends the path through the full check.
func (r *RootFS) plain(p string) bool {
	cur := r.dir
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			continue // the root itself
		}
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return false
		}
	}
	return true
}

// ReadFile returns the whole content of a regular file.
func (r *RootFS) ReadFile(p string) ([]byte, error) {
	data, _, err := r.readSized(p, math.MaxInt32)
	if err == nil && data == nil {
		err = fmt.Errorf("read %q: larger than 2 GiB: %w", p, host.ErrInvalid)
	}
	return data, err
}

// readSized reads a file when its size is at most max. It always returns
// the size; the content is nil when the file is larger than max.
func (r *RootFS) readSized(p string, max int64) ([]byte, int64, error) {
	f, size, err := r.openRegular(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if size > max {
		return nil, size, nil
	}
	// Sized from Stat, so that a large file (an index segment) is read into
	// one buffer instead of one that doubles as it fills.
	var buf bytes.Buffer
	buf.Grow(int(size) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, 0, osError("read", p, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > max { // the file grew since Stat
		return nil, int64(len(data)), nil
	}
	if data == nil {
		data = []byte{}
	}
	return data, int64(len(data)), nil
}

// readInto reads a file into buf when it fits, and returns its size: the
// bytes are buf[:size] when size ≤ len(buf); otherwise buf holds nothing
// to use. fs_read reads into the guest's buffer this way: through a buffer
// of its own, the host's copy of the catalog and the index's documents
// (16 MB at 100,000 entries) was an allocation, its page faults and a
// copy at every open.
func (r *RootFS) readInto(p string, buf []byte) (int64, error) {
	f, size, err := r.openRegular(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if size > int64(len(buf)) {
		return size, nil
	}
	n, err := io.ReadFull(f, buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return int64(n), nil // the whole file, however it changed since Stat
	case err != nil:
		return 0, osError("read", p, err)
	}
	// buf is full: the file may have grown past it since Stat.
	var more [1]byte
	switch k, err := f.Read(more[:]); {
	case k > 0:
		if size, err := f.Size(); err == nil && size > int64(len(buf)) {
			return size, nil
		}
		return int64(len(buf)) + 1, nil
	case err != nil && !errors.Is(err, io.EOF):
		return 0, osError("read", p, err)
	}
	return int64(n), nil
}

// regularFile is a regular file open for reading.
type regularFile interface {
	io.ReadCloser
	// Size returns the file's size now.
	Size() (int64, error)
}

// osFile is a regularFile of the os package.
type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// openRegular opens the regular file p for reading, and returns its size.
func (r *RootFS) openRegular(p string) (regularFile, int64, error) {
	if err := checkPath(p); err != nil {
		return nil, 0, fmt.Errorf("read: %w", err)
	}
	if f, size, ok := openQuick(filepath.Join(r.dir, filepath.FromSlash(p))); ok {
		return f, size, nil
	}
	full, err := r.resolveRead("read", p)
	if err != nil {
		return nil, 0, err
	}
	// Stat before opening: opening a FIFO or a device could block or worse.
	fi, err := os.Stat(full)
	if err != nil {
		return nil, 0, osError("read", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, notRegular("read", p, fi)
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, 0, osError("read", p, err)
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, 0, osError("read", p, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, notRegular("read", p, fi)
	}
	return osFile{f}, fi.Size(), nil
}

// ReadAt implements host.RangeReader: it reads part of a regular file,
// as io.ReaderAt does (fewer bytes only at the end, with io.EOF). The file
// stays open for the next reads while its path names it (openFiles).
func (r *RootFS) ReadAt(p string, buf []byte, off int64) (int, error) {
	if err := checkPath(p); err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	if off < 0 {
		return 0, fmt.Errorf("read %q at %d: %w", p, off, host.ErrInvalid)
	}
	of := r.open.get(filepath.Join(r.dir, filepath.FromSlash(p)))
	if of == nil {
		full, err := r.resolveRead("read", p)
		if err != nil {
			return 0, err
		}
		fi, err := os.Stat(full) // before opening: a FIFO or a device could block
		if err != nil {
			return 0, osError("read", p, err)
		}
		if !fi.Mode().IsRegular() {
			return 0, notRegular("read", p, fi)
		}
		f, err := os.Open(full)
		if err != nil {
			return 0, osError("read", p, err)
		}
		if fi, err = f.Stat(); err != nil {
			f.Close()
			return 0, osError("read", p, err)
		}
		of = r.open.keep(full, f, fi)
	}
	defer r.open.put(of)
	n, err := of.f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, osError("read", p, err)
	}
	return n, err
}

func notRegular(op, p string, fi fs.FileInfo) error {
	if fi.IsDir() {
		return fmt.Errorf("%s %q: is a directory: %w", op, p, host.ErrInvalid)
	}
	return fmt.Errorf("%s %q: not a regular file: %w", op, p, host.ErrInvalid)
}

// WriteFile replaces a file atomically, creating missing parent folders:
// the data goes to a temporary file in the same folder, which is synced and
// renamed over the target. A symbolic link at p is refused, never followed.
func (r *RootFS) WriteFile(p string, data []byte) error {
	return r.write(p, data, nil)
}

// Swap is WriteFile when the file still holds old (or is absent, when
// existed is false), checked once the new bytes are synced, just before
// the rename: an editor's save during the write fails it with
// host.ErrChanged instead of being overwritten. (Only a save in the
// microseconds between that check and the rename can still be: editors
// take no lock.)
func (r *RootFS) Swap(p string, data, old []byte, existed bool) error {
	return r.write(p, data, func(full string) error {
		now, err := os.ReadFile(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !existed {
				return nil
			}
		case err != nil:
			return osError("write", p, err)
		case existed && bytes.Equal(now, old):
			return nil
		}
		return fmt.Errorf("write %q: %w", p, host.ErrChanged)
	})
}

// write is WriteFile, with check run on the target just before the rename.
func (r *RootFS) write(p string, data []byte, check func(full string) error) error {
	r.dropAhead(p)
	if err := r.writable("write", p); err != nil {
		return err
	}
	if p == "" {
		return fmt.Errorf("write: the root is not a file: %w", host.ErrInvalid)
	}
	full, err := r.resolve("write", p)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Lstat(full); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("write %q: is a symbolic link: %w", p, host.ErrDenied)
		case !fi.Mode().IsRegular():
			return notRegular("write", p, fi)
		}
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(full)
	made, err := mkdirParents("write", p, dir)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			unmake(made)
		}
	}()
	tmp, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return osError("write", p, err)
	}
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return osError("write", p, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return osError("write", p, err)
	}
	if err := tmp.Sync(); err != nil {
		return osError("write", p, err)
	}
	if err := tmp.Close(); err != nil {
		return osError("write", p, err)
	}
	if check != nil {
		if err := check(full); err != nil {
			return err
		}
	}
	if err := renameFile(tmp.Name(), full); err != nil {
		return osError("write", p, err)
	}
	done = true
	r.noteWritten(p)
	syncDir(dir)
	return nil
}

// Append adds data at the end of a file, creating it and its missing
// parent folders, and syncs it before returning. An append that fails
// (a full disk) leaves the file as it was; only a crash can leave part of
// data. A symbolic link at p is refused, as for WriteFile.
func (r *RootFS) Append(p string, data []byte) error {
	r.dropAhead(p)
	if err := r.writable("append", p); err != nil {
		return err
	}
	if p == "" {
		return fmt.Errorf("append: the root is not a file: %w", host.ErrInvalid)
	}
	full, err := r.resolve("append", p)
	if err != nil {
		return err
	}
	created := true
	if fi, err := os.Lstat(full); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("append %q: is a symbolic link: %w", p, host.ErrDenied)
		case !fi.Mode().IsRegular():
			return notRegular("append", p, fi)
		}
		created = false
	}
	dir := filepath.Dir(full)
	made, err := mkdirParents("append", p, dir)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(full, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		unmake(made)
		return osError("append", p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return osError("append", p, err)
	}
	_, werr := appendFile(f, data)
	serr := f.Sync()
	if err := errors.Join(werr, serr); err != nil {
		// A full disk takes part of the bytes: cut them off, so that a
		// failed append leaves the file as it was, not a torn line the
		// next append would be read with (the caller holds the root's
		// lock, so the bytes past the old size are this call's).
		if created {
			os.Remove(full)
			unmake(made)
		} else if terr := f.Truncate(fi.Size()); terr == nil {
			f.Sync()
		}
		f.Close()
		return osError("append", p, err)
	}
	if err := f.Close(); err != nil {
		return osError("append", p, err)
	}
	if created {
		syncDir(dir)
	}
	return nil
}

// errLockNoSpace refuses a write of a call whose lock file could not be
// written for want of space.
var errLockNoSpace = errors.New("refused, the root's lock could not be written")

// acquireLock takes a root's lock; a test swaps it for a disk that is full.
var acquireLock = rootlock.Acquire

// Lock takes the root's cross-process lock (host/rootlock), waiting at
// most rootlock.DefaultWait; see LockContext.
func (r *RootFS) Lock() error { return r.LockContext(context.Background()) }

// LockContext takes the root's cross-process lock, waiting while another
// process holds it until ctx ends or rootlock.DefaultWait has passed (an
// error wrapping host.ErrBusy). The lock is this RootFS's until Unlock; it
// is not re-entrant. A root whose lock file cannot be written for want of
// space, no other process holding the lock, is served for reading: nil,
// and every write until Unlock refused with host.ErrNoSpace.
func (r *RootFS) LockContext(ctx context.Context) error {
	if r.readOnly {
		// The lock is a file: a root granted read-only is served unlocked,
		// as rootlock serves one the file system will not let it write.
		return nil
	}
	r.lockMu.Lock()
	defer r.lockMu.Unlock()
	if r.held != nil {
		return fmt.Errorf("lock: already held by this engine: %w", host.ErrInvalid)
	}
	l, err := acquireLock(ctx, r.dir)
	switch {
	case errors.Is(err, rootlock.ErrBusy):
		return fmt.Errorf("%w: %w", host.ErrBusy, err)
	case errors.Is(err, rootlock.ErrNoSpace):
		// A person whose disk filled can still search and read their
		// memory, as on a root that refuses writes; this call's writes,
		// which would take the space and need the lock, are all refused,
		// so each fails whole as it would on the full disk.
		r.full.Store(true)
		return nil
	case err != nil:
		return fmt.Errorf("%w: %w", host.ErrIO, err)
	}
	r.held = l
	r.fullSaid.Store(false)
	return nil
}

// Unlock releases the lock taken by Lock. Unlocking a root not locked does
// nothing, so that a host may call it after an aborted call whatever the
// engine did.
func (r *RootFS) Unlock() error {
	r.lockMu.Lock()
	defer r.lockMu.Unlock()
	l := r.held
	r.held = nil
	r.full.Store(false)
	if err := l.Release(); err != nil {
		return fmt.Errorf("%w: %w", host.ErrIO, err)
	}
	return nil
}

// mkdirParents creates dir and its missing parents, and returns those it
// made, innermost first, for a write that fails after them to take away
// (unmake); a file in the way is an invalid path, not a missing one.
func mkdirParents(op, p, dir string) ([]string, error) {
	var made []string
	for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err == nil {
			if d == dir && fi.IsDir() {
				return nil, nil // the common case: nothing to make
			}
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		unmake(made)
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s %q: a parent is a file: %w: %w", op, p, host.ErrInvalid, err)
		}
		return nil, osError(op, p, err)
	}
	return made, nil
}

// unmake removes the folders a failed write made, innermost first: a full
// disk fails the file after its folders were made, and a failed write
// changes nothing. One that holds something by now stays, and the folders
// above it.
func unmake(made []string) {
	for _, d := range made {
		if os.Remove(d) != nil {
			return
		}
	}
}

// syncDir makes a rename durable where the platform allows; failures are
// ignored (some platforms cannot sync a directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Remove deletes a file or an empty folder (a symbolic link itself, never
// its target).
func (r *RootFS) Remove(p string) error {
	r.dropAhead(p)
	if err := r.writable("remove", p); err != nil {
		return err
	}
	if p == "" {
		return fmt.Errorf("remove: the root cannot be removed: %w", host.ErrInvalid)
	}
	full, err := r.resolve("remove", p)
	if err != nil {
		return err
	}
	if err := os.Remove(full); err != nil {
		return osError("remove", p, err)
	}
	r.noteWritten(p)
	return nil
}

// Rename moves from to to, replacing the destination atomically and
// creating its missing parent folders.
func (r *RootFS) Rename(from, to string) error {
	r.dropAhead(from, to)
	if err := r.writable("rename", from); err != nil {
		return err
	}
	if err := r.writable("rename", to); err != nil {
		return err
	}
	if from == "" || to == "" {
		return fmt.Errorf("rename %q to %q: the root cannot be renamed: %w", from, to, host.ErrInvalid)
	}
	src, err := r.resolve("rename", from)
	if err != nil {
		return err
	}
	dst, err := r.resolve("rename", to)
	if err != nil {
		return err
	}
	sfi, err := os.Lstat(src)
	if err != nil {
		return osError("rename", from, err)
	}
	if dfi, err := os.Lstat(dst); err == nil && dfi.IsDir() && !sfi.IsDir() {
		return fmt.Errorf("rename %q to %q: destination is a directory: %w", from, to, host.ErrInvalid)
	}
	made, err := mkdirParents("rename", to, filepath.Dir(dst))
	if err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		unmake(made)
		return osError("rename", from, err)
	}
	r.noteWritten(from, to)
	syncDir(filepath.Dir(dst))
	return nil
}

// ReadDir lists a folder, sorted by name, dot-names included. A symbolic
// link of the tree is left out: the tree is read without following links
// (linkInside). In .arbor/ a link is described by its target when the
// target lies inside the root, and as an empty file otherwise (reading it
// is then refused).
func (r *RootFS) ReadDir(p string) ([]host.DirEntry, error) {
	full, err := r.resolveRead("list", p)
	if err != nil {
		return nil, err
	}
	dir, err := os.Open(full)
	if err != nil {
		return nil, osError("list", p, err)
	}
	defer dir.Close()
	fi, err := dir.Stat()
	if err != nil {
		return nil, osError("list", p, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("list %q: not a directory: %w", p, host.ErrInvalid)
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, osError("list", p, err)
	}
	slices.Sort(names)
	out := make([]host.DirEntry, 0, len(names))
	for _, name := range names {
		d, link, err := lstatIn(dir, full, name)
		if err != nil {
			continue // removed since the listing
		}
		if link {
			if inTree(path.Join(p, name)) {
				continue // not followed (linkInside): what it leads to is listed under its own name
			}
			own, err := os.Lstat(filepath.Join(full, name))
			if err != nil {
				continue
			}
			d = dirEntry(name, r.linkInfo(filepath.Join(full, name), own))
		}
		out = append(out, d)
	}
	return out, nil
}

// linkInfo describes a symbolic link by its target when that lies inside
// the root.
func (r *RootFS) linkInfo(link string, own fs.FileInfo) fs.FileInfo {
	real, err := filepath.EvalSymlinks(link)
	if err != nil || !r.inside(real) {
		return own
	}
	if fi, err := os.Stat(real); err == nil {
		return fi
	}
	return own
}

// Stat describes one path (a path of the tree through a symbolic link is
// refused; in .arbor/ links inside the root are followed); the root itself
// has the empty name.
func (r *RootFS) Stat(p string) (host.DirEntry, error) {
	full, err := r.resolveRead("stat", p)
	if err != nil {
		return host.DirEntry{}, err
	}
	fi, err := os.Stat(full)
	if err != nil {
		return host.DirEntry{}, osError("stat", p, err)
	}
	name := ""
	if p != "" {
		name = path.Base(p)
	}
	return dirEntry(name, fi), nil
}

func dirEntry(name string, fi fs.FileInfo) host.DirEntry {
	d := host.DirEntry{Name: name, IsDir: fi.IsDir(), ModTime: fi.ModTime().UnixMilli()}
	if ctime, ino, ok := FileChange(fi); ok {
		d.Change, d.Ino = ctime.UnixMilli(), ino
	}
	if !d.IsDir && fi.Mode()&fs.ModeSymlink == 0 {
		d.Size = fi.Size()
	}
	return d
}
