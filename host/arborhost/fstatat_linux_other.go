//go:build linux && !(amd64 || arm64)

package arborhost

import "golang.org/x/sys/unix"

// fstatatIn is fstatat(2) of a name of the folder fd, not following a
// symbolic link; name ends with a NUL (walkScratch.names), which
// unix.Fstatat adds again: on this architecture it may be another system
// call than newfstatat (fstatat_linux.go).
func fstatatIn(fd int, name []byte) (unix.Stat_t, error) {
	return fstatatNoFollow(fd, string(name[:len(name)-1]))
}
