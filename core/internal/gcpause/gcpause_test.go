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

func live() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A heap an open kept is paced as marked: no cycle until it has grown by
// the room a live heap of its size gets, then Settle's pacing back.
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
	// Paced as a live heap of that size: 64 MiB of room for 32 MiB.
	room := objects / 100 * uint64(roomyPercent(objects, 100))
	if g := heapGoal(); g < objects+room || g > objects+room+1<<20 {
		t.Fatalf("held: heap goal %d MiB for %d MiB of objects, want %d MiB more", g>>20, objects>>20, room>>20)
	}
	// Read a moment apart from the hold's own reading: within a MiB.
	if l, want := debug.SetMemoryLimit(-1), inUse+3*int64(room); l < want-1<<20 || l > want+1<<20 {
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
	if p, want := percent(), roomyPercent(live(), 100); p != want || p >= 300 {
		t.Errorf("settled after a cycle: percentage %d, want %d, the default's room for the 32 MiB kept", p, want)
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

// A pause collects first when the heap grew by more than smallHeadroom
// since the last cycle (what a closed engine left), and not otherwise.
func TestPauseCollectsWhatWasLeft(t *testing.T) {
	enable(t)
	debug.SetGCPercent(-1) // no cycle while the garbage piles up
	churn(8 << 20)
	before := cycles()
	Pause()(false)
	if c := cycles(); c != before {
		t.Fatalf("8 MiB of garbage: %d cycles at the pause, want none", c-before)
	}
	churn(96 << 20)
	before = cycles()
	Pause()(false)
	if c := cycles(); c != before+1 {
		t.Fatalf("104 MiB of garbage: %d cycles at the pause, want one", c-before)
	}
}

// A small live heap gets a headroom of smallHeadroom, up to three times
// the default's; from smallHeadroom on, the default.
func TestRoomyPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		base int
		want int
	}{
		{0, 100, 100},        // no cycle yet
		{10 << 20, 100, 300}, // 64 MiB would be 640 %: three times the default
		{32 << 20, 100, 200}, // 64 MiB of room
		{48 << 20, 100, 134}, // 64 MiB of room, rounded up
		{64 << 20, 100, 100}, // the default's room is 64 MiB already
		{1 << 30, 100, 100},  // a large heap keeps the default
		{10 << 20, -1, -1},   // the collector off stays off
		{10 << 20, 50, 150},  // three times a lower base
	} {
		if got := roomyPercent(c.live, c.base); got != c.want {
			t.Errorf("roomyPercent(%d MiB, %d) = %d, want %d", c.live>>20, c.base, got, c.want)
		}
	}
}

// Settle paces the heap the last cycle marked live with roomyPercent, and
// leaves a percentage the user set (GOGC).
func TestSettlePacesASmallHeap(t *testing.T) {
	enable(t)
	var kept [][]byte
	for _, c := range []struct {
		keep int // MiB live
		want func(p int) bool
		what string
	}{
		{0, func(p int) bool { return p == 300 }, "300"},
		{40, func(p int) bool { return p > 100 && p < 300 }, "between 100 and 300"},
		{128, func(p int) bool { return p == 100 }, "100"},
	} {
		for len(kept) < c.keep {
			kept = append(kept, make([]byte, 1<<20))
		}
		runtime.GC()
		Settle()
		if p := percent(); !c.want(p) || p != roomyPercent(live(), 100) {
			t.Errorf("%d MiB kept (%d MiB live): percentage %d, want %s", c.keep, live()>>20, p, c.what)
		}
	}
	runtime.KeepAlive(kept)
	kept = nil
	// A pause is not undone by a Settle before its resume (the index's
	// batches settle within an open).
	resume := Pause()
	Settle()
	if p := percent(); p != -1 {
		t.Errorf("settled within a pause: percentage %d, want -1 (off)", p)
	}
	resume(false)
	userPercent = true
	t.Cleanup(func() { userPercent = false })
	debug.SetGCPercent(100)
	runtime.GC()
	Settle()
	if p := percent(); p != 100 {
		t.Errorf("GOGC set by the user: percentage %d, want it left at 100", p)
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
