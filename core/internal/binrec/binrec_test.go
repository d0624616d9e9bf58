package binrec

import (
	"encoding/binary"
	"hash/crc32"
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

// Uvarint and Size read every value across the one-byte boundary, Size
// refuses one past an int32, and a varint cut short fails.
func TestUvarintBoundary(t *testing.T) {
	vals := []uint64{0, 1, 127, 128, 255, 300, 16383, 16384, math.MaxInt32, math.MaxInt32 + 1}
	var b []byte
	for _, v := range vals {
		b = binary.AppendUvarint(b, v)
	}
	r := NewReader(b)
	for _, v := range vals {
		if got := r.Uvarint(); got != v || r.Err() != nil {
			t.Fatalf("Uvarint = %d (%v), want %d", got, r.Err(), v)
		}
	}
	if r.Uvarint(); r.Err() != ErrShort {
		t.Errorf("Uvarint past the end: %v, want ErrShort", r.Err())
	}
	r = NewReader(b)
	for _, v := range vals[:len(vals)-1] {
		if got := r.Size(); uint64(got) != v || r.Err() != nil {
			t.Fatalf("Size = %d (%v), want %d", got, r.Err(), v)
		}
	}
	if r.Size(); r.Err() != ErrShort {
		t.Errorf("Size past MaxInt32: %v, want ErrShort", r.Err())
	}
	for _, cut := range [][]byte{{0x80}, {0xff, 0xff}} {
		if r := NewReader(cut); r.Uvarint() != 0 || r.Err() != ErrShort {
			t.Errorf("Uvarint of % x: %v, want ErrShort", cut, r.Err())
		}
		if r := NewReader(cut); r.Size() != 0 || r.Err() != ErrShort {
			t.Errorf("Size of % x: %v, want ErrShort", cut, r.Err())
		}
	}
}

// Reading records shaped as the catalog's: a kind, a path, a stamp, the
// file's size, times and inode, a title and two lists.
func BenchmarkReadRecords(b *testing.B) {
	const n = 10_000
	var data []byte
	for i := range n {
		data = append(data, 1)
		data = AppendString(data, "conversations/locomo/conv-26/session-0001/message-"+string(rune('a'+i%26))+".md")
		data = AppendString(data, "3f2a9c0d1e4b5a6f")
		data = binary.AppendVarint(data, 1234)
		data = binary.AppendVarint(data, 1_764_000_000_000+int64(i))
		data = binary.AppendVarint(data, 1_764_000_000_000+int64(i))
		data = binary.AppendUvarint(data, uint64(1_000_000+i))
		data = AppendString(data, "Melanie painted a sunrise")
		data = AppendList(data, []string{"people/melanie.md", "topics/painting.md"})
		data = AppendList(data, []string{"importance", "60", "maturity", "draft"})
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(data)
		for range n {
			r.Byte()
			r.Str()
			r.Str()
			r.Varint()
			r.Varint()
			r.Varint()
			r.Uvarint()
			r.Str()
			r.List()
			r.List()
		}
		if r.Err() != nil || r.Len() != 0 {
			b.Fatal(r.Err(), r.Len())
		}
	}
}

// The checksum of a 1 MiB body, against the CRC-32C it replaced; under
// WebAssembly (`GOOS=wasip1 GOARCH=wasm go test -bench Checksum -exec
// ...`, internal/wasiexec) the CRC has no processor instruction.
func BenchmarkChecksum(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, c := range []struct {
		name string
		sum  func([]byte) uint32
	}{
		{"xxh64", Checksum},
		{"crc32c", func(b []byte) uint32 { return crc32.Checksum(b, table) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				c.sum(data)
			}
		})
	}
}
