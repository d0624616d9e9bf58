//go:build wasip1

// Package lock, wasip1 variant: added to the vendored bluge by build.sh.
// A wasm guest is single-threaded and reaches files only through its host,
// which owns the memory root exclusively, so advisory locks have nothing to
// guard and the file is opened without one.
package lock

import "os"

func open(path string, flag int, perm os.FileMode, exclusive bool) (LockedFile, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &DefaultLockedFile{f: f, exclusive: exclusive}, nil
}

func (e *DefaultLockedFile) unlock() error { return nil }
