package search

import (
	"fmt"
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

// readData returns the bytes of data from start to end (cut at its end):
// in place when data is in memory, else read into buf, grown when short.
func readData(data *dataLayout, buf []byte, start, end uint64) ([]byte, error) {
	end = min(end, uint64(dataSize(data)))
	if start > end {
		return nil, fmt.Errorf("read at %d past the end %d", start, end)
	}
	if data.mem != nil {
		return data.mem[start:end], nil
	}
	n := int(end - start)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	// A ReaderAt may report io.EOF with the whole of a read ending at its end.
	if k, err := data.r.ReadAt(buf, int64(start)); err != nil && !(err == io.EOF && k == n) {
		return nil, err
	}
	return buf, nil
}

// dataSize is the length of data's bytes.
func dataSize(data *dataLayout) int {
	if data.mem != nil {
		return len(data.mem)
	}
	return data.sz
}
