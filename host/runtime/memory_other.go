//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package runtime

import "github.com/tetratelabs/wazero/experimental"

// linearMemory is wazero's default where the reservation of memory_mmap.go
// is not built: a Go slice grown by copying.
func linearMemory() experimental.MemoryAllocator { return nil }
