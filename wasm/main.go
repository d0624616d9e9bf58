//go:build wasip1

// Command wasm is the glue between the engine and a WebAssembly host: the
// exports and imports of docs/ABI.md, nothing else. Everything the module
// does is decided in core/engine.
package main

import (
	"unsafe"

	"github.com/arbormem/arbor/core/engine"
)

// abiVersion is the version of docs/ABI.md this module implements.
const abiVersion = 8

func main() {}

var session = func() *engine.Session {
	s := engine.NewSession(hostFS{}, hostLogger{})
	s.SetEmbedder(hostEmbedder{})
	return s
}()

// blocks pins every buffer handed to the host, keyed by its address, so the
// garbage collector keeps it alive and arbor_call can check that a request
// lies inside memory the guest gave out.
var blocks = map[uint32][]byte{}

//go:wasmexport arbor_abi_version
func arborABIVersion() int32 { return abiVersion }

//go:wasmexport arbor_alloc
func arborAlloc(size int32) uint32 {
	if size <= 0 {
		return 0
	}
	return pin(make([]byte, size))
}

//go:wasmexport arbor_free
func arborFree(ptr uint32) { delete(blocks, ptr) }

//go:wasmexport arbor_call
func arborCall(ptr, length uint32) uint64 {
	var out []byte
	if req, ok := lookup(ptr, length); ok {
		out = session.Call(req)
	} else {
		out = []byte(`{"id":null,"error":{"code":"invalid_request","message":"request bytes lie outside memory given out by arbor_alloc"}}`)
	}
	return uint64(pin(out))<<32 | uint64(len(out))
}

func pin(b []byte) uint32 {
	if len(b) == 0 {
		b = make([]byte, 1)
	}
	p := uint32(uintptr(unsafe.Pointer(&b[0])))
	blocks[p] = b
	return p
}

func lookup(ptr, length uint32) ([]byte, bool) {
	b, ok := blocks[ptr]
	if !ok || int(length) > len(b) {
		return nil, false
	}
	return b[:length], true
}
