//go:build !wasm

package search

// maxBatchBytes bounds the text of one bluge batch. bluge analyzes a
// whole batch, keeping every token of it in memory, before it builds the
// batch's segment: ingesting 7 MiB in one batch peaked at 560 MiB under
// wasm, 360 MiB in batches of 1 MiB (bench/ingest). Smaller batches cost
// time: bluge writes a postings list per term and segment, and merges the
// segments again. Building 4,490 chat sessions of 10 KB (bench/build) in
// batches of 2 MiB rather than 1 took 20 % less CPU natively (4 MiB gained
// little more); WebAssembly, where memory is what bounds a build, keeps
// batches of 1 MiB (batch_wasm.go).
const maxBatchBytes = 2 << 20
