//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package runtime

import "github.com/tetratelabs/wazero/experimental"

// LinearMemoryInGoHeap reports whether the engine's linear memory is
// memory of the Go heap, which the host's collector scans and a memory
// limit (debug.SetMemoryLimit) counts: wazero's default slice is.
const LinearMemoryInGoHeap = true

// linearMemory is wazero's default where the reservation of memory_mmap.go
// is not built: a Go slice grown by copying.
func linearMemory() experimental.MemoryAllocator { return nil }
