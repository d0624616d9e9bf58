package host

import (
	"fmt"
	"io"
)

// RangeReader is an FS that reads part of a file without reading it all:
// the persisted index's segments are read where a query needs them instead
// of being held whole in the engine's memory (under WebAssembly, linear
// memory, which never shrinks and stops at 4 GiB).
type RangeReader interface {
	// ReadAt reads len(buf) bytes of the file at p from offset off. It
	// returns how many it read, fewer only at the end of the file (with
	// io.EOF), as io.ReaderAt does.
	ReadAt(p string, buf []byte, off int64) (int, error)
}

// RangeReaderOf returns the RangeReader of fsys, seeing through its Shared
// and read-only views, or nil when it has none.
func RangeReaderOf(fsys FS) RangeReader {
	for {
		switch f := fsys.(type) {
		case *Shared:
			fsys = f.FS
		case readOnlyFS:
			fsys = f.FS
		case RangeReader:
			return f
		default:
			return nil
		}
	}
}

// ReadAt implements RangeReader.
func (m *MemFS) ReadAt(p string, buf []byte, off int64) (int, error) {
	if err := checkMemPath(p); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	switch {
	case !ok:
		return 0, fmt.Errorf("read %s: %w", p, ErrNotFound)
	case off < 0:
		return 0, fmt.Errorf("read %s at %d: %w", p, off, ErrInvalid)
	case off >= int64(len(b)):
		return 0, io.EOF
	}
	n := copy(buf, b[off:])
	if n < len(buf) {
		return n, io.EOF
	}
	return n, nil
}
