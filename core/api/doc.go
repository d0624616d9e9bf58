// Package api holds Arbor's contract: the types that cross the ABI of
// docs/ABI.md (the params and results of every method, the curate
// operations, the error codes, the LLM pending/resume protocol), their JSON
// forms and the checks a host can run before it sends them (paths, sources,
// option ranges).
//
// Every host reaches the engine with these types: the Go host on wazero
// (host/runtime) decodes the module's answers into them, the native engine
// (core/engine) answers with them, and the JS package's declarations
// (bindings/js/index.d.ts) mirror them. The package holds no engine logic,
// reaches no file or clock, and imports nothing else from Arbor, so that
// any package may depend on it.
package api
