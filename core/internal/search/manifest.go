package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
// little endian, and the CRC-32C of each of its blocks, 4 bytes each);
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
	head = appendString(head, string(m.Snapshot))
	head = binary.AppendUvarint(head, uint64(len(m.Segments)))
	for _, s := range m.Segments {
		head = binary.AppendUvarint(head, s.ID)
		head = binary.AppendUvarint(head, uint64(s.Size))
		head = binary.LittleEndian.AppendUint64(head, s.Hash)
		for _, c := range s.Blocks {
			head = binary.LittleEndian.AppendUint32(head, c)
		}
	}
	head = binary.AppendUvarint(head, uint64(len(m.Retired)))
	for _, r := range m.Retired {
		head = appendString(head, r.Name)
		head = binary.AppendVarint(head, r.Since)
	}
	head = binary.AppendUvarint(head, uint64(len(m.Docs)))

	var docs []byte
	prev := ""
	for _, d := range m.Docs {
		n := commonPrefix(prev, d.Path)
		docs = binary.AppendUvarint(docs, uint64(n))
		docs = appendString(docs, d.Path[n:])
		docs = appendString(docs, d.Hash)
		docs = appendString(docs, d.Key)
		for _, l := range d.Lens {
			docs = binary.AppendUvarint(docs, uint64(l))
		}
		prev = d.Path
	}

	out := make([]byte, 0, len(manifestMagic)+len(head)+len(docs)+128)
	out = append(out, manifestMagic...)
	out = binary.AppendUvarint(out, format)
	out = appendString(out, schema)
	out = appendSection(out, head)
	return appendSection(out, docs)
}

func appendSection(out, b []byte) []byte {
	out = binary.LittleEndian.AppendUint32(out, checksum(b))
	out = binary.AppendUvarint(out, uint64(len(b)))
	return append(out, b...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
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
	r, err := preamble(b)
	if err != nil {
		return nil, err
	}
	m, err := decodeHead(r.section())
	if err != nil {
		return nil, err
	}
	docs := r.section()
	if r.err != nil || len(r.b) != 0 {
		return nil, errDamaged
	}
	if m.Docs, err = decodeDocs(docs, m.nDocs); err != nil {
		return nil, err
	}
	return m, nil
}

// preamble checks the magic line, format and schema, and returns a reader
// at the head section.
func preamble(b []byte) (*reader, error) {
	if !bytes.HasPrefix(b, []byte(manifestMagic)) {
		return nil, errors.New("not an index manifest")
	}
	r := &reader{b: b[len(manifestMagic):]}
	format := r.uvarint()
	schema := r.string()
	if r.err != nil {
		return nil, errDamaged
	}
	if format != formatVersion || schema != schemaFingerprint() {
		return nil, fmt.Errorf("%w (%d/%s, this is %d/%s)", errOtherFormat, format, schema, formatVersion, schemaFingerprint())
	}
	return r, nil
}

// decodeHead decodes the head section (nil when the section was not
// read whole or its checksum failed).
func decodeHead(head []byte) (*manifest, error) {
	if head == nil {
		return nil, errDamaged
	}
	r := &reader{b: head}
	if bs := r.uvarint(); r.err == nil && bs != blockSize {
		return nil, fmt.Errorf("%w (checksums of %d-byte blocks, this reads %d)", errOtherFormat, bs, blockSize)
	}
	m := &manifest{Epoch: r.uvarint(), Snapshot: []byte(r.string())}
	n := r.count(10)
	m.Segments = make([]segmentEntry, 0, n)
	for range n {
		s := segmentEntry{ID: r.uvarint(), Size: r.size(), Hash: r.uint64()}
		nb := blocksOf(s.Size)
		if r.err != nil || nb > len(r.b)/4 {
			return nil, errDamaged
		}
		s.Blocks = make([]uint32, nb)
		for i := range s.Blocks {
			s.Blocks[i] = r.uint32()
		}
		m.Segments = append(m.Segments, s)
	}
	n = r.count(2)
	m.Retired = make([]retiredFile, 0, n)
	for range n {
		m.Retired = append(m.Retired, retiredFile{Name: r.string(), Since: r.varint()})
	}
	m.nDocs = r.size()
	if r.err != nil || len(r.b) != 0 {
		return nil, errDamaged
	}
	return m, nil
}

// decodeDocs decodes the documents section, which holds n documents.
func decodeDocs(b []byte, n int) ([]docEntry, error) {
	if b == nil || n > len(b)/(3+numFields) {
		return nil, errDamaged
	}
	r := &reader{b: b}
	docs := make([]docEntry, n)
	prev := ""
	for i := range docs {
		k := r.size()
		if r.err != nil || k > len(prev) {
			return nil, errDamaged
		}
		d := &docs[i]
		d.Path = prev[:k] + r.string()
		d.Hash = r.string()
		d.Key = r.string()
		for f := range d.Lens {
			l := r.uvarint()
			if l > math.MaxInt32 {
				return nil, errDamaged
			}
			d.Lens[f] = int32(l)
		}
		if r.err != nil || (i > 0 && d.Path <= prev) {
			return nil, errDamaged
		}
		prev = d.Path
	}
	if len(r.b) != 0 {
		return nil, errDamaged
	}
	return docs, nil
}

// reader decodes the manifest; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errDamaged
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// size is a uvarint that must fit an int.
func (r *reader) size() int {
	v := r.uvarint()
	if v > math.MaxInt32 {
		r.fail()
		return 0
	}
	return int(v)
}

// count is a number of items of at least min bytes each that must fit
// what is left.
func (r *reader) count(min int) int {
	n := r.size()
	if n > len(r.b)/min {
		r.fail()
		return 0
	}
	return n
}

func (r *reader) take(n int) []byte {
	if n > len(r.b) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) string() string { return string(r.take(r.size())) }

func (r *reader) uint32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) uint64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// section returns the next section's bytes, nil when its checksum fails
// or it ends early.
func (r *reader) section() []byte {
	sum := r.uint32()
	b := r.take(r.size())
	if r.err != nil || checksum(b) != sum {
		r.fail()
		return nil
	}
	return b
}
