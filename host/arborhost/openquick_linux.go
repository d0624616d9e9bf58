package arborhost

import (
	"errors"
	"io"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once the kernel has said it has no openat2 (before
// Linux 5.6, or a sandbox's filter answering ENOSYS): every read then
// takes the checks of resolveRead.
var noOpenat2 atomic.Bool

// openQuick opens the file at the OS path full for reading when it is a
// regular file reached through no symbolic link, in one system call
// (openat2 with RESOLVE_NO_SYMLINKS) and one fstat. resolveRead asks the
// kernel about every folder of the path in turn, each from the file
// system's root, and os.Open adds four fcntl and an epoll_ctl: a query
// reads the few dozen entries it answers with, and those 12 system calls
// a file were about a tenth of a native question's time on a tree of
// 100,000 entries (bench/scale/notes.md). A path with no link in it
// cannot leave the root (checkPath refuses "..", and the root's own path
// has its links resolved), which is all resolveRead checks for a regular
// file of the tree.
//
// ok is false when the kernel could not say so (a link on the way, a
// missing file, anything not a regular file, no openat2): the caller then
// takes the checks of resolveRead, which say why in their own words. The
// file is opened without blocking (a FIFO put in its place between two
// calls opens at once, is found not regular and closed) and without
// becoming a controlling terminal.
func openQuick(full string) (f regularFile, size int64, ok bool) {
	if noOpenat2.Load() {
		return nil, 0, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	for {
		var err error
		fd, err = unix.Openat2(unix.AT_FDCWD, full, &how)
		if err == nil {
			break
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ENOSYS) {
			noOpenat2.Store(true)
		}
		return nil, 0, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, 0, false
	}
	return rawFile(fd), st.Size, true
}

// rawFile is a regular file opened by openQuick, read with read(2)
// itself: an os.File would register it with the poller and set its
// finalizer for a file read once and closed.
type rawFile int

// Read implements io.Reader.
func (f rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(int(f), p)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Size returns the file's size now.
func (f rawFile) Size() (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f), &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

// Close implements io.Closer.
func (f rawFile) Close() error { return unix.Close(int(f)) }
