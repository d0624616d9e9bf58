package arborhost

import (
	"os"
	"runtime"
	"sync"
)

// openFiles keeps the files read by range (ReadAt) open between calls: the
// engine reads its index's segments a block at a time, and resolving,
// checking, opening and closing the file for each block was most of what
// a query paid for reading them. A kept file is used only while its path
// still names it (one stat: same device and inode, size and modification
// time); anything else opens the path again through the checks of
// resolve. On Windows nothing is kept: a file open in Go cannot be removed
// by another process, which would keep the index's saves from removing
// the segments they retire.
type openFiles struct {
	mu    sync.Mutex
	files map[string]*openFile // by full path
	order []string             // least recently used first
}

// maxOpenFiles bounds the files kept open: an index of a million entries
// has a few dozen segments.
const maxOpenFiles = 64

type openFile struct {
	f    *os.File
	fi   os.FileInfo
	refs int  // reads running
	gone bool // evicted: closed by the last read
}

// get returns the file kept for full if its path still names it, taking a
// reference (release it with put).
func (o *openFiles) get(full string) *openFile {
	if runtime.GOOS == "windows" {
		return nil
	}
	o.mu.Lock()
	of := o.files[full]
	if of != nil {
		of.refs++
		o.touch(full)
	}
	o.mu.Unlock()
	if of == nil {
		return nil
	}
	fi, err := os.Stat(full)
	if err == nil && os.SameFile(fi, of.fi) && fi.Size() == of.fi.Size() && fi.ModTime().Equal(of.fi.ModTime()) {
		return of
	}
	o.mu.Lock()
	if o.files[full] == of {
		o.evict(full)
	}
	o.mu.Unlock()
	o.put(of)
	return nil
}

// keep adds f, just opened at full with info fi, taking a reference.
func (o *openFiles) keep(full string, f *os.File, fi os.FileInfo) *openFile {
	of := &openFile{f: f, fi: fi, refs: 1}
	if runtime.GOOS == "windows" {
		of.gone = true // closed after this read
		return of
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.files == nil {
		o.files = map[string]*openFile{}
	}
	if _, ok := o.files[full]; ok {
		o.evict(full)
	}
	for len(o.order) >= maxOpenFiles {
		o.evict(o.order[0])
	}
	o.files[full] = of
	o.order = append(o.order, full)
	return of
}

// put releases a reference; the last one closes an evicted file.
func (o *openFiles) put(of *openFile) {
	o.mu.Lock()
	of.refs--
	closeIt := of.gone && of.refs == 0
	o.mu.Unlock()
	if closeIt {
		of.f.Close()
	}
}

// touch makes full the most recently used; the caller holds o.mu.
func (o *openFiles) touch(full string) {
	for i, p := range o.order {
		if p == full {
			o.order = append(append(o.order[:i], o.order[i+1:]...), full)
			return
		}
	}
}

// evict drops the file kept for full; the caller holds o.mu.
func (o *openFiles) evict(full string) {
	of := o.files[full]
	delete(o.files, full)
	for i, p := range o.order {
		if p == full {
			o.order = append(o.order[:i], o.order[i+1:]...)
			break
		}
	}
	of.gone = true
	if of.refs == 0 {
		of.f.Close()
	}
}
