package binrec

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"
	"unsafe"
)

// What the Append functions write reads back, the strings share the
// bytes read, and a failure sticks.
func TestRoundTrip(t *testing.T) {
	var b []byte
	b = binary.AppendUvarint(b, math.MaxUint64)
	b = binary.AppendVarint(b, math.MinInt64)
	b = AppendString(b, "caf\u00e9")
	b = AppendList(b, []string{"a", "", "b/c.md"})
	b = AppendList(b, nil)
	b = binary.LittleEndian.AppendUint32(b, 0xdeadbeef)
	b = binary.LittleEndian.AppendUint64(b, 1<<63|5)
	b = AppendSection(b, AppendString(nil, "inside"))
	b = append(b, 7)
	r := NewReader(b)
	if v := r.Uvarint(); v != math.MaxUint64 {
		t.Errorf("Uvarint = %d", v)
	}
	if v := r.Varint(); v != math.MinInt64 {
		t.Errorf("Varint = %d", v)
	}
	if v := r.Str(); v != "caf\u00e9" {
		t.Errorf("Str = %q", v)
	}
	if v := r.List(); !reflect.DeepEqual(v, []string{"a", "", "b/c.md"}) {
		t.Errorf("List = %q", v)
	}
	if v := r.List(); v != nil {
		t.Errorf("empty List = %q", v)
	}
	if v := r.Uint32(); v != 0xdeadbeef {
		t.Errorf("Uint32 = %x", v)
	}
	if v := r.Uint64(); v != 1<<63|5 {
		t.Errorf("Uint64 = %x", v)
	}
	if v := r.Section().Str(); v != "inside" {
		t.Errorf("Section = %q", v)
	}
	if v := r.Byte(); v != 7 || r.Len() != 0 || r.Err() != nil {
		t.Errorf("Byte = %d, %d left, %v", v, r.Len(), r.Err())
	}
	if r.Byte(); r.Err() != ErrShort {
		t.Errorf("reading past the end: %v", r.Err())
	}
	if r.Str() != "" || r.Uvarint() != 0 || r.Err() != ErrShort {
		t.Error("a failure does not stick")
	}
}

// A section whose bytes changed, a string longer than what is left, a
// varint over 64 bits and a count the rest cannot hold all fail.
func TestDamage(t *testing.T) {
	sec := AppendSection(nil, []byte("payload"))
	sec[len(sec)-1] ^= 1
	for name, read := range map[string]func(*Reader){
		"section":  func(r *Reader) { r.Section() },
		"string":   func(r *Reader) { r.Str() },
		"varint":   func(r *Reader) { r.Uvarint() },
		"count":    func(r *Reader) { r.Count(2) },
		"uint64":   func(r *Reader) { r.Uint64() },
		"size":     func(r *Reader) { r.Size() },
		"list":     func(r *Reader) { r.List() },
		"truncate": func(r *Reader) { r.Take(3) },
	} {
		in := map[string][]byte{
			"section":  sec,
			"string":   AppendString(nil, "abc")[:3],
			"varint":   []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"),
			"count":    binary.AppendUvarint(nil, 3),
			"uint64":   {1, 2, 3},
			"size":     binary.AppendUvarint(nil, math.MaxInt32+1),
			"list":     append(binary.AppendUvarint(nil, 2), 1, 'a'),
			"truncate": {1, 2},
		}[name]
		r := NewReader(in)
		if read(r); r.Err() != ErrShort {
			t.Errorf("%s: %v", name, r.Err())
		}
	}
}

// The strings a Reader returns point into the bytes it was given, without
// a copy of them: a persisted catalog or manifest at a million entries is
// about 100 MB, and a copy was most of an open's transient memory.
func TestReaderSharesTheBytes(t *testing.T) {
	b := AppendString(nil, "a string worth sharing")
	s := NewReader(b).Str()
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))+uintptr(len(b))
	if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); s != "a string worth sharing" || p < start || p >= end {
		t.Fatalf("Str() = %q at %#x, outside the bytes read [%#x, %#x)", s, p, start, end)
	}
}
