package api

// Version is Arbor's release: the engine, its contract and every host
// built from this tree. package.json carries the same (a test checks).
const Version = "0.1.0"
