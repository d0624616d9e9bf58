package engine

import "runtime/debug"

// pauseCollector stops the collector until resume is called (a second
// call does nothing). Under WebAssembly the module is a process of its own, whose
// collector runs on its one thread between the open's work, with write
// barriers on through each cycle: at 100,000 entries a quarter of an open
// that finds the tree as it left it, which allocates little but what it
// keeps, the restored catalog and index (bench/wasm/REPORT.md, sixth pass).
// Elsewhere the collector is the host program's, not the engine's to stop
// (gc_other.go).
func pauseCollector() (resume func()) {
	old := debug.SetGCPercent(-1)
	paused := true
	return func() {
		if paused {
			paused = false
			debug.SetGCPercent(old)
		}
	}
}
