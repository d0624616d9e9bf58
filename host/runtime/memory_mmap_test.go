//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package runtime

import (
	"testing"
	"unsafe"
)

// The reserved memory grows in place, keeps what was written, refuses to
// pass its maximum, and is released by Free.
func TestMmapMemory(t *testing.T) {
	const page = 1 << 16
	m := linearMemory().Allocate(page, 64*page)
	b := m.Reallocate(page)
	if len(b) != page {
		t.Fatalf("first length %d", len(b))
	}
	b[page-1] = 7
	grown := m.Reallocate(40 * page)
	if len(grown) != 40*page || unsafe.SliceData(grown) != unsafe.SliceData(b) {
		t.Fatalf("grown to %d bytes at another address", len(grown))
	}
	if grown[page-1] != 7 || grown[40*page-1] != 0 {
		t.Error("growing lost or dirtied bytes")
	}
	grown[40*page-1] = 9 // writable up to the new length
	if m.Reallocate(65*page) != nil {
		t.Error("grew past its maximum")
	}
	if again := m.Reallocate(40 * page); len(again) != 40*page || again[40*page-1] != 9 {
		t.Error("a refused growth changed the memory")
	}
	m.Free()
	m.Free() // twice is harmless
}
