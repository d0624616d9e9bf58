// Package binrec writes and reads the binary records of the caches the
// engine keeps under .arbor/ (the catalog, the index manifest): varints,
// length-prefixed strings and lists, little-endian fixed-size integers and
// checksummed sections. The files are caches, trusted only whole: a
// Reader's first failure sticks, and the caller rebuilds what it reads.
package binrec

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// Checksum is the low 32 bits of the XXH64 of b. It guards the caches
// against damage (a torn or truncated write, a disk's bad block), not
// against a forger, and it is computed on every byte an open restores and
// every index block a question reads: in WebAssembly, where Go's CRC-32C
// has no processor instruction and falls back to tables, XXH64 checks
// 3.7 GB/s to its 0.51 (BenchmarkChecksum under wazero; natively 10.6
// against 19.8, which no command of the CLI runs).
func Checksum(b []byte) uint32 { return uint32(xxhash.Sum64(b)) }

// AppendString appends s as its length (uvarint) and its bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendList appends l as its length (uvarint) and its strings.
func AppendList(b []byte, l []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = AppendString(b, s)
	}
	return b
}

// AppendSection appends sec as its Checksum (4 bytes, little endian), its
// length (uvarint) and its bytes.
func AppendSection(b, sec []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, Checksum(sec))
	b = binary.AppendUvarint(b, uint64(len(sec)))
	return append(b, sec...)
}

// ErrShort is a Reader's error: what it read ends early, or holds a
// value out of range or a section whose checksum fails.
var ErrShort = errors.New("binrec: record ends early or is malformed")

// Reader reads records from a file's bytes. The strings it returns point
// into those bytes rather than each taking a copy, and the bytes are not
// copied either: at a million entries a persisted catalog or manifest is
// about 100 MB, and a copy of it besides the bytes read was most of what
// an open needed above what it keeps. After a failure every read returns
// the zero value.
type Reader struct {
	raw []byte // the file, for checksums
	s   string // the same bytes, for the strings returned
	off int
	err error
}

// NewReader reads b, which the caller gives up: the strings read share
// its bytes, so b must never change afterwards.
func NewReader(b []byte) *Reader {
	return &Reader{raw: b, s: unsafe.String(unsafe.SliceData(b), len(b))}
}

// Err is ErrShort once a read failed, else nil.
func (r *Reader) Err() error { return r.err }

// Len is the number of bytes left.
func (r *Reader) Len() int { return len(r.s) - r.off }

// Rest returns the bytes left, without reading them.
func (r *Reader) Rest() []byte { return r.raw[r.off:] }

func (r *Reader) fail() { r.err, r.off = ErrShort, len(r.s) }

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.off >= len(r.s) {
		r.fail()
		return 0
	}
	r.off++
	return r.s[r.off-1]
}

// small reads a varint of one byte (a number below 128), if the next is
// one: most are (the lengths and counts of a catalog record), and the
// readers below take it inline, where a call, in WebAssembly, costs more
// than the read.
func (r *Reader) small() (uint64, bool) {
	if r.off < len(r.s) {
		if c := r.s[r.off]; c < 0x80 {
			r.off++
			return uint64(c), true
		}
	}
	return 0, false
}

// Uvarint reads what binary.AppendUvarint writes.
func (r *Reader) Uvarint() uint64 {
	if v, ok := r.small(); ok {
		return v
	}
	v, n := binary.Uvarint(r.raw[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

// Varint reads what binary.AppendVarint writes.
func (r *Reader) Varint() int64 {
	if u, ok := r.small(); ok {
		return int64(u>>1) ^ -int64(u&1)
	}
	v, n := binary.Varint(r.raw[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

// Size reads a uvarint that must fit an int32.
func (r *Reader) Size() int {
	v, ok := r.small()
	if !ok {
		if v = r.Uvarint(); v > math.MaxInt32 {
			r.fail()
			return 0
		}
	}
	return int(v)
}

// Count reads a number of items of at least min bytes each, which what is
// left must be able to hold.
func (r *Reader) Count(min int) int {
	n := r.Size()
	if n > r.Len()/min {
		r.fail()
		return 0
	}
	return n
}

// Take reads n bytes.
func (r *Reader) Take(n int) string {
	if n > r.Len() {
		r.fail()
		return ""
	}
	r.off += n
	return r.s[r.off-n : r.off]
}

// Str reads what AppendString writes.
func (r *Reader) Str() string {
	n, ok := r.small()
	if !ok {
		return r.Take(r.Size())
	}
	return r.Take(int(n))
}

// List reads what AppendList writes.
func (r *Reader) List() []string {
	n := r.Count(1) // every string takes a byte at least
	if n == 0 {
		return nil
	}
	l := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		l = append(l, r.Str())
	}
	return l
}

// Uint32 reads 4 bytes, little endian.
func (r *Reader) Uint32() uint32 {
	if r.Len() < 4 {
		r.fail()
		return 0
	}
	r.off += 4
	return binary.LittleEndian.Uint32(r.raw[r.off-4:])
}

// Uint64 reads 8 bytes, little endian.
func (r *Reader) Uint64() uint64 {
	if r.Len() < 8 {
		r.fail()
		return 0
	}
	r.off += 8
	return binary.LittleEndian.Uint64(r.raw[r.off-8:])
}

// Section reads what AppendSection writes, as a Reader of its own; a
// checksum that fails is a failure of the read.
func (r *Reader) Section() *Reader {
	sum := r.Uint32()
	n := r.Size()
	if r.err != nil || n > r.Len() || Checksum(r.raw[r.off:r.off+n]) != sum {
		r.fail()
		return &Reader{err: ErrShort}
	}
	sec := &Reader{raw: r.raw[r.off : r.off+n], s: r.s[r.off : r.off+n]}
	r.off += n
	return sec
}

// CompactAt is the number of changed records past which a cache kept as a
// base file and a delta file (the catalog, the index manifest's documents)
// folds its delta into a new base, for a base of n records. Each save
// rewrites the delta whole and each compaction the base: with one record
// changed per save, a delta folded at L records costs about L/2 records
// per save and the base's n every L saves, which is least, about 1.5·√n a
// save, when L is near √(2n). A fixed share of n (an eighth: 12,500
// records at 100,000) would make each save write a sixteenth of the base
// on average. The floor keeps a small tree's base from being rewritten at
// nearly every save.
func CompactAt(n int) int {
	return 64 + int(math.Sqrt(2*float64(max(n, 0))))
}
