package search

import (
	"math/bits"
	"reflect"
	"slices"
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

// findDense finds denseFields, from bitmaps holding one bitmap container
// and an array container.
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
	if f.words, f.tab, ok = containerField[[]uint64](probe, conts.Type, f.containers, 1, "bitmap"); !ok {
		return f, false
	}
	// What was found holds what was put: 0, 3, …, 63 in the first word.
	w := denseWords(f, probe, 0)
	if len(w) != 1024 || w[0] != 0x9249249249249249 {
		return f, false
	}
	// A few values make an array container.
	few := roaring.BitmapOf(7, 9, 70000)
	if f.content, f.arrTab, ok = containerField[[]uint16](few, conts.Type, f.containers, 2, "content"); !ok || f.arrTab == f.tab {
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
	i, found := containerOf(f, b, n)
	if !found {
		return nil, nil, false
	}
	low := uint16(n)
	if w := denseWords(f, b, i); w != nil {
		return w[low/64:], nil, true
	}
	if a, ok := arrayValues(f, b, i); ok {
		j, _ := slices.BinarySearch(a, low)
		return nil, a[j:], true
	}
	return nil, nil, false
}

// containerOf returns the index of the container of b that holds n's
// range of values, if b has one.
func containerOf(f denseFields, b *roaring.Bitmap, n uint32) (int, bool) {
	keys := *(*[]uint16)(unsafe.Add(unsafe.Pointer(b), f.keys))
	return slices.BinarySearch(keys, uint16(n>>16))
}

// containerField finds the field name, of type T, of the first of the n
// containers of b (whose slice of containers, of type conts, is at off in
// the bitmap): its offset, and the container's interface table.
func containerField[T any](b *roaring.Bitmap, conts reflect.Type, off uintptr, n int, name string) (uintptr, unsafe.Pointer, bool) {
	slot := reflect.NewAt(conts, unsafe.Add(unsafe.Pointer(b), off)).Elem()
	if slot.Len() != n {
		return 0, nil, false
	}
	c := slot.Index(0).Elem().Type()
	if c.Kind() != reflect.Pointer || c.Elem().Kind() != reflect.Struct {
		return 0, nil, false
	}
	fd, ok := c.Elem().FieldByName(name)
	if !ok || fd.Type != reflect.TypeFor[T]() {
		return 0, nil, false
	}
	return fd.Offset, (*iface)(slot.Index(0).Addr().UnsafePointer()).tab, true
}

// arrayValues returns the values of b's container i when it is an array
// container.
func arrayValues(f denseFields, b *roaring.Bitmap, i int) ([]uint16, bool) {
	cs := *(*[]iface)(unsafe.Add(unsafe.Pointer(b), f.containers))
	if i >= len(cs) || cs[i].tab != f.arrTab {
		return nil, false
	}
	return *(*[]uint16)(unsafe.Add(cs[i].data, f.content)), true
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
	i, found := containerOf(dense, b, n)
	if !found {
		return b.Rank(n)
	}
	w := denseWords(dense, b, i)
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
