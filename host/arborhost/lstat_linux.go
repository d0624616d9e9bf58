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
	var st unix.Stat_t
	for {
		err = unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return host.DirEntry{}, false, err
	}
	mode := st.Mode & unix.S_IFMT
	d = host.DirEntry{Name: name, IsDir: mode == unix.S_IFDIR, ModTime: st.Mtim.Sec*1000 + st.Mtim.Nsec/1e6}
	if mode != unix.S_IFDIR && mode != unix.S_IFLNK {
		d.Size = st.Size
	}
	return d, mode == unix.S_IFLNK, nil
}
