package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arbormem/arbor/internal/wasmbin"
)

func TestPackRewritesInPlaceKeepingMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.wasm")
	segs := []wasmbin.Segment{{Offset: 100, Data: []byte{1}}, {Offset: 16, Data: []byte{2, 3}}, {Offset: 9000, Data: []byte{4}}}
	bin := wasmbin.Encode([]wasmbin.Section{
		{ID: 5, Body: []byte{1, 0, 1}},
		{ID: wasmbin.SectionData, Body: wasmbin.EncodeData(segs)},
	})
	if err := os.WriteFile(path, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ { // packing a packed module changes nothing
		if err := pack(path, 4096); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o644 {
			t.Fatalf("run %d: mode %v, want 0644", run, info.Mode().Perm())
		}
		out, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sections, err := wasmbin.Sections(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := wasmbin.DataSegments(sections[1].Body)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Offset != 16 || len(got[0].Data) != 85 || got[1].Offset != 9000 {
			t.Fatalf("run %d: segments %v", run, got)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left beside the module: %v", entries)
	}
}

func TestPackLeavesABadModuleAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(path, []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pack(path, 4096); err == nil {
		t.Fatal("packed a file that is not a module")
	}
	if b, _ := os.ReadFile(path); string(b) != "not a module" {
		t.Fatalf("the file changed: %q", b)
	}
}
