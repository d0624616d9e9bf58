// Package gcpause pauses the garbage collector of a WebAssembly module
// for work that allocates what it keeps.
package gcpause

import "runtime/debug"

// Pause stops the collector until resume is called (a second
// call does nothing). Under WebAssembly the module is a process of its
// own, whose collector runs on its one thread between the open's work,
// with write barriers on through each cycle: at 100,000 entries an open
// that finds the tree as it left it allocates 52 MB and keeps them all
// (the restored catalog and index), and the one collection it set off,
// which freed nothing, was a quarter of it (bench/wasm/REPORT.md, the
// collector paused). Elsewhere the collector is the host program's, not
// the engine's to stop (gcpause_other.go).
func Pause() (resume func()) {
	old := debug.SetGCPercent(-1)
	paused := true
	return func() {
		if paused {
			paused = false
			debug.SetGCPercent(old)
		}
	}
}
