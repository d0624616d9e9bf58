package search

import (
	"io"
	"unsafe"

	segment "github.com/blugelabs/bluge_segment_api"
)

// readerData returns a segment.Data that reads its bytes from r, size
// bytes long, where bluge's ice segments need them.
//
// segment.Data can read from an io.ReaderAt (its fields mem, r and sz),
// but its one constructor for that takes an *os.File, which neither the
// WebAssembly module nor a browser has: the host's range reads are the
// reader here. Rather than fork the module for one constructor, the
// fields are set through a struct of the same layout;
// TestReaderDataLayout fails if an upgrade of bluge_segment_api changes
// it.
func readerData(r io.ReaderAt, size int) *segment.Data {
	d := new(segment.Data)
	m := (*dataLayout)(unsafe.Pointer(d))
	m.r, m.sz = r, size
	return d
}

// dataLayout is segment.Data's layout in bluge_segment_api v0.2.0.
type dataLayout struct {
	mem []byte
	r   io.ReaderAt
	sz  int
}
