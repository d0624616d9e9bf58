//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockFile opens and locks the server lock file without waiting, and
// writes this process's id in it for the messages of the next one.
// flock(2) rather than host/rootlock: the lock must outlive no process,
// and the kernel drops it when its holder dies, however it dies.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &RunningError{PID: pid}
		}
		return nil, fmt.Errorf("serve: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// listen creates the socket at path, readable and writable by this user
// only, replacing a stale socket file: the caller holds the lock, so no
// server listens on it. Anything else at path is left alone.
func listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket: move it away", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket: %w", err)
		}
	}
	// The mode is set as the socket is created, through the umask: a
	// chmod afterwards would leave a moment in which another user could
	// connect. Nothing else of this process creates files meanwhile (the
	// engine is idle until the server accepts calls).
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	return ln, nil
}

// ownSocket reports whether path is a socket this user owns: a client
// talks to no other, so that another user cannot pose as the server (in
// the temporary folder, which everyone may write).
func ownSocket(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Type() != fs.ModeSocket {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

const supported = true
