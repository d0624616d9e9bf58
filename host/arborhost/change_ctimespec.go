//go:build darwin || freebsd || netbsd

package arborhost

import (
	"io/fs"
	"syscall"
	"time"
)

// FileChange is the time the status of the file fi describes last
// changed (POSIX ctime) and its inode, as change_ctim.go says.
func FileChange(fi fs.FileInfo) (ctime time.Time, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, 0, false
	}
	return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)), uint64(st.Ino), true
}
