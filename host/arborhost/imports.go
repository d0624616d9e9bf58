// Package arborhost is the host side of the arbor_host import module
// (docs/ABI.md §2) for wazero: the file functions, confined to one memory
// root on disk (RootFS), and the log function. It is named for the ABI as
// wazero's imports/wasi_snapshot_preview1 is, and holds what a host does
// for the engine's files: path rules, confinement, atomic writes and the
// mapping of OS errors onto the ABI's codes. host/runtime instantiates it
// beside WASI; locks, watching and byte-range reads belong here too.
package arborhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/rootlock"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ModuleName is the import module of docs/ABI.md §2.
const ModuleName = "arbor_host"

// Memory is the part of a guest's linear memory the host functions use.
// wazero's api.Memory satisfies it; tests use a byte slice.
type Memory interface {
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
}

// guestString copies a string out of guest memory; ok is false when the
// bytes lie outside it.
func guestString(mem Memory, ptr, n uint32) (string, bool) {
	if n == 0 {
		return "", true
	}
	b, ok := mem.Read(ptr, n)
	if !ok {
		return "", false
	}
	return string(b), true
}

// bufferOK reports whether the guest buffer lies inside memory.
func bufferOK(mem Memory, ptr, n uint32) bool {
	if n == 0 {
		return true
	}
	_, ok := mem.Read(ptr, n)
	return ok
}

// sized answers with the size protocol of docs/ABI.md §2: the size of out,
// copied into the buffer only when it fits.
func sized(mem Memory, out []byte, bufPtr, bufCap uint32) int32 {
	if len(out) > math.MaxInt32 {
		return codeInvalid
	}
	if uint64(len(out)) > uint64(bufCap) {
		return int32(len(out))
	}
	if len(out) > 0 && !mem.Write(bufPtr, out) {
		return codeInvalid
	}
	return int32(len(out))
}

// abiRead is fs_read(path_ptr, path_len, buf_ptr, buf_cap) -> i32. The
// file is read straight into the guest's buffer (readInto).
func (r *RootFS) abiRead(mem Memory, pathPtr, pathLen, bufPtr, bufCap uint32) int32 {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok {
		return codeInvalid
	}
	buf := []byte{}
	if bufCap > 0 {
		if buf, ok = mem.Read(bufPtr, bufCap); !ok {
			return codeInvalid
		}
	}
	size, err := r.readInto(p, buf)
	switch {
	case err != nil:
		return errorCode(err)
	case size > math.MaxInt32:
		return codeInvalid
	}
	return int32(size)
}

// abiReadAt is fs_read_at(path_ptr, path_len, offset i64, buf_ptr,
// buf_len) -> i32: the bytes read, fewer than buf_len only at the end of
// the file.
func (r *RootFS) abiReadAt(mem Memory, pathPtr, pathLen uint32, off int64, bufPtr, bufLen uint32) int32 {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok || bufLen > math.MaxInt32 {
		return codeInvalid
	}
	// Read straight into the guest's buffer: Memory.Read is a view of it.
	var buf []byte
	if bufLen > 0 {
		if buf, ok = mem.Read(bufPtr, bufLen); !ok {
			return codeInvalid
		}
	}
	n, err := r.ReadAt(p, buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return errorCode(err)
	}
	return int32(n)
}

// pathAndData reads the (path, data) arguments of fs_write and fs_append;
// data is a view of guest memory, valid while the call runs.
func pathAndData(mem Memory, pathPtr, pathLen, dataPtr, dataLen uint32) (string, []byte, bool) {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok || dataLen == 0 {
		return p, nil, ok
	}
	data, ok := mem.Read(dataPtr, dataLen)
	return p, data, ok
}

// errOutside is a write's argument that lies outside guest memory.
var errOutside = fmt.Errorf("an argument lies outside guest memory: %w", host.ErrInvalid)

// abiWrite is fs_write(path_ptr, path_len, data_ptr, data_len) -> i32;
// the writes return the error, which Instantiate turns into the code.
func (r *RootFS) abiWrite(mem Memory, pathPtr, pathLen, dataPtr, dataLen uint32) error {
	p, data, ok := pathAndData(mem, pathPtr, pathLen, dataPtr, dataLen)
	if !ok {
		return errOutside
	}
	return r.WriteFile(p, data)
}

// abiAppend is fs_append(path_ptr, path_len, data_ptr, data_len) -> i32.
func (r *RootFS) abiAppend(mem Memory, pathPtr, pathLen, dataPtr, dataLen uint32) error {
	p, data, ok := pathAndData(mem, pathPtr, pathLen, dataPtr, dataLen)
	if !ok {
		return errOutside
	}
	return r.Append(p, data)
}

// abiSwap is fs_swap(path_ptr, path_len, data_ptr, data_len, old_ptr,
// old_len, existed) -> i32.
func (r *RootFS) abiSwap(mem Memory, pathPtr, pathLen, dataPtr, dataLen, oldPtr, oldLen uint32, existed int32) error {
	p, data, ok := pathAndData(mem, pathPtr, pathLen, dataPtr, dataLen)
	if !ok {
		return errOutside
	}
	var old []byte
	if oldLen > 0 {
		if old, ok = mem.Read(oldPtr, oldLen); !ok {
			return errOutside
		}
	}
	return r.Swap(p, data, old, existed != 0)
}

// abiRemove is fs_remove(path_ptr, path_len) -> i32.
func (r *RootFS) abiRemove(mem Memory, pathPtr, pathLen uint32) error {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok {
		return errOutside
	}
	return r.Remove(p)
}

// abiRename is fs_rename(from_ptr, from_len, to_ptr, to_len) -> i32.
func (r *RootFS) abiRename(mem Memory, fromPtr, fromLen, toPtr, toLen uint32) error {
	from, ok := guestString(mem, fromPtr, fromLen)
	if !ok {
		return errOutside
	}
	to, ok := guestString(mem, toPtr, toLen)
	if !ok {
		return errOutside
	}
	return r.Rename(from, to)
}

// abiList is fs_list(path_ptr, path_len, buf_ptr, buf_cap) -> i32.
func (r *RootFS) abiList(mem Memory, pathPtr, pathLen, bufPtr, bufCap uint32) int32 {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok || !bufferOK(mem, bufPtr, bufCap) {
		return codeInvalid
	}
	ents, err := r.ReadDir(p)
	if err != nil {
		return errorCode(err)
	}
	out, err := json.Marshal(ents)
	if err != nil {
		return codeIO
	}
	return sized(mem, out, bufPtr, bufCap)
}

// abiStat is fs_stat(path_ptr, path_len, buf_ptr, buf_cap) -> i32.
func (r *RootFS) abiStat(mem Memory, pathPtr, pathLen, bufPtr, bufCap uint32) int32 {
	p, ok := guestString(mem, pathPtr, pathLen)
	if !ok || !bufferOK(mem, bufPtr, bufCap) {
		return codeInvalid
	}
	st, err := r.Stat(p)
	if err != nil {
		return errorCode(err)
	}
	out, err := json.Marshal(st)
	if err != nil {
		return codeIO
	}
	return sized(mem, out, bufPtr, bufCap)
}

// logged is the ABI code of err, the result of the writing import name.
// A code carries no message over the ABI: a write refused by the
// read-only grant, and one the system failed (a full disk, a file system
// gone read-only, a failing drive, of which the engine says only "i/o
// error"), are logged at level 2, so that whoever reads the log learns why.
func (r *RootFS) logged(ctx context.Context, logf func(context.Context, int, string), name string, err error) int32 {
	rc := errorCode(err)
	switch {
	case logf == nil:
	case rc == codeDenied && r.readOnly:
		logf(ctx, 2, name+": refused: the memory root is granted read-only")
	case errors.Is(err, errLockNoSpace):
		// Said once, by fs_lock.
	case rc == codeIO, rc == codeNoSpace:
		logf(ctx, 2, name+": "+err.Error())
	}
	return rc
}

// Instantiate registers the arbor_host module in rt under name (ModuleName,
// unless several engine instances in rt each need their own, resolved with
// experimental.WithImportResolver), its file functions served by fsys,
// its embed function by em (nil: no embedding model, the engine ranks by
// BM25 alone) and its log lines (level 0 debug to 3 error, 4 progress)
// sent to logf with the context of the call that made them, which may be
// nil.
func Instantiate(ctx context.Context, rt wazero.Runtime, name string, fsys *RootFS, em Embedder, logf func(ctx context.Context, level int, msg string)) (api.Module, error) {
	i32 := api.ValueTypeI32
	b := rt.NewHostModuleBuilder(name)
	fn4 := func(name string, f func(Memory, uint32, uint32, uint32, uint32) int32) {
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, s []uint64) {
				s[0] = api.EncodeI32(f(m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]), api.DecodeU32(s[2]), api.DecodeU32(s[3])))
			}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
			Export(name)
	}
	granted := func(ctx context.Context, name string, err error) int32 {
		return fsys.logged(ctx, logf, name, err)
	}
	fw4 := func(name string, f func(Memory, uint32, uint32, uint32, uint32) error) {
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
				s[0] = api.EncodeI32(granted(ctx, name, f(m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]), api.DecodeU32(s[2]), api.DecodeU32(s[3]))))
			}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
			Export(name)
	}
	fn4("fs_read", fsys.abiRead)
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, s []uint64) {
			s[0] = api.EncodeI32(fsys.abiReadAt(m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]), int64(s[2]), api.DecodeU32(s[3]), api.DecodeU32(s[4])))
		}), []api.ValueType{i32, i32, api.ValueTypeI64, i32, i32}, []api.ValueType{i32}).
		Export("fs_read_at")
	fw4("fs_write", fsys.abiWrite)
	fw4("fs_append", fsys.abiAppend)
	fw4("fs_rename", fsys.abiRename)
	fn4("fs_list", fsys.abiList)
	fn4("fs_stat", fsys.abiStat)
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
			s[0] = api.EncodeI32(fsys.abiWalk(m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]), api.DecodeU32(s[2]),
				api.DecodeU32(s[3]), api.DecodeU32(s[4]), api.DecodeU32(s[5])))
			for _, msg := range fsys.takeLeftOut() {
				if logf != nil {
					logf(ctx, 2, "fs_walk: "+msg)
				}
			}
		}), []api.ValueType{i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}).
		Export("fs_walk")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
			s[0] = api.EncodeI32(granted(ctx, "fs_remove", fsys.abiRemove(m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]))))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		Export("fs_remove")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
			s[0] = api.EncodeI32(granted(ctx, "fs_swap", fsys.abiSwap(m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]), api.DecodeU32(s[2]),
				api.DecodeU32(s[3]), api.DecodeU32(s[4]), api.DecodeU32(s[5]), api.DecodeI32(s[6]))))
		}), []api.ValueType{i32, i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}).
		Export("fs_swap")
	// The lock waits at most as long as the call may run: a deadline on
	// the call bounds the wait too.
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, s []uint64) {
			rc := granted(ctx, "fs_lock", fsys.LockContext(ctx))
			if rc == codeOK && fsys.full.Load() && !fsys.fullSaid.Swap(true) && logf != nil {
				logf(ctx, 2, "fs_lock: the disk is full, no space for "+rootlock.Path+": served for reading, every write of this call refused")
			}
			s[0] = api.EncodeI32(rc)
		}), []api.ValueType{}, []api.ValueType{i32}).
		Export("fs_lock")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, s []uint64) {
			err := fsys.Unlock()
			if err != nil && logf != nil {
				logf(ctx, 3, err.Error())
			}
			s[0] = api.EncodeI32(errorCode(err))
		}), []api.ValueType{}, []api.ValueType{i32}).
		Export("fs_unlock")
	// The model call is bounded by the call's deadline, as the lock's wait.
	emb := &embedImport{em: em}
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
			s[0] = api.EncodeI32(emb.call(ctx, m.Memory(), api.DecodeU32(s[0]), api.DecodeU32(s[1]), api.DecodeU32(s[2]), api.DecodeU32(s[3])))
		}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		Export("embed")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
			level := int(api.DecodeI32(s[0]))
			if msg, ok := guestString(m.Memory(), api.DecodeU32(s[1]), api.DecodeU32(s[2])); ok && logf != nil {
				logf(ctx, level, msg)
			}
		}), []api.ValueType{i32, i32, i32}, []api.ValueType{}).
		Export("log")
	// Compiled and instantiated apart, not with b.Instantiate, whose
	// module wazero's import resolver cannot take (its wrapper is not the
	// instance the resolver asserts).
	compiled, err := b.Compile(ctx)
	if err != nil {
		return nil, err
	}
	return rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig())
}
