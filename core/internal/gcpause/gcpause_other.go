//go:build !wasip1

package gcpause

// Pause does nothing: outside WebAssembly the engine shares its process,
// and the collector is the host program's (gcpause_wasip1.go).
func Pause() (resume func()) { return func() {} }
