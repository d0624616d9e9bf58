// Package host declares what the engine needs from the outside world: a
// file system confined to one memory root, a clock and a logger. The engine
// reaches nothing else; in WebAssembly these are backed by the arbor_host
// imports, natively by any implementation of these interfaces (MemFS here).
//
// Paths crossing this interface are relative to the memory root, slash
// separated, with no leading slash; "" names the root itself.
package host

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors an FS returns; callers branch on them with errors.Is.
// They map one to one onto the negative codes of the host ABI.
var (
	ErrNotFound = errors.New("not found")
	ErrDenied   = errors.New("permission denied")
	ErrInvalid  = errors.New("invalid argument")
	ErrIO       = errors.New("i/o error")
	// ErrBusy is returned by Locker.Lock when another process held the
	// root's lock for the host's whole wait.
	ErrBusy = errors.New("busy")
	// ErrChanged is returned by Swap when the file is no longer what the
	// caller read: someone else wrote it in between.
	ErrChanged = errors.New("changed on disk")
	// ErrNoSpace is a write the storage refused for want of space: a full
	// disk or quota (ENOSPC, EDQUOT; a browser's QuotaExceededError). It is
	// an ErrIO too (errors.Is), since it is a failure of the storage: what
	// handles one handles the other, and the engine tells the person which.
	ErrNoSpace error = noSpace{}
	// ErrTooLong is a path the storage cannot name: longer than the
	// system's limit on a path or a name (ENAMETOOLONG). It is an
	// ErrInvalid too (errors.Is), which it was before it had a code.
	ErrTooLong error = tooLong{}
	// ErrCrossDevice is a rename the storage cannot make because its two
	// paths are on different devices (EXDEV: a mount inside the root). It
	// is an ErrIO too (errors.Is), which it was before it had a code: the
	// engine copies the file instead where it can.
	ErrCrossDevice error = crossDevice{}
)

// noSpace is ErrNoSpace: a type of its own so that it matches ErrIO
// without "i/o error" in its message.
type noSpace struct{}

func (noSpace) Error() string        { return "no space left on the storage" }
func (noSpace) Is(target error) bool { return target == ErrIO }

// tooLong is ErrTooLong, a type of its own for the same reason.
type tooLong struct{}

func (tooLong) Error() string        { return "path too long for the file system" }
func (tooLong) Is(target error) bool { return target == ErrInvalid }

// crossDevice is ErrCrossDevice, a type of its own for the same reason.
type crossDevice struct{}

func (crossDevice) Error() string        { return "the paths are on different devices" }
func (crossDevice) Is(target error) bool { return target == ErrIO }

// DirEntry is one name in a directory listing.
type DirEntry struct {
	Name    string `json:"name"`
	IsDir   bool   `json:"dir"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime"` // Unix milliseconds
	// Change and Ino are the status change time (Unix milliseconds) and
	// the inode number, 0 where the storage has none. No tool sets them
	// back as cp -p or tar x set the modification time: an open trusts a
	// file unread only when all four of its stamps are as noted, as git
	// trusts its index.
	Change int64  `json:"ctime,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
}

// FS is the memory root as the engine sees it.
type FS interface {
	// ReadFile returns the whole content of a file.
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces a file atomically (temporary file, then rename),
	// creating missing parent directories. Readers see the old or the new
	// content, never a mix.
	WriteFile(path string, data []byte) error
	// Remove deletes a file or an empty directory.
	Remove(path string) error
	// Rename moves a file, replacing the destination atomically.
	Rename(from, to string) error
	// Append adds data at the end of a file, creating it and its missing
	// parent directories, and returns once the data is durable. It is for
	// logs: a crash may leave part of data (a torn last line), never less
	// than the file held before.
	Append(path string, data []byte) error
	// ReadDir lists a directory, sorted by name.
	ReadDir(path string) ([]DirEntry, error)
	// Stat describes one path.
	Stat(path string) (DirEntry, error)
}

// Locker is an FS that other processes may write too (a folder on disk):
// Lock takes the root's cross-process lock, waiting while another process
// holds it (an error wrapping ErrBusy when the wait ends first), and
// Unlock releases it. Lock is not re-entrant; the engine nests sections
// with Shared.
type Locker interface {
	Lock() error
	Unlock() error
}

// Shared is the engine's view of an FS that other processes may share:
// Exclusive sections nest, and only the outermost takes the Locker's
// lock. It is not safe for concurrent use, like the engine itself.
type Shared struct {
	FS
	depth int
}

// Share wraps fsys; an FS that is no Locker is used as it is, its
// sections exclusive only within this process.
func Share(fsys FS) *Shared {
	if s, ok := fsys.(*Shared); ok {
		return s
	}
	return &Shared{FS: fsys}
}

// Exclusive runs fn holding the root's lock: what fn reads and then writes
// is not changed in between by another process that honours the lock. A
// lock that cannot be taken fails without running fn.
func (s *Shared) Exclusive(fn func() error) error {
	l, ok := s.FS.(Locker)
	if !ok || s.depth > 0 {
		s.depth++
		defer func() { s.depth-- }()
		return fn()
	}
	if err := l.Lock(); err != nil {
		return fmt.Errorf("lock the memory root: %w", err)
	}
	s.depth++
	defer func() {
		s.depth--
		l.Unlock()
	}()
	return fn()
}

// Swapper is an FS that replaces a file only if it still holds what the
// caller read (old, or no file when existed is false), checked after the
// new bytes are durable and just before the rename, so that a save by an
// editor, which takes no lock, in the meantime is never overwritten: it
// fails with ErrChanged instead.
type Swapper interface {
	Swap(path string, data, old []byte, existed bool) error
}

// Swap replaces the file at p with data if it still holds old (or does
// not exist, when existed is false): through fsys's Swapper when it has
// one, else by reading it again just before WriteFile. An error wrapping
// ErrChanged means it was not what the caller read; nothing was written.
func Swap(fsys FS, p string, data, old []byte, existed bool) error {
	if s, ok := fsys.(*Shared); ok {
		fsys = s.FS
	}
	if sw, ok := fsys.(Swapper); ok {
		return sw.Swap(p, data, old, existed)
	}
	now, err := fsys.ReadFile(p)
	switch {
	case errors.Is(err, ErrNotFound):
		if existed {
			return fmt.Errorf("write %s: %w", p, ErrChanged)
		}
	case err != nil:
		return err
	case !existed || !bytes.Equal(now, old):
		return fmt.Errorf("write %s: %w", p, ErrChanged)
	}
	return fsys.WriteFile(p, data)
}

// Exclusive runs fn holding the root's lock: through fsys's Shared view
// when it has one (sections nest), by its Locker otherwise, and as it is
// when fsys is no Locker.
func Exclusive(fsys FS, fn func() error) error {
	if s, ok := fsys.(*Shared); ok {
		return s.Exclusive(fn)
	}
	return Share(fsys).Exclusive(fn)
}

// FileClock is an FS whose modification times come from a clock of its
// own rather than the system's (MemFS, once SetNow gives it one).
type FileClock interface {
	// FileTime is that clock's time now, in Unix milliseconds.
	FileTime() int64
}

// FileTime is the time now, in Unix milliseconds, by the clock that stamps
// fsys's modification times: its own when it is a FileClock (also seen
// through Shared and ReadOnly), the system's otherwise. It is what a
// file's time is compared with to tell whether the file may still change
// within the same tick. The engine's Clock is not that clock: a fixed one
// (tests, reproducible runs) may be months away from the files' times.
func FileTime(fsys FS) int64 {
	for {
		switch f := fsys.(type) {
		case FileClock:
			return f.FileTime()
		case *Shared:
			fsys = f.FS
		case readOnlyFS:
			fsys = f.FS
		default:
			return time.Now().UnixMilli()
		}
	}
}

// Clock tells the time; tests and reproducible runs fix it.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real time of the platform (WASI clock_time_get in wasm).
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// FixedClock always returns the same instant.
type FixedClock time.Time

// Now returns the fixed instant.
func (c FixedClock) Now() time.Time { return time.Time(c) }

// Logger receives diagnostic lines; level is one of "debug", "info", "warn", "error".
type Logger interface {
	Log(level, msg string)
}

// NopLogger discards everything.
type NopLogger struct{}

// Log discards the line.
func (NopLogger) Log(string, string) {}
