//go:build !arborwazero

package runtime

import "context"

// builtSum reports that no build wrote the embedded module's SHA-256: only
// the CLI's build does (modulesum.go).
func builtSum() ([32]byte, bool) { return [32]byte{}, false }

// withModuleSum returns ctx: wazero as published hashes the module itself.
func withModuleSum(ctx context.Context, _ []byte) context.Context { return ctx }
