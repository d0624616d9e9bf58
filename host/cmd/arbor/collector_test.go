package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/arbormem/arbor/host/runtime"
)

// A command that runs once turns the pacing collector off below
// oneShotHeap; a resident one, or a process whose user set GOGC or
// GOMEMLIMIT, keeps what it had.
func TestPaceCollector(t *testing.T) {
	if runtime.LinearMemoryInGoHeap {
		t.Skip("the module's memory is in the Go heap here: the collector keeps its defaults")
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
	for _, c := range []struct {
		name     string
		resident bool
		env      string
		percent  int
		limit    int64
	}{
		{"once", false, "", -1, oneShotHeap},
		{"resident", true, "", 100, math.MaxInt64},
		{"GOGC set", false, "GOGC", 100, math.MaxInt64},
		{"GOMEMLIMIT set", false, "GOMEMLIMIT", 100, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			if c.env != "" {
				t.Setenv(c.env, "200")
			}
			paceCollector(c.resident)
			if p, l := settings(); p != c.percent || l != c.limit {
				t.Errorf("percentage %d, limit %d; want %d, %d", p, l, c.percent, c.limit)
			}
		})
	}
}
