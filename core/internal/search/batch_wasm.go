//go:build wasm

package search

// maxBatchBytes bounds the text of one bluge batch (see batch.go). In the
// module, batches of 2 MiB built 4,490 chat sessions of 10 KB with 15 %
// less CPU under wazero than batches of 1 MiB, but raised the peak linear
// memory from 384 to 447 MiB: memory is what bounds a build in
// WebAssembly (a 4 GiB address space, a browser tab).
const maxBatchBytes = 1 << 20
