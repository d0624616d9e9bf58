//go:build !linux && !openbsd && !darwin && !freebsd && !netbsd

package arborhost

import (
	"io/fs"
	"time"
)

// FileChange has neither a change time nor an inode to give here (see
// change_unix.go): Windows keeps a change time, but os.FileInfo does not
// carry it. The engine then trusts a file's size and modification time
// alone, as git does with core.trustctime off.
func FileChange(fs.FileInfo) (ctime time.Time, ino uint64, ok bool) { return time.Time{}, 0, false }
