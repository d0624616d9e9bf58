package search

import (
	"math/bits"
	"reflect"
	"sync"
	"unsafe"

	"github.com/RoaringBitmap/roaring"
)

// Ranks after an advance. A posting advanced to is found in its chunk by
// its rank in the list's documents (skip.go), and roaring's Rank of a
// document in a dense container counts the bits of every word before it,
// up to 1,024: at a million entries about a sixteenth of a question
// natively, all of it in the advances of maxScore's non-essential clauses
// to the candidates past their first bound (bench/scale/notes.md). The
// rank of the last document read is known, so the rank of one further on
// in the same container is that plus the bits between the two.
//
// The same fields let skipIter.addTo read a container's documents itself
// (containerFrom) instead of through roaring's iterator.
//
// roaring (v0.9.4) does not export a container's words or values: they are
// read from its unexported fields, found by name and type through reflect,
// as skip.go reads ice's, and checked on probe bitmaps. A roaring without
// them is asked its Rank and read through its iterator.

// denseFields are the offsets of roaring's fields a dense rank and a walk
// of a container (containerFrom) read, and the interface tables of a
// bitmap container and of an array container in a container slot.
type denseFields struct {
	keys, containers uintptr // in roaring.Bitmap (its roaringArray's)
	words            uintptr // in the bitmap container
	tab              unsafe.Pointer
	content          uintptr // in the array container
	arrTab           unsafe.Pointer
}

// iface is the layout of a non-empty interface value.
type iface struct {
	tab, data unsafe.Pointer
}

var (
	denseOnce  sync.Once
	dense      denseFields
	denseFound bool
)

// findDense finds denseFields, from a bitmap holding one bitmap container.
func findDense() (denseFields, bool) {
	var f denseFields
	bm := reflect.TypeFor[roaring.Bitmap]()
	hlc, ok := bm.FieldByName("highlowcontainer")
	if !ok || hlc.Type.Kind() != reflect.Struct {
		return f, false
	}
	keys, ok1 := hlc.Type.FieldByName("keys")
	conts, ok2 := hlc.Type.FieldByName("containers")
	if !ok1 || !ok2 || keys.Type != reflect.TypeFor[[]uint16]() || conts.Type.Kind() != reflect.Slice || conts.Type.Elem().Kind() != reflect.Interface {
		return f, false
	}
	f.keys, f.containers = hlc.Offset+keys.Offset, hlc.Offset+conts.Offset
	// 5,000 values of one container are past an array container's 4,096.
	probe := roaring.New()
	for i := range uint32(5000) {
		probe.Add(3 * i)
	}
	slot := reflect.NewAt(conts.Type, unsafe.Add(unsafe.Pointer(probe), f.containers)).Elem()
	if slot.Len() != 1 {
		return f, false
	}
	bc := slot.Index(0).Elem().Type()
	if bc.Kind() != reflect.Pointer || bc.Elem().Kind() != reflect.Struct {
		return f, false
	}
	words, ok := bc.Elem().FieldByName("bitmap")
	if !ok || words.Type != reflect.TypeFor[[]uint64]() {
		return f, false
	}
	f.words = words.Offset
	f.tab = (*iface)(slot.Index(0).Addr().UnsafePointer()).tab
	// What was found holds what was put: 0, 3, …, 63 in the first word.
	w := denseWords(f, probe, 0)
	if len(w) != 1024 || w[0] != 0x9249249249249249 {
		return f, false
	}
	// A few values make an array container.
	few := roaring.BitmapOf(7, 9, 70000)
	slot = reflect.NewAt(conts.Type, unsafe.Add(unsafe.Pointer(few), f.containers)).Elem()
	if slot.Len() != 2 {
		return f, false
	}
	ac := slot.Index(0).Elem().Type()
	if ac.Kind() != reflect.Pointer || ac.Elem().Kind() != reflect.Struct {
		return f, false
	}
	content, ok := ac.Elem().FieldByName("content")
	if !ok || content.Type != reflect.TypeFor[[]uint16]() {
		return f, false
	}
	f.content = content.Offset
	f.arrTab = (*iface)(slot.Index(0).Addr().UnsafePointer()).tab
	if f.arrTab == f.tab {
		return f, false
	}
	if _, a, ok := containerFrom(f, few, 9); !ok || len(a) != 1 || a[0] != 9 {
		return f, false
	}
	if _, a, ok := containerFrom(f, few, 70000); !ok || len(a) != 1 || a[0] != 70000&0xffff {
		return f, false
	}
	return f, true
}

// containerFrom returns the values of b's container holding n (a value of
// b) from n on, as their low 16 bits: a bitmap container's words, n's
// bits and those after it (the bits before n cleared in a copy of its
// word is the caller's: words[0] is n's word), or an array container's
// values from n. ok is false for another container (roaring's runs),
// which roaring's iterator reads.
func containerFrom(f denseFields, b *roaring.Bitmap, n uint32) (words []uint64, arr []uint16, ok bool) {
	keys := *(*[]uint16)(unsafe.Add(unsafe.Pointer(b), f.keys))
	hi := uint16(n >> 16)
	lo, up := 0, len(keys)
	for lo < up {
		if m := int(uint(lo+up) >> 1); keys[m] < hi {
			lo = m + 1
		} else {
			up = m
		}
	}
	if lo == len(keys) || keys[lo] != hi {
		return nil, nil, false
	}
	cs := *(*[]iface)(unsafe.Add(unsafe.Pointer(b), f.containers))
	low := uint16(n)
	switch c := cs[lo]; c.tab {
	case f.tab:
		w := *(*[]uint64)(unsafe.Add(c.data, f.words))
		return w[low/64:], nil, true
	case f.arrTab:
		a := *(*[]uint16)(unsafe.Add(c.data, f.content))
		i, j := 0, len(a)
		for i < j {
			if m := int(uint(i+j) >> 1); a[m] < low {
				i = m + 1
			} else {
				j = m
			}
		}
		return nil, a[i:], true
	}
	return nil, nil, false
}

// denseWords returns the words of container i of b when it is a bitmap
// container, nil otherwise.
func denseWords(f denseFields, b *roaring.Bitmap, i int) []uint64 {
	cs := *(*[]iface)(unsafe.Add(unsafe.Pointer(b), f.containers))
	if i >= len(cs) || cs[i].tab != f.tab {
		return nil
	}
	return *(*[]uint64)(unsafe.Add(cs[i].data, f.words))
}

// rankAfter returns the rank in b of n, a document of b, given that the
// document prev before it has rank r (0 for none read): r plus the bits
// between them when both are in one bitmap container and they are nearer
// each other than n is to its container's start; roaring's Rank otherwise.
func rankAfter(b *roaring.Bitmap, prev, r uint64, n uint32) uint64 {
	denseOnce.Do(func() { dense, denseFound = findDense() })
	from, to := uint(prev)&0xffff, uint(n)&0xffff
	if !denseFound || r == 0 || uint32(prev)>>16 != n>>16 || prev >= uint64(n) || to-from >= to {
		return b.Rank(n)
	}
	keys := *(*[]uint16)(unsafe.Add(unsafe.Pointer(b), dense.keys))
	hi := uint16(n >> 16)
	lo, up := 0, len(keys)
	for lo < up {
		if m := int(uint(lo+up) >> 1); keys[m] < hi {
			lo = m + 1
		} else {
			up = m
		}
	}
	if lo == len(keys) || keys[lo] != hi {
		return b.Rank(n)
	}
	w := denseWords(dense, b, lo)
	if w == nil {
		return b.Rank(n)
	}
	return r + uint64(between(w, from, to))
}

// between is the number of bits of w after from and at or before to.
func between(w []uint64, from, to uint) int {
	a, z := from/64, to/64
	if a == z {
		return bits.OnesCount64(w[a] & (^uint64(0) << (from%64 + 1)) & (^uint64(0) >> (63 - to%64)))
	}
	n := bits.OnesCount64(w[a] >> (from % 64) >> 1)
	for _, v := range w[a+1 : z] {
		n += bits.OnesCount64(v)
	}
	return n + bits.OnesCount64(w[z]<<(63-to%64))
}
