//go:build !wasip1

package engine

// pauseCollector does nothing: outside WebAssembly the engine shares its
// process, and the collector is the host program's (gc_wasip1.go).
func pauseCollector() (resume func()) { return func() {} }
