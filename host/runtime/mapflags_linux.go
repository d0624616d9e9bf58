//go:build linux && (amd64 || arm64)

package runtime

import "syscall"

// mapNoReserve keeps the reservation out of the kernel's commit charge.
const mapNoReserve = syscall.MAP_NORESERVE
