package host

import "fmt"

// ErrReadOnly is what a file system under a read-only grant answers to a
// write. It wraps ErrDenied, so that over the ABI it is the DENIED code
// (docs/ABI.md §2): the grant is a permission, not a new kind of failure.
var ErrReadOnly = fmt.Errorf("the memory root is granted read-only: %w", ErrDenied)

// ReadOnly returns fs with every write refused with ErrReadOnly; reads go
// to fs. The engine wraps its file system in it when it opens read-only,
// so that a write it did not mean to make fails instead of reaching the
// tree. The result is no Locker nor Swapper, whatever fs is: taking the
// root's lock writes a file too.
func ReadOnly(fs FS) FS { return readOnlyFS{fs} }

type readOnlyFS struct{ FS }

func (readOnlyFS) WriteFile(p string, _ []byte) error { return refused("write", p) }
func (readOnlyFS) Append(p string, _ []byte) error    { return refused("append", p) }
func (readOnlyFS) Remove(p string) error              { return refused("remove", p) }
func (readOnlyFS) Rename(from, to string) error {
	return refused("rename", from+" to "+to)
}

func refused(op, p string) error { return fmt.Errorf("%s %s: %w", op, p, ErrReadOnly) }
