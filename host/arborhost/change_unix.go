//go:build linux || openbsd || darwin || freebsd || netbsd

package arborhost

import (
	"io/fs"
	"syscall"
	"time"
)

// FileChange is the time the status of the file fi describes last
// changed (POSIX ctime) and its inode, ok false where the system gives
// neither. No tool sets a change time back, as cp -p, rsync -a or tar x
// set the modification time: with the inode it tells a file rewritten
// under its old size and time (host.DirEntry's Change and Ino; git's
// index keeps both for the same reason).
func FileChange(fi fs.FileInfo) (ctime time.Time, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, 0, false
	}
	c := statCtime(st)
	return time.Unix(int64(c.Sec), int64(c.Nsec)), uint64(st.Ino), true
}
