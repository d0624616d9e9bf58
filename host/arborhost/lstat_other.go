//go:build !linux

package arborhost

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arbormem/arbor/core/host"
)

// lstatIn describes the entry name of the directory at full, without
// following a symbolic link (link reports one).
func lstatIn(_ *os.File, full, name string) (host.DirEntry, bool, error) {
	fi, err := os.Lstat(filepath.Join(full, name))
	if err != nil {
		return host.DirEntry{}, false, err
	}
	return dirEntry(name, fi), fi.Mode()&fs.ModeSymlink != 0, nil
}
