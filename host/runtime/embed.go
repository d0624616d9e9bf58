package runtime

import (
	_ "embed"
	"fmt"
	"hash/crc32"
	"sync"
)

// embeddedWasm is dist/arbor.wasm, copied here by `./build.sh wasm`. The
// file is ignored by git; an empty placeholder compiles but New refuses it.
//
//go:embed arbor.wasm
var embeddedWasm []byte

// ModuleDigest identifies the embedded engine module: two builds whose
// digests differ may answer the same call differently. A client of an
// engine kept open by another process (host/serve) compares it with the
// server's before it sends a call. It is the module's SHA-256 when the
// build wrote it (the CLI's, modulesum.go), else its CRC-32C, no defence
// against a forger (none is needed: both ends are the same user's
// programs) but read in a few milliseconds, which a client that must start
// faster than the engine can afford.
func ModuleDigest() string {
	moduleDigestOnce.Do(func() {
		if sum, ok := builtSum(); ok {
			moduleDigest = fmt.Sprintf("%d-sha256-%x", len(embeddedWasm), sum)
			return
		}
		sum := crc32.Checksum(embeddedWasm, crc32.MakeTable(crc32.Castagnoli))
		moduleDigest = fmt.Sprintf("%d-%08x", len(embeddedWasm), sum)
	})
	return moduleDigest
}

var (
	moduleDigestOnce sync.Once
	moduleDigest     string
)
