//go:build linux && (amd64 || arm64)

package arborhost

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatIn is fstatat(2) of a name of the folder fd, not following a
// symbolic link; name ends with a NUL (walkScratch.names). unix.Fstatat
// copies every name it is given to end it so: an open describes every
// file of the tree, and each copy was garbage for the collector, whose
// stops wait for the module (pauseCollector, host/cmd/arbor).
func fstatatIn(fd int, name []byte) (unix.Stat_t, error) {
	var st unix.Stat_t
	for {
		_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		switch e {
		case 0:
			return st, nil
		case unix.EINTR:
			continue
		}
		return st, e
	}
}
