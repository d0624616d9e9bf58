package main

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// openHeadroom is how much the Go heap may grow during an open before its
// collector runs (pauseCollector).
const openHeadroom = 64 << 20

// openEngine opens eng with the collector paused (pauseCollector): every
// open of the CLI's, for a command, a sync or a server.
func (a *app) openEngine(eng *runtime.Engine) (api.OpenResult, error) {
	defer pauseCollector()()
	return eng.Open(a.ctx, api.OpenParams{FixedTime: a.fixedTime})
}

// paused is the state pauseCollector keeps while opens run.
var paused struct {
	sync.Mutex
	n       int   // opens running
	percent int   // the collector's percentage before the first
	limit   int64 // the memory limit before the first
}

// pauseCollector keeps the process's garbage collector from running until
// the heap has grown by openHeadroom, and returns what puts its settings
// back (after the last of overlapping pauses).
//
// An open lists the tree ahead on a second thread while the module reads
// its catalog and index (arborhost.RootFS.WalkAhead); the listing
// allocates (at 100,000 entries 14 MB, 33 MB before its buffers were
// reused), and under the default pacing, whose heap goal stays near its
// floor of 4 MiB in a process that keeps little, that was 15 cycles. Each
// cycle stops the world, and a goroutine running the module's compiled
// code cannot be preempted (wazero's code holds no point where Go's signal
// handler could stop it), so a stop waits until the module next calls the
// host: one held the listing for 105 ms while the module restored its
// catalog, and the open then waited for the listing (bench/scale/notes.md).
//
// Where the module's memory is a Go slice (LinearMemoryInGoHeap) the heap
// is the module's and grows with the tree, and a user's GOGC or GOMEMLIMIT
// says how this process should collect: the settings are left alone.
func pauseCollector() (resume func()) {
	if runtime.LinearMemoryInGoHeap || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	paused.Lock()
	defer paused.Unlock()
	if paused.n == 0 {
		paused.limit = debug.SetMemoryLimit(-1)
		paused.percent = debug.SetGCPercent(-1)
		debug.SetMemoryLimit(min(heldNow(), paused.limit-openHeadroom) + openHeadroom)
	}
	paused.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			paused.Lock()
			defer paused.Unlock()
			if paused.n--; paused.n == 0 {
				debug.SetGCPercent(paused.percent)
				debug.SetMemoryLimit(paused.limit)
			}
		})
	}
}

// heldNow is the memory the Go runtime holds, as its memory limit counts it.
func heldNow() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
