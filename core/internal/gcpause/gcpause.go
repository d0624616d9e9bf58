// Package gcpause paces the garbage collector of a WebAssembly module
// around work that allocates what it keeps.
//
// Under WebAssembly the module is a process of its own, whose collector
// runs on its one thread between the engine's work, with write barriers
// on through each cycle. At 100,000 entries an open that finds the tree as
// it left it allocates 52 MB and keeps them all (the restored catalog and
// index): the one collection it set off freed nothing and was a quarter of
// the open, and once the open no longer set it off, the same collection
// came at the first question's first allocation and was half of that
// question (bench/wasm/REPORT.md, the collector paused). Elsewhere the
// collector is the host program's, not the engine's to tune: every
// function here does nothing.
package gcpause

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// enabled is whether the engine paces the collector: only as a module of
// its own. A variable so that the tests run the pacing natively.
var enabled = runtime.GOOS == "wasip1"

// minHeadroom is the least a held heap may grow by before the next cycle,
// the runtime's own least heap goal (4 MB).
const minHeadroom = 4 << 20

// backstop is how many times its headroom a held heap may grow by before
// the memory limit calls a cycle: the bound on what an open's hold lets a
// request allocate once the cycle it was paced for has run and before the
// next Settle (the percentage then still high).
const backstop = 3

// smallHeadroom is how much a small live heap may grow before its next
// cycle: under WebAssembly a cycle marks on the engine's one thread, with
// write barriers on, and a question of a 1,000-entry memory allocates about
// a hundredth of what is live, so the default (the live heap again) ran a
// cycle every few questions. With the percentage raised until the headroom
// is 64 MiB, at most three times the default, a question took 0.81-0.89
// times the CPU at 1,000 and 10,000 entries under wazero, for 14-20 MiB
// more linear memory (bench/scale/notes.md). A live heap of 64 MiB or more
// keeps the default: its headroom is at least this already, and raising
// it would grow a memory whose pages wasm never gives back.
const smallHeadroom = 64 << 20

// maxRoom bounds the raise of the percentage over the default, as a factor.
const maxRoom = 3

// roomyPercent is the percentage a live heap of live bytes is paced with,
// for a default of base percent: base raised until the headroom reaches
// smallHeadroom, up to maxRoom times base.
func roomyPercent(live uint64, base int) int {
	if live == 0 || base <= 0 {
		return base
	}
	want := (smallHeadroom*100 + live - 1) / live
	return int(min(max(want, uint64(base)), uint64(maxRoom*base)))
}

// userPercent is whether the process's environment sets GOGC: the pacing
// is then the user's, and Settle leaves it.
var userPercent = os.Getenv("GOGC") != ""

// held is the pacing Pause's resume(true) put in place, until Settle or
// the next Pause ends it.
var held struct {
	sync.Mutex
	on      bool
	cycles  uint64 // the collector's cycles when it began
	percent int    // the collector's percentage before the pause
	limit   int64  // the memory limit before
	// pauses is how many pauses are not yet resumed: Settle paces no
	// heap meanwhile.
	pauses int
}

// The metrics read, in slices made once: reading them then allocates
// nothing, which could start the cycle being paced.
var (
	samples = []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	goalSample = []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
)

// Pause stops the collector until resume is called (a second call does
// nothing). kept says that what was allocated since the pause is held
// (an open that restored its state and read nothing): the collector then
// resumes as though its last cycle had marked that heap live, with its
// next cycle due once the heap has grown by as much again (or by
// smallHeadroom, for a small heap), which is how Settle paces a heap the
// collector has marked. Resumed outright, its first cycle would come at
// the next allocation, to mark that heap and free nothing. The runtime
// takes no heap goal, only a percentage of the heap its last cycle
// marked: the pacing raises the percentage until the goal the runtime
// reports is that heap and its room, and gives Settle's pacing back once
// that cycle has run.
func Pause() (resume func(kept bool)) {
	if !enabled {
		return func(bool) {}
	}
	release(true)
	collectFirst()
	held.Lock()
	held.pauses++
	held.Unlock()
	old := debug.SetGCPercent(-1)
	paused := true
	return func(kept bool) {
		if !paused {
			return
		}
		paused = false
		held.Lock()
		held.pauses--
		held.Unlock()
		if kept && old >= 0 {
			hold(old)
			return
		}
		debug.SetGCPercent(old)
	}
}

// collectFirst runs a cycle before a pause when the heap has grown by
// more than smallHeadroom since the last one marked it: what a closed
// engine left is then garbage, and with the collector paused a reopen
// would add its own heap to it (at 1M entries a reopen in one module took
// the linear memory from 553 to 1,096 MiB). The first open of a module
// finds a heap of a few MiB and runs none.
func collectFirst() {
	held.Lock()
	metrics.Read(objectsLive)
	objects, live := objectsLive[0].Value.Uint64(), objectsLive[1].Value.Uint64()
	held.Unlock()
	if objects > live+smallHeadroom {
		runtime.GC()
	}
}

// objectsLive reads the heap's objects now and what the last cycle marked
// live, under held's lock.
var objectsLive = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}

// Settle gives the collector its own pacing back once the cycle a kept
// heap was paced for has run: the default, with more room for a small
// live heap (roomyPercent). The engine calls it between requests and
// between the index's batches: work that grows the heap past the limit
// then gets the default pacing back at its next batch, not cycles back to
// back at the limit.
func Settle() {
	if enabled {
		release(false)
		roomy()
	}
}

// roomy sets the percentage roomyPercent gives the heap the last cycle
// marked live, unless a pause or a hold is on or the user set GOGC. It is
// set at every call rather than when it changes: other pacing (Pause,
// release) sets it too, and setting it costs a lock, not a cycle.
func roomy() {
	if userPercent {
		return
	}
	held.Lock()
	defer held.Unlock()
	if held.on || held.pauses > 0 {
		return
	}
	metrics.Read(objectsLive)
	debug.SetGCPercent(roomyPercent(objectsLive[1].Value.Uint64(), 100))
}

// hold paces the heap allocated so far as marked live: its next cycle
// due once it has grown by the room roomyPercent gives it (by percent of
// it when the user set GOGC), and the memory limit a backstop at backstop
// times that headroom. percent is the percentage to give back at release.
func hold(percent int) {
	held.Lock()
	defer held.Unlock()
	metrics.Read(samples)
	objects := samples[3].Value.Uint64()
	// The kept heap is paced as roomy paces a live heap of its size (the
	// percentage before the pause may be a small heap's), or as the user
	// set it.
	p := percent
	if !userPercent {
		p = roomyPercent(max(objects, minHeadroom), 100)
	}
	room := max(objects, minHeadroom) / 100 * uint64(p)
	pace(p, objects+room)
	// The limit counts all the runtime holds, not the heap alone.
	inUse := samples[1].Value.Uint64() - samples[2].Value.Uint64()
	limit := int64(min(inUse+backstop*room, math.MaxInt64))
	old := debug.SetMemoryLimit(-1)
	// A lower limit set by the host (GOMEMLIMIT) stays the lower.
	debug.SetMemoryLimit(min(limit, old))
	held.on, held.cycles, held.percent, held.limit = true, samples[0].Value.Uint64(), percent, old
}

// pace sets the least percentage, not below percent, whose heap goal as
// the runtime reports it reaches target (or the highest goal any reaches,
// under a memory limit). The goal is searched rather than computed from
// the runtime's formula, which is its own to change. Nothing allocates
// meanwhile, so no cycle starts on a percentage tried on the way.
func pace(percent int, target uint64) {
	goal := func(p int) uint64 {
		debug.SetGCPercent(p)
		metrics.Read(goalSample)
		return goalSample[0].Value.Uint64()
	}
	lo, hi := percent, 1<<20
	target = min(target, goal(hi))
	for lo < hi {
		if mid := lo + (hi-lo)/2; goal(mid) >= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	debug.SetGCPercent(lo)
}

// release ends the pacing of hold: at once when force, else when a cycle
// has run since.
func release(force bool) {
	held.Lock()
	defer held.Unlock()
	if !held.on {
		return
	}
	if !force {
		metrics.Read(samples[:1])
		if samples[0].Value.Uint64() == held.cycles {
			return
		}
	}
	debug.SetMemoryLimit(held.limit)
	debug.SetGCPercent(held.percent)
	held.on = false
}
