package search

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/arbormem/arbor/core/internal/binrec"
)

// manifestSeed is a manifest over a documents file, with a delta of a
// changed and a removed document, and that file's section.
func manifestSeed() (head, delta, base []byte) {
	docs := []docEntry{
		{Path: "a/one.md", Hash: "h1", Key: "k1", Lens: [numFields]int32{1, 2, 3}},
		{Path: "a/two.md", Hash: "h2", Lens: [numFields]int32{4}},
		{Path: "b.md", Hash: "h3", Key: "k3"},
	}
	file := encodeDocs(docs)
	m := &manifest{Epoch: 3, Snapshot: []byte("snap"), Segments: []segmentEntry{{ID: 1, Size: 10, Hash: 7, Blocks: []uint32{9}}},
		Retired: []retiredFile{{Name: "old.seg", Since: 5}}, Base: docsFile{Name: docsName(file), Size: len(file)}, nDocs: 2,
		Docs: []docEntry{{Path: "a/two.md", Hash: "h4", Key: "k4"}, {Path: "b.md", Gone: true}}}
	r, err := preamble(m.encode())
	if err != nil {
		panic(err)
	}
	b := binrec.NewReader(file)
	b.Take(len(docsMagic))
	b.Uvarint()
	b.Str()
	return r.Section().Rest(), r.Section().Rest(), b.Section().Rest()
}

// The index's manifest and documents file are never trusted: whatever
// their sections hold under valid checksums, decoding them refuses them
// or gives documents in path order, without a panic.
func FuzzManifest(f *testing.F) {
	head, delta, base := manifestSeed()
	f.Add(head, delta, base)
	f.Add([]byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, head, delta, base []byte) {
		b := []byte(manifestMagic)
		b = binary.AppendUvarint(b, formatVersion)
		b = binrec.AppendString(b, schemaFP)
		b = binrec.AppendSection(binrec.AppendSection(b, head), delta)
		m, err := decodeHeads(b)
		if err != nil {
			return
		}
		if m.Base.Name != "" {
			file := []byte(docsMagic)
			file = binary.AppendUvarint(file, formatVersion)
			file = binrec.AppendString(file, schemaFP)
			file = binrec.AppendSection(file, base)
			r := binrec.NewReader(file)
			r.Take(len(docsMagic))
			r.Uvarint()
			r.Str()
			sec := r.Section()
			m.base, m.Base.n = sec, sec.Count(3+numFields)
			if sec.Err() != nil {
				return
			}
		}
		var paths []string
		if err := m.eachDoc(func(d docEntry) { paths = append(paths, d.Path) }); err != nil {
			return
		}
		if !slices.IsSorted(paths) || len(slices.Compact(slices.Clone(paths))) != len(paths) {
			t.Fatalf("documents out of order or twice: %q", paths)
		}
		if len(paths) != m.nDocs {
			t.Fatalf("%d documents, the manifest says %d", len(paths), m.nDocs)
		}
	})
}
