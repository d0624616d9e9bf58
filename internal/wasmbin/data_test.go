package wasmbin

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// module builds a module with one page of memory, exported as "memory", a
// data section holding segs and, when withNames, a name section.
func module(segs []Segment, withNames bool) []byte {
	sections := []Section{
		{ID: 5, Body: []byte{1, 0, 1}},                                  // memory: one, min 1 page
		{ID: 7, Body: []byte{1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0}}, // export memory 0
		{ID: SectionDataCount, Body: []byte{byte(len(segs))}},
		{ID: SectionData, Body: EncodeData(segs)},
	}
	if withNames {
		sections = append(sections, Section{ID: SectionCustom, Name: "name", Body: []byte{0, 2, 1, 'm'}})
	}
	return Encode(sections)
}

// memoryOf instantiates bin in wazero and returns its memory's first page.
func memoryOf(t *testing.T, bin []byte) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	m, err := rt.Instantiate(ctx, bin)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	b, ok := m.Memory().Read(0, 65536)
	if !ok {
		t.Fatal("memory has less than a page")
	}
	return append([]byte(nil), b...)
}

func TestPackDataKeepsMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		var segs []Segment
		at := uint32(rng.IntN(64))
		for at < 60000 && len(segs) < 100 {
			data := make([]byte, 1+rng.IntN(200))
			for i := range data {
				data[i] = byte(1 + rng.IntN(255))
			}
			segs = append(segs, Segment{Offset: at, Data: data})
			at += uint32(len(data)) + uint32(rng.IntN(300)) // gaps of 0 to 299 bytes
		}
		// The Go linker writes its data sections one after the other, not
		// in order of address.
		rng.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
		bin := module(segs, true)
		for _, gap := range []int{1, 8, 64, 4096, 1 << 20} {
			packed, before, after, err := PackData(bin, gap)
			if err != nil {
				t.Fatalf("gap %d: %v", gap, err)
			}
			if before != len(segs) || after > before || (gap == 1<<20 && after != 1) {
				t.Fatalf("gap %d: %d segments became %d", gap, before, after)
			}
			if !bytes.Equal(memoryOf(t, packed), memoryOf(t, bin)) {
				t.Fatalf("gap %d, trial %d: memory after instantiation differs", gap, trial)
			}
			sections, err := Sections(packed)
			if err != nil {
				t.Fatal(err)
			}
			if sections[2].ID != SectionDataCount || int(sections[2].Body[0]) != after {
				t.Fatalf("gap %d: data count section says %v, want %d", gap, sections[2].Body, after)
			}
			if last := sections[len(sections)-1]; last.Name != "name" || !bytes.Equal(last.Body, []byte{0, 2, 1, 'm'}) {
				t.Fatalf("gap %d: name section changed: %+v", gap, last)
			}
		}
	}
}

func TestMergeSegments(t *testing.T) {
	segs := []Segment{{0, []byte{1, 2}}, {4, []byte{3}}, {100, []byte{4}}, {101, []byte{5}}}
	got, err := MergeSegments(segs, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{0, []byte{1, 2, 0, 0, 3}}, {100, []byte{4, 5}}}
	if len(got) != len(want) {
		t.Fatalf("got %d segments, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Offset != want[i].Offset || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("segment %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if segs[0].Data[0] != 1 || len(segs[0].Data) != 2 {
		t.Fatalf("the input segments were modified: %v", segs)
	}
	// Out of order of address, as the Go linker writes its data sections.
	got, err = MergeSegments([]Segment{{100, []byte{4}}, {0, []byte{1}}, {102, []byte{5}}}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Offset != 0 || got[1].Offset != 100 || !bytes.Equal(got[1].Data, []byte{4, 0, 5}) {
		t.Fatalf("segments out of order merged into %v", got)
	}
	for _, bad := range [][]Segment{
		{{0, []byte{1, 2, 3}}, {2, []byte{4}}},
		{{2, []byte{4}}, {0, []byte{1, 2, 3}}},
	} {
		if _, err := MergeSegments(bad, 8); err == nil || !strings.Contains(err.Error(), "overlap") {
			t.Errorf("%v: got %v, want an error", bad, err)
		}
	}
}

func TestSectionsRoundTrip(t *testing.T) {
	bin := module([]Segment{{8, []byte("hello")}, {1000, []byte{0xff}}}, true)
	sections, err := Sections(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Encode(sections), bin) {
		t.Fatal("Encode(Sections(bin)) != bin")
	}
	total := 8
	for _, s := range sections {
		total += s.Size()
	}
	if total != len(bin) {
		t.Fatalf("sizes add up to %d, module is %d bytes", total, len(bin))
	}
	if _, err := Sections([]byte("not wasm")); err == nil {
		t.Fatal("a non-module was read")
	}
	if _, err := Sections(bin[:len(bin)-1]); err == nil {
		t.Fatal("a truncated module was read")
	}
}

func TestDataSegmentsRejectsPassive(t *testing.T) {
	body := []byte{1, 1, 2, 'h', 'i'} // one passive segment
	if _, err := DataSegments(body); err == nil || !strings.Contains(err.Error(), "kind 1") {
		t.Fatalf("got %v, want an error about the passive segment", err)
	}
}

func TestNegativeOffsetsRoundTrip(t *testing.T) {
	// Offsets above 2 GiB are written as negative i32 constants.
	segs := []Segment{{0x80000010, []byte{7}}, {0xfffffff0, []byte{9}}}
	got, err := DataSegments(EncodeData(segs))
	if err != nil {
		t.Fatal(err)
	}
	for i := range segs {
		if got[i].Offset != segs[i].Offset || !bytes.Equal(got[i].Data, segs[i].Data) {
			t.Fatalf("segment %d: got %v, want %v", i, got[i], segs[i])
		}
	}
}
