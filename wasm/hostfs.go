//go:build wasip1

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

//go:wasmimport arbor_host fs_read
func fsRead(pathPtr unsafe.Pointer, pathLen uint32, buf unsafe.Pointer, bufCap uint32) int32

//go:wasmimport arbor_host fs_read_at
func fsReadAt(pathPtr unsafe.Pointer, pathLen uint32, offset int64, buf unsafe.Pointer, bufLen uint32) int32

//go:wasmimport arbor_host fs_write
func fsWrite(pathPtr unsafe.Pointer, pathLen uint32, data unsafe.Pointer, dataLen uint32) int32

//go:wasmimport arbor_host fs_remove
func fsRemove(pathPtr unsafe.Pointer, pathLen uint32) int32

//go:wasmimport arbor_host fs_rename
func fsRename(fromPtr unsafe.Pointer, fromLen uint32, toPtr unsafe.Pointer, toLen uint32) int32

//go:wasmimport arbor_host fs_list
func fsList(pathPtr unsafe.Pointer, pathLen uint32, buf unsafe.Pointer, bufCap uint32) int32

//go:wasmimport arbor_host fs_walk
func fsWalk(pathPtr unsafe.Pointer, pathLen uint32, afterPtr unsafe.Pointer, afterLen uint32, buf unsafe.Pointer, bufCap uint32) int32

//go:wasmimport arbor_host fs_stat
func fsStat(pathPtr unsafe.Pointer, pathLen uint32, buf unsafe.Pointer, bufCap uint32) int32

//go:wasmimport arbor_host fs_append
func fsAppend(pathPtr unsafe.Pointer, pathLen uint32, data unsafe.Pointer, dataLen uint32) int32

//go:wasmimport arbor_host fs_swap
func fsSwap(pathPtr unsafe.Pointer, pathLen uint32, data unsafe.Pointer, dataLen uint32, old unsafe.Pointer, oldLen uint32, existed int32) int32

//go:wasmimport arbor_host fs_lock
func fsLock() int32

//go:wasmimport arbor_host fs_unlock
func fsUnlock() int32

//go:wasmimport arbor_host log
func hostLog(level int32, msg unsafe.Pointer, msgLen uint32)

// hostFS is host.FS over the arbor_host imports. It is a host.Locker:
// the root may be a folder other processes write too.
type hostFS struct{}

var (
	_ host.Locker      = hostFS{}
	_ host.Swapper     = hostFS{}
	_ host.RangeReader = hostFS{}
	_ host.Walker      = hostFS{}
)

// codeError maps a negative ABI code onto the host package's sentinels.
func codeError(op, p string, code int32) error {
	var err error
	switch code {
	case -1:
		err = host.ErrNotFound
	case -2:
		err = host.ErrDenied
	case -3:
		err = host.ErrInvalid
	case -5:
		err = host.ErrBusy
	case -6:
		err = host.ErrChanged
	case -8:
		err = host.ErrNoSpace
	case -9:
		err = host.ErrTooLong
	case -10:
		err = host.ErrCrossDevice
	default:
		err = host.ErrIO
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

func strPtr(s string) (unsafe.Pointer, uint32) {
	if s == "" {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// sized calls an import that fills a caller buffer, growing the buffer to
// the size the host asks for until the result fits.
func sized(op, p string, call func(pp unsafe.Pointer, pl uint32, buf unsafe.Pointer, n uint32) int32) ([]byte, error) {
	return sizedInto(make([]byte, 4096), op, p, call)
}

// sizedInto is sized starting from buf.
func sizedInto(buf []byte, op, p string, call func(pp unsafe.Pointer, pl uint32, buf unsafe.Pointer, n uint32) int32) ([]byte, error) {
	pp, pl := strPtr(p)
	for {
		n := call(pp, pl, bytesPtr(buf), uint32(len(buf)))
		if n < 0 {
			return nil, codeError(op, p, n)
		}
		if int(n) <= len(buf) {
			return buf[:n], nil
		}
		buf = make([]byte, n)
	}
}

func (hostFS) ReadFile(p string) ([]byte, error) { return sized("read", p, fsRead) }

// ReadAt reads part of a file: the index's segments stay outside linear
// memory, read where a query needs them.
func (hostFS) ReadAt(p string, buf []byte, off int64) (int, error) {
	pp, pl := strPtr(p)
	n := fsReadAt(pp, pl, off, bytesPtr(buf), uint32(len(buf)))
	switch {
	case n < 0:
		return 0, codeError("read", p, n)
	case int(n) < len(buf):
		return int(n), io.EOF
	}
	return int(n), nil
}

func (hostFS) WriteFile(p string, data []byte) error {
	pp, pl := strPtr(p)
	if rc := fsWrite(pp, pl, bytesPtr(data), uint32(len(data))); rc < 0 {
		return codeError("write", p, rc)
	}
	return nil
}

func (hostFS) Append(p string, data []byte) error {
	pp, pl := strPtr(p)
	if rc := fsAppend(pp, pl, bytesPtr(data), uint32(len(data))); rc < 0 {
		return codeError("append", p, rc)
	}
	return nil
}

func (hostFS) Swap(p string, data, old []byte, existed bool) error {
	pp, pl := strPtr(p)
	ex := int32(0)
	if existed {
		ex = 1
	}
	if rc := fsSwap(pp, pl, bytesPtr(data), uint32(len(data)), bytesPtr(old), uint32(len(old)), ex); rc < 0 {
		return codeError("write", p, rc)
	}
	return nil
}

func (hostFS) Lock() error {
	if rc := fsLock(); rc < 0 {
		return codeError("lock", ".arbor/lock", rc)
	}
	return nil
}

func (hostFS) Unlock() error {
	if rc := fsUnlock(); rc < 0 {
		return codeError("unlock", ".arbor/lock", rc)
	}
	return nil
}

func (hostFS) Remove(p string) error {
	pp, pl := strPtr(p)
	if rc := fsRemove(pp, pl); rc < 0 {
		return codeError("remove", p, rc)
	}
	return nil
}

func (hostFS) Rename(from, to string) error {
	fp, fl := strPtr(from)
	tp, tl := strPtr(to)
	if rc := fsRename(fp, fl, tp, tl); rc < 0 {
		return codeError("rename", from, rc)
	}
	return nil
}

// listBuf is the buffer of every listing, kept at the largest size a
// listing needed: a host asked for more lists the folder again, and an
// open lists every folder of the tree. Decoding copies what it keeps.
var listBuf struct {
	sync.Mutex
	b []byte
}

func (hostFS) ReadDir(p string) ([]host.DirEntry, error) {
	listBuf.Lock()
	defer listBuf.Unlock()
	if listBuf.b == nil {
		listBuf.b = make([]byte, 16<<10)
	}
	b, err := sizedInto(listBuf.b[:cap(listBuf.b)], "list", p, fsList)
	if err != nil {
		return nil, err
	}
	if cap(b) > cap(listBuf.b) {
		listBuf.b = b
	}
	out, err := host.DecodeListing(b)
	if err != nil {
		return nil, fmt.Errorf("list %s: host sent invalid JSON: %v: %w", p, err, host.ErrIO)
	}
	return out, nil
}

// walkBuf is the buffer of every walk's answers: host.WalkAnswerBytes,
// reused so that linear memory does not grow with the tree; larger only
// once a single folder's record needed more. The records are decoded into strings and slices of their
// own, so the buffer is free again once a chunk is decoded.
var walkBuf struct {
	sync.Mutex
	b []byte
}

// Walk implements host.Walker over fs_walk: the folders' records come a
// chunk at a time, each call resuming after the last record received.
func (hostFS) Walk(dir string, fn func(dir string, list []host.DirEntry) error) error {
	walkBuf.Lock()
	buf := walkBuf.b
	if buf == nil {
		buf = make([]byte, host.WalkAnswerBytes)
	}
	walkBuf.b = nil // fn may walk again: that walk makes its own
	walkBuf.Unlock()
	defer func() {
		walkBuf.Lock()
		walkBuf.b = buf
		walkBuf.Unlock()
	}()
	dp, dl := strPtr(dir)
	after := ""
	for {
		ap, al := strPtr(after)
		n := fsWalk(dp, dl, ap, al, bytesPtr(buf), uint32(len(buf)))
		switch {
		case n < 0:
			return codeError("list", dir, n)
		case n == 0:
			return nil
		case int(n) > len(buf):
			buf = make([]byte, n)
			continue
		}
		last, err := host.DecodeWalk(buf[:n], fn)
		if errors.Is(err, host.ErrMalformedWalk) {
			return fmt.Errorf("walk %s: host sent malformed records: %w", dir, host.ErrIO)
		}
		if err != nil {
			return err
		}
		after = last + "/"
	}
}

func (hostFS) Stat(p string) (host.DirEntry, error) {
	b, err := sized("stat", p, fsStat)
	if err != nil {
		return host.DirEntry{}, err
	}
	out, err := host.DecodeStat(b)
	if err != nil {
		return host.DirEntry{}, fmt.Errorf("stat %s: host sent invalid JSON: %v: %w", p, err, host.ErrIO)
	}
	return out, nil
}

// hostLogger forwards diagnostics to the host's log import.
type hostLogger struct{}

var levels = map[string]int32{"debug": 0, "info": 1, "warn": 2, "error": 3}

func (hostLogger) Log(level, msg string) {
	mp, ml := strPtr(msg)
	hostLog(levels[level], mp, ml)
}

// progressLevel is the log level of progress reports (docs/ABI.md §2.2).
const progressLevel = 4

// Progress sends a progress report as a log line of progressLevel.
func (hostLogger) Progress(p api.Progress) {
	b, _ := json.Marshal(p)
	mp, ml := strPtr(string(b))
	hostLog(progressLevel, mp, ml)
}
