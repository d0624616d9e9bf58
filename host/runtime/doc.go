// Package runtime runs Arbor's WebAssembly engine (dist/arbor.wasm, embedded
// at build time) under wazero, with the host ABI of docs/ABI.md: WASI for
// what the Go runtime needs (real clocks, a real random source, stderr) and
// the arbor_host file functions (host/arborhost), confined to one memory
// root on disk. The package holds the module's lifecycle: compiling and
// caching it, instantiating it, serializing calls, the typed methods of
// the ABI and the driver of calls that wait on a model.
//
// An Engine is one instantiated module serving one root:
//
//	eng, err := runtime.New(ctx, "/path/to/root")
//	if err != nil { ... }
//	defer eng.Close(ctx)
//	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil { ... }
//	res, err := eng.Query(ctx, api.SearchParams{Query: "invoice retry"})
//
// Compiled code is cached in the user cache folder (os.UserCacheDir()/arbor/wazero),
// so a new process starts without recompiling the module.
//
// A host that does not trust what it asks of the engine sandboxes it
// (docs/sandbox.md): WithCallTimeout stops a call at its deadline,
// WithMaxMemory caps the module's memory, and WithReadOnly grants the root
// read-only. A module stopped by a limit is replaced at the next call.
package runtime
