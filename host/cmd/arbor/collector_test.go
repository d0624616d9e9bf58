package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/arbormem/arbor/host/runtime"
)

// An open pauses the collector until the heap has grown by openHeadroom,
// and the settings come back after the last of overlapping opens; a
// process whose user set GOGC or GOMEMLIMIT keeps its own.
func TestPauseCollector(t *testing.T) {
	if runtime.LinearMemoryInGoHeap {
		t.Skip("the module's memory is in the Go heap here: the collector keeps its settings")
	}
	// settings reads the percentage and the limit, leaving them as they are.
	settings := func() (int, int64) {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p, debug.SetMemoryLimit(-1)
	}
	p0, l0 := settings()
	t.Cleanup(func() {
		debug.SetGCPercent(p0)
		debug.SetMemoryLimit(l0)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(math.MaxInt64)

	held := heldNow()
	first := pauseCollector()
	p, l := settings()
	if p != -1 || l < held+openHeadroom || l > held+2*openHeadroom {
		t.Fatalf("paused: percentage %d, limit %d; want -1 and about %d held + %d", p, l, held, openHeadroom)
	}
	second := pauseCollector()
	first()
	first() // twice: counted once
	if p2, l2 := settings(); p2 != -1 || l2 != l {
		t.Errorf("one of two pauses resumed: percentage %d, limit %d; want -1, %d", p2, l2, l)
	}
	second()
	if p, l := settings(); p != 150 || l != math.MaxInt64 {
		t.Errorf("resumed: percentage %d, limit %d; want 150, no limit", p, l)
	}

	// A limit of the process's own that leaves less room stays the bound.
	debug.SetMemoryLimit(held + openHeadroom/2)
	resume := pauseCollector()
	if _, l := settings(); l != held+openHeadroom/2 {
		t.Errorf("under a lower limit %d, paused with limit %d", held+openHeadroom/2, l)
	}
	resume()
	debug.SetMemoryLimit(math.MaxInt64)

	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "200")
			resume := pauseCollector()
			defer resume()
			if p, l := settings(); p != 150 || l != math.MaxInt64 {
				t.Errorf("with %s set: percentage %d, limit %d; want them left alone", env, p, l)
			}
		})
	}
}
