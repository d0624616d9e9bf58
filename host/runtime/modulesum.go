//go:build arborwazero

package runtime

import (
	"context"
	_ "embed"
	"encoding/hex"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
)

// The CLI's build (build.sh, build_cli) vendors wazero with the patches of
// host/_patch, builds with the tag arborwazero, and writes the SHA-256 and
// size of the module it embeds beside it, in the copy it builds from: the
// patched wazero then keys its compilation cache with that hash instead of
// hashing the module at every start (11 ms of the CLI's floor).

//go:embed arbor.wasm.sha256
var embeddedSum string

// builtSum returns the SHA-256 of the embedded module as its build wrote
// it, and false when it wrote none for a module of this size: a build put
// together otherwise hashes the module as wazero does.
func builtSum() (sum [32]byte, ok bool) {
	f := strings.Fields(embeddedSum) // "HEX SIZE"
	if len(f) != 2 || len(embeddedWasm) == 0 {
		return sum, false
	}
	if n, err := strconv.Atoi(f[1]); err != nil || n != len(embeddedWasm) {
		return sum, false
	}
	b, err := hex.DecodeString(f[0])
	if err != nil || len(b) != len(sum) {
		return sum, false
	}
	copy(sum[:], b)
	return sum, true
}

// withModuleSum returns ctx for compiling wasm, with wasm's SHA-256 when
// wasm is the embedded module itself (not a copy: WithWasm's bytes are
// hashed as given) and its build wrote the hash.
func withModuleSum(ctx context.Context, wasm []byte) context.Context {
	if len(wasm) != len(embeddedWasm) || unsafe.SliceData(wasm) != unsafe.SliceData(embeddedWasm) {
		return ctx
	}
	if sum, ok := builtSum(); ok {
		return experimental.WithModuleSHA256(ctx, sum)
	}
	return ctx
}
