//go:build (darwin || freebsd) && (amd64 || arm64)

package runtime

// mapNoReserve: these kernels charge a PROT_NONE mapping nothing anyway.
const mapNoReserve = 0

// hugePages: these kernels take no such advice (FreeBSD promotes
// superpages by itself).
func hugePages([]byte) {}
