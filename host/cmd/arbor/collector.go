package main

import (
	"os"
	"runtime/debug"

	"github.com/arbormem/arbor/host/runtime"
)

// oneShotHeap bounds the Go heap of a command that runs once and exits
// (every command but the resident ones): its collector runs only when the
// heap reaches it.
const oneShotHeap = 64 << 20

// paceCollector sets the garbage collector of the process for the command
// it runs; main installs it (tests run commands in their own process and
// leave its collector alone).
//
// A command that runs once keeps a few MiB of its own (the engine's memory
// is the module's linear memory, outside the Go heap), but an open of a
// large tree lists it ahead on a second thread (arborhost.RootFS.WalkAhead),
// which allocates: at 100,000 entries 33 MB in 15 cycles of the default
// pacing, whose heap goal stays near its floor of 4 MiB. Each cycle stops
// the world, and a goroutine running the module's compiled code cannot be
// preempted (wazero's code holds no safe point Go's signal handler could
// stop it at), so a stop waits until the module next calls the host: one
// cycle held the walk for 105 ms while the module restored its catalog,
// and the open then waited for the walk. Without cycles below
// oneShotHeap, `arbor query` at 100,000 entries takes 0.84 of the wall
// time, at 10,000 0.89 (bench/scale/notes.md). Resident commands (mcp,
// serve) keep the default pacing: their heap lives for hours. So does a
// build whose module memory is a Go slice (LinearMemoryInGoHeap), which the
// limit would count, and a process the user set GOGC or GOMEMLIMIT for.
func paceCollector(resident bool) {
	if resident || runtime.LinearMemoryInGoHeap || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeap)
}
