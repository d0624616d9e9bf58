package arborhost

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/arbormem/arbor/core/host"
)

// lstatIn describes the entry name of the open directory dir (at full),
// without following a symbolic link (link reports one). It asks the
// kernel relative to the directory: an open lists every file of the tree,
// and os.Lstat of each file's whole path made the kernel walk every
// folder above it again, a third of a native open's time.
func lstatIn(dir *os.File, _, name string) (d host.DirEntry, link bool, err error) {
	st, err := fstatatNoFollow(int(dir.Fd()), name)
	if err != nil {
		return host.DirEntry{}, false, err
	}
	return statEntry(name, &st), st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
}

// fstatatNoFollow is fstatat(2) of name in the folder fd, not following
// a symbolic link.
func fstatatNoFollow(fd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return st, err
		}
	}
}

// statEntry describes name as st does, as dirEntry describes a FileInfo.
func statEntry(name string, st *unix.Stat_t) host.DirEntry {
	mode := st.Mode & unix.S_IFMT
	d := host.DirEntry{Name: name, IsDir: mode == unix.S_IFDIR, ModTime: millis(st.Mtim), Change: millis(st.Ctim), Ino: uint64(st.Ino)}
	if mode != unix.S_IFDIR && mode != unix.S_IFLNK {
		d.Size = int64(st.Size)
	}
	return d
}

// millis is t in Unix milliseconds (a 32-bit platform's Timespec holds
// int32s).
func millis(t unix.Timespec) int64 { return int64(t.Sec)*1000 + int64(t.Nsec)/1e6 }
