package catalog

import (
	"encoding/binary"
	"math"
	"testing"
)

// The reader's varints are binary's, on every length and on the inputs
// binary refuses (truncated, over 64 bits).
func TestReaderVarintsAreBinarys(t *testing.T) {
	var inputs []string
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 21, 1<<35 + 7, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		b := binary.AppendUvarint(nil, v)
		inputs = append(inputs, string(b), string(b[:len(b)-1]))
	}
	for _, v := range []int64{0, -1, 1, -64, 64, math.MinInt64, math.MaxInt64} {
		inputs = append(inputs, string(binary.AppendVarint(nil, v)))
	}
	inputs = append(inputs, "", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x80\x80\x80")
	for _, in := range inputs {
		in += "\x80" // what follows a truncated varint is read as its rest
		want, n := binary.Uvarint([]byte(in))
		r := reader{b: in}
		got := r.uvarint()
		if ok := r.err == nil; ok != (n > 0) || ok && (got != want || r.b != in[n:]) {
			t.Errorf("uvarint(%q) = %d, %v, rest %q; binary: %d, %d", in, got, r.err, r.b, want, n)
		}
		wantS, n := binary.Varint([]byte(in))
		r = reader{b: in}
		if gotS := r.varint(); (r.err == nil) != (n > 0) || n > 0 && gotS != wantS {
			t.Errorf("varint(%q) = %d, %v; binary: %d, %d", in, gotS, r.err, wantS, n)
		}
	}
}
