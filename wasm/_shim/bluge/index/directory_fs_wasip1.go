//go:build wasip1

// wasip1 variant of the segment removal, added to the vendored bluge by
// build.sh: without flock there is no exclusive open to take first.
package index

import (
	"os"
	"path/filepath"
)

func (d *FileSystemDirectory) remove(kind string, id uint64) error {
	return os.Remove(filepath.Join(d.path, d.fileName(kind, id)))
}
