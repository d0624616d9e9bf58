package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/arbormem/arbor/core/internal/binrec"
)

// The manifest (manifestName) is binary: decoding the JSON of format 1
// was most of an open under WebAssembly (1.3 MB at 10,000 documents,
// ~200 ms in wazero against ~22 ms natively).
//
// Layout: the magic line, the format version (uvarint), the schema
// fingerprint (a string), then two sections, each its CRC-32C (4 bytes,
// little endian), its length (uvarint) and its bytes. A string is its
// length (uvarint) and its bytes.
//
// The head, which a save reads back alone (readHead), holds the block size
// of the checksums (uvarint; another than blockSize is another format),
// bluge's snapshot epoch (uvarint) and bytes (a string); the segments (a count,
// then per segment its id, size and hash, uvarint, uvarint and 8 bytes
// little endian, the tag of a spilled segment (uvarint, 0 for none; see
// segmentEntry.name), and the CRC-32C of each of its blocks, 4 bytes each);
// the retired segment files (a count, then per file its name and when it
// was retired, in Unix milliseconds, a varint); and the number of
// documents.
//
// The documents section holds per document, sorted by path: the length of
// the prefix its path shares with the previous one (uvarint) and the rest
// (a string), its content hash and source key (strings) and its field
// lengths (numFields uvarints).

const manifestMagic = "arbor index\n"

// manifest is what manifestName holds.
type manifest struct {
	Epoch    uint64 // bluge's snapshot epoch; 0 when empty
	Snapshot []byte // bluge's snapshot bytes
	Segments []segmentEntry
	// Retired lists the segment files a save stopped naming, with when:
	// they stay for retireGrace, for processes still reading an older
	// manifest.
	Retired []retiredFile
	Docs    []docEntry // sorted by path
	nDocs   int        // from the head, when the documents are not decoded
	// docs is the documents section, for eachDoc, when decodeHeads left
	// it undecoded.
	docs *binrec.Reader
}

type retiredFile struct {
	Name  string
	Since int64 // Unix milliseconds
}

type docEntry struct {
	Path string
	Hash string
	// Key is the key of the Source the document was synced from; empty
	// after a Put: such documents are built and compared by Hash.
	Key  string
	Lens [numFields]int32
}

// encode returns the manifest's bytes.
func (m *manifest) encode() []byte { return m.encodeAs(formatVersion, schemaFingerprint()) }

// encodeAs returns the manifest's bytes as of format and schema.
func (m *manifest) encodeAs(format uint64, schema string) []byte {
	var head []byte
	head = binary.AppendUvarint(head, blockSize)
	head = binary.AppendUvarint(head, m.Epoch)
	head = binrec.AppendString(head, string(m.Snapshot))
	head = binary.AppendUvarint(head, uint64(len(m.Segments)))
	for _, s := range m.Segments {
		head = binary.AppendUvarint(head, s.ID)
		head = binary.AppendUvarint(head, uint64(s.Size))
		head = binary.LittleEndian.AppendUint64(head, s.Hash)
		head = binary.AppendUvarint(head, s.Spill)
		for _, c := range s.Blocks {
			head = binary.LittleEndian.AppendUint32(head, c)
		}
	}
	head = binary.AppendUvarint(head, uint64(len(m.Retired)))
	for _, r := range m.Retired {
		head = binrec.AppendString(head, r.Name)
		head = binary.AppendVarint(head, r.Since)
	}
	head = binary.AppendUvarint(head, uint64(len(m.Docs)))

	var docs []byte
	prev := ""
	for _, d := range m.Docs {
		n := commonPrefix(prev, d.Path)
		docs = binary.AppendUvarint(docs, uint64(n))
		docs = binrec.AppendString(docs, d.Path[n:])
		docs = binrec.AppendString(docs, d.Hash)
		docs = binrec.AppendString(docs, d.Key)
		for _, l := range d.Lens {
			docs = binary.AppendUvarint(docs, uint64(l))
		}
		prev = d.Path
	}

	out := make([]byte, 0, len(manifestMagic)+len(head)+len(docs)+128)
	out = append(out, manifestMagic...)
	out = binary.AppendUvarint(out, format)
	out = binrec.AppendString(out, schema)
	out = binrec.AppendSection(out, head)
	return binrec.AppendSection(out, docs)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// errOtherFormat is a manifest this code does not read: of another
// format, or written by other analysis code (schemaFingerprint).
var errOtherFormat = errors.New("written for another index format")

// errDamaged is a manifest that does not decode.
var errDamaged = errors.New("damaged (it ends early, its checksum fails, or it holds what this version does not write)")

// decodeManifest decodes a whole manifest.
func decodeManifest(b []byte) (*manifest, error) {
	m, err := decodeHeads(b)
	if err != nil {
		return nil, err
	}
	m.Docs = make([]docEntry, 0, m.nDocs)
	if err := m.eachDoc(func(d docEntry) { m.Docs = append(m.Docs, d) }); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeHeads decodes a manifest but for its documents, which eachDoc
// decodes: an open puts each in the index's table as it goes, where a
// slice of them all would be 80 MB at a million.
func decodeHeads(b []byte) (*manifest, error) {
	r, err := preamble(b)
	if err != nil {
		return nil, err
	}
	head, docs := r.Section(), r.Section()
	if r.Err() != nil || r.Len() != 0 {
		return nil, errDamaged
	}
	m, err := decodeHead(head)
	if err != nil {
		return nil, err
	}
	if docs.Err() != nil || m.nDocs > docs.Len()/(3+numFields) {
		return nil, errDamaged
	}
	m.docs = docs
	return m, nil
}

// preamble checks the magic line, format and schema, and returns a reader
// at the head section.
func preamble(b []byte) (*binrec.Reader, error) {
	if !bytes.HasPrefix(b, []byte(manifestMagic)) {
		return nil, errors.New("not an index manifest")
	}
	r := binrec.NewReader(b)
	r.Take(len(manifestMagic))
	format := r.Uvarint()
	schema := r.Str()
	if r.Err() != nil {
		return nil, errDamaged
	}
	if format != formatVersion || schema != schemaFingerprint() {
		return nil, fmt.Errorf("%w (%d/%s, this is %d/%s)", errOtherFormat, format, schema, formatVersion, schemaFingerprint())
	}
	return r, nil
}

// decodeHead decodes the head section.
func decodeHead(r *binrec.Reader) (*manifest, error) {
	if bs := r.Uvarint(); r.Err() == nil && bs != blockSize {
		return nil, fmt.Errorf("%w (checksums of %d-byte blocks, this reads %d)", errOtherFormat, bs, blockSize)
	}
	m := &manifest{Epoch: r.Uvarint(), Snapshot: []byte(r.Str())}
	n := r.Count(10)
	m.Segments = make([]segmentEntry, 0, n)
	for range n {
		s := segmentEntry{ID: r.Uvarint(), Size: r.Size(), Hash: r.Uint64(), Spill: r.Uvarint()}
		nb := blocksOf(s.Size)
		if r.Err() != nil || nb > r.Len()/4 {
			return nil, errDamaged
		}
		s.Blocks = make([]uint32, nb)
		for i := range s.Blocks {
			s.Blocks[i] = r.Uint32()
		}
		m.Segments = append(m.Segments, s)
	}
	n = r.Count(2)
	m.Retired = make([]retiredFile, 0, n)
	for range n {
		m.Retired = append(m.Retired, retiredFile{Name: r.Str(), Since: r.Varint()})
	}
	m.nDocs = r.Size()
	if r.Err() != nil || r.Len() != 0 {
		return nil, errDamaged
	}
	return m, nil
}

// eachDoc decodes the documents section decodeHeads left, calling each
// with every document in path order; it fails at the first damage it
// meets (each has then seen the documents before it), and when called
// twice.
func (m *manifest) eachDoc(each func(docEntry)) error {
	r := m.docs
	if r == nil {
		return errors.New("manifest: documents decoded twice")
	}
	m.docs = nil
	prev := ""
	for i := range m.nDocs {
		k := r.Size()
		if r.Err() != nil || k > len(prev) {
			return errDamaged
		}
		var d docEntry
		d.Path = prev[:k] + r.Str()
		d.Hash = r.Str()
		d.Key = r.Str()
		for f := range d.Lens {
			l := r.Uvarint()
			if l > math.MaxInt32 {
				return errDamaged
			}
			d.Lens[f] = int32(l)
		}
		if r.Err() != nil || (i > 0 && d.Path <= prev) {
			return errDamaged
		}
		prev = d.Path
		each(d)
	}
	if r.Len() != 0 {
		return errDamaged
	}
	return nil
}
