package gcpause

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// percent is the collector's percentage now.
func percent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// churn allocates n bytes in 64 KiB pieces that nothing keeps.
func churn(n int) {
	for i := 0; i < n>>16; i++ {
		b := make([]byte, 64<<10)
		b[0] = 1
		sink = b
	}
	sink = nil
}

var sink []byte

// enable runs the pacing natively, as under WebAssembly, and gives the
// process its collector back afterwards.
func enable(t *testing.T) {
	t.Helper()
	enabled = true
	runtime.GC()
	t.Cleanup(func() {
		release(true)
		enabled = runtime.GOOS == "wasip1"
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A heap an open kept is paced as marked: no cycle until it has grown by
// as much again, then the collector's own pacing back at the next Settle.
func TestKeptHeapIsPacedAsMarked(t *testing.T) {
	enable(t)
	resume := Pause()
	if p := percent(); p != -1 {
		t.Fatalf("paused: percentage %d, want -1 (off)", p)
	}
	kept := make([][]byte, 0, 512)
	for range 512 { // 32 MiB the open keeps
		kept = append(kept, make([]byte, 64<<10))
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	objects, inUse := s[0].Value.Uint64(), int64(s[1].Value.Uint64()-s[2].Value.Uint64())
	resume(true)
	resume(false) // a second call does nothing
	if p := percent(); p <= 100 {
		t.Fatalf("held: percentage %d, want above 100", p)
	}
	if g := heapGoal(); g < 2*objects || g > 2*objects+1<<20 {
		t.Fatalf("held: heap goal %d MiB for %d MiB of objects, want them doubled", g>>20, objects>>20)
	}
	// Read a moment apart from the hold's own reading: within a MiB.
	if l, want := debug.SetMemoryLimit(-1), inUse+3*int64(objects); l < want-1<<20 || l > want+1<<20 {
		t.Fatalf("held: memory limit %d MiB with %d MiB in use, want a backstop at three times the headroom", l>>20, inUse>>20)
	}
	before := cycles()
	churn(8 << 20)
	Settle()
	if c := cycles(); c != before {
		t.Fatalf("8 MiB of garbage on a held 32 MiB heap ran %d cycles, want none", c-before)
	}
	if p := percent(); p <= 100 {
		t.Fatalf("settled before any cycle: percentage %d, want still held", p)
	}
	churn(96 << 20)
	if c := cycles(); c == before {
		t.Fatal("96 MiB of garbage past the goal ran no cycle")
	}
	Settle()
	if p := percent(); p != 100 {
		t.Errorf("settled after a cycle: percentage %d, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("settled: memory limit %d, want none", l)
	}
	runtime.KeepAlive(kept)
}

// A pause while a kept heap is held gives the collector its own pacing
// first: its resume then restores the default, not the hold.
func TestPauseEndsAHold(t *testing.T) {
	enable(t)
	Pause()(true)
	if p := percent(); p <= 100 {
		t.Fatalf("held: percentage %d, want above 100", p)
	}
	resume := Pause()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("paused again: memory limit %d, want the hold's ended", l)
	}
	if p := percent(); p != -1 {
		t.Errorf("paused again: percentage %d, want -1", p)
	}
	resume(false)
	if p := percent(); p != 100 {
		t.Errorf("resumed: percentage %d, want 100", p)
	}
}

// A limit the host set (GOMEMLIMIT) below the hold's stays.
func TestHoldKeepsALowerLimit(t *testing.T) {
	enable(t)
	debug.SetMemoryLimit(1 << 20)
	Pause()(true)
	if l := debug.SetMemoryLimit(-1); l != 1<<20 {
		t.Errorf("held: memory limit %d, want the host's 1 MiB", l)
	}
	release(true)
	if l := debug.SetMemoryLimit(-1); l != 1<<20 {
		t.Errorf("released: memory limit %d, want the host's 1 MiB", l)
	}
}

// Natively the collector is the host program's: nothing changes.
func TestNativeLeavesTheCollector(t *testing.T) {
	if runtime.GOOS == "wasip1" {
		t.Skip("the module's collector is the engine's")
	}
	Pause()(true)
	Settle()
	if p := percent(); p != 100 {
		t.Errorf("percentage %d, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d, want none", l)
	}
}

// What an open's pause and its held resume cost together.
func BenchmarkPauseHold(b *testing.B) {
	enabled = true
	b.Cleanup(func() {
		release(true)
		enabled = runtime.GOOS == "wasip1"
	})
	b.ReportAllocs()
	for b.Loop() {
		Pause()(true)
	}
}
