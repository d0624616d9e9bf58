//go:build linux && (amd64 || arm64)

package runtime

import "golang.org/x/sys/unix"

// mapNoReserve keeps the reservation out of the kernel's commit charge.
const mapNoReserve = unix.MAP_NORESERVE
