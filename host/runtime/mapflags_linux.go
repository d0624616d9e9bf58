//go:build linux && (amd64 || arm64)

package runtime

import "golang.org/x/sys/unix"

// mapNoReserve keeps the reservation out of the kernel's commit charge.
const mapNoReserve = unix.MAP_NORESERVE

// hugePages asks for transparent huge pages in the mapping b, where the
// system gives them on request (transparent_hugepage "madvise", the usual
// default) or always. A kernel without them refuses the advice, which
// changes nothing: the memory is the same, in smaller pages.
func hugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
