//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package runtime

import (
	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// The engine's linear memory grows, page by page, to a few hundred MiB
// while a large tree opens. wazero's default grows a Go slice by append,
// which copies the whole memory at each step and makes the kernel zero the
// new copy: opening 5,025 files spent more time in the kernel than in the
// engine (bench/index/REPORT.md). Reserving the module's maximum as address
// space once (no access, no swap reserved) and opening pages for reading
// and writing as the memory grows never moves or copies it, and costs no
// more memory than is used.
//
// Each page the module first touches is a fault, and on virtual machines
// whose faults trap to the hypervisor a fault per 4 KiB page was most of
// an open's system time: the reservation asks for transparent huge pages
// where the kernel gives them on request (hugePages), one fault per 2 MiB.
// The memory never shrinks (WebAssembly cannot give pages back), so the
// collapsing and splitting that make huge pages cost elsewhere never
// happen; the cost is resident memory, each 2 MiB region the module
// touches resident whole (14 to 17 MiB more at the sizes measured,
// bench/scale/notes.md).

// LinearMemoryInGoHeap reports whether the engine's linear memory is
// memory of the Go heap, which the host's collector scans and a memory
// limit (debug.SetMemoryLimit) counts: not where it is reserved here.
const LinearMemoryInGoHeap = false

// linearMemory returns the allocator wazero takes through the context
// when it instantiates the engine.
func linearMemory() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		return &mmapMemory{max: max}
	})
}

// mmapMemory is a linear memory reserved up to max and committed up to
// len(buf).
type mmapMemory struct {
	max uint64
	res []byte // the whole reservation, nil until the first Reallocate
	buf []byte // the part in use
}

// Reallocate implements experimental.LinearMemory: it returns nil (the
// module sees memory.grow fail) when the reservation or the kernel refuses.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if m.res == nil {
		if m.max == 0 || m.max > 1<<40 {
			return nil
		}
		res, err := unix.Mmap(-1, 0, int(m.max), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|mapNoReserve)
		if err != nil {
			return nil
		}
		hugePages(res)
		m.res = res
	}
	if size > uint64(len(m.res)) {
		return nil
	}
	if n := uint64(len(m.buf)); size > n {
		if err := unix.Mprotect(m.res[n:size], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil
		}
	}
	m.buf = m.res[:size]
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *mmapMemory) Free() {
	if m.res != nil {
		_ = unix.Munmap(m.res)
		m.res, m.buf = nil, nil
	}
}
