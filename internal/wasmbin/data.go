package wasmbin

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Segment is an active data segment of memory 0: Data is copied to Offset
// when the module is instantiated.
type Segment struct {
	Offset uint32
	Data   []byte
}

// DataSegments reads a data section. Only active segments of memory 0 with
// an i32.const offset are understood (all the Go linker writes).
func DataSegments(body []byte) ([]Segment, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	segs := make([]Segment, 0, n)
	for i := 0; i < n; i++ {
		kind, err := r.u32()
		if err != nil {
			return nil, err
		}
		if kind != 0 {
			return nil, fmt.Errorf("data segment %d: kind %d (only active segments of memory 0 are supported)", i, kind)
		}
		if op, err := r.byte(); err != nil || op != 0x41 {
			return nil, fmt.Errorf("data segment %d: the offset is not an i32.const", i)
		}
		off, err := r.i32()
		if err != nil {
			return nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		if end, err := r.byte(); err != nil || end != 0x0b {
			return nil, fmt.Errorf("data segment %d: the offset expression has more than an i32.const", i)
		}
		data, err := r.vec()
		if err != nil {
			return nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		segs = append(segs, Segment{Offset: uint32(off), Data: data})
	}
	if r.off != len(body) {
		return nil, errors.New("data section: bytes after the last segment")
	}
	return segs, nil
}

// EncodeData writes segments as the body of a data section.
func EncodeData(segs []Segment) []byte {
	out := binary.AppendUvarint(nil, uint64(len(segs)))
	for _, s := range segs {
		out = append(out, 0, 0x41) // active, memory 0; i32.const
		out = appendI32(out, int32(s.Offset))
		out = append(out, 0x0b) // end
		out = appendVec(out, s.Data)
	}
	return out
}

// MergeSegments joins segments that lie less than maxGap bytes apart into
// one, writing the zeros between them. Memory starts zeroed, so the module
// is the same provided no two segments overlap: then the order in which
// they are copied does not matter either, and they are merged in order of
// address (the Go linker writes its data sections one after the other, not
// in order of address). Overlapping segments are an error.
func MergeSegments(segs []Segment, maxGap int) ([]Segment, error) {
	sorted := slices.Clone(segs)
	slices.SortStableFunc(sorted, func(a, b Segment) int { return cmp.Compare(a.Offset, b.Offset) })
	var out []Segment
	for _, s := range sorted {
		if len(out) > 0 {
			last := &out[len(out)-1]
			end := uint64(last.Offset) + uint64(len(last.Data))
			if uint64(s.Offset) < end {
				return nil, fmt.Errorf("data segments overlap: one at %d runs to %d, another starts at %d", last.Offset, end, s.Offset)
			}
			if gap := uint64(s.Offset) - end; gap < uint64(maxGap) {
				last.Data = append(last.Data, make([]byte, gap)...)
				last.Data = append(last.Data, s.Data...)
				continue
			}
		}
		out = append(out, Segment{Offset: s.Offset, Data: slices.Clone(s.Data)})
	}
	return out, nil
}

// PackData rewrites a module's data section with MergeSegments, keeping
// every other section as it is (a data count section is updated). It
// returns the new module and the number of segments before and after.
func PackData(bin []byte, maxGap int) (out []byte, before, after int, err error) {
	sections, err := Sections(bin)
	if err != nil {
		return nil, 0, 0, err
	}
	for i, s := range sections {
		if s.ID != SectionData {
			continue
		}
		segs, err := DataSegments(s.Body)
		if err != nil {
			return nil, 0, 0, err
		}
		merged, err := MergeSegments(segs, maxGap)
		if err != nil {
			return nil, 0, 0, err
		}
		sections[i].Body = EncodeData(merged)
		before, after = len(segs), len(merged)
	}
	for i, s := range sections {
		if s.ID == SectionDataCount {
			sections[i].Body = binary.AppendUvarint(nil, uint64(after))
		}
	}
	return Encode(sections), before, after, nil
}
