package runtime

import _ "embed"

// embeddedWasm is dist/arbor.wasm, copied here by `./build.sh wasm`. The
// file is ignored by git; an empty placeholder compiles but New refuses it.
//
//go:embed arbor.wasm
var embeddedWasm []byte
