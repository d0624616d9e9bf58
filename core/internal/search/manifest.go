package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"path"
	"unsafe"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/binrec"
)

// The manifest (manifestName) is binary: decoding the JSON of format 1
// was most of an open under WebAssembly (1.3 MB at 10,000 documents,
// ~200 ms in wazero against ~22 ms natively).
//
// Layout: the magic line, the format version (uvarint), the schema
// fingerprint (a string), then two sections, each its checksum (4 bytes,
// little endian), its length (uvarint) and its bytes. A string is its
// length (uvarint) and its bytes.
//
// The head, which a save reads back alone (readHead), holds the block size
// of the checksums (uvarint; another than blockSize is another format),
// bluge's snapshot epoch (uvarint) and bytes (a string); the segments (a count,
// then per segment its id, size and hash, uvarint, uvarint and 8 bytes
// little endian, the tag of a spilled segment (uvarint, 0 for none; see
// segmentEntry.name), and the checksum of each of its blocks, 4 bytes each);
// the retired files (a count, then per file its name and when it was
// retired, in Unix milliseconds, a varint); the documents file (its name,
// "" for none, and its size, uvarint; see below); and the number of
// documents.
//
// The documents of the index are a base and a delta, so that a save writes
// what changed since the base rather than a record per document of the
// tree (4.9 MB at 100,000): the base is a documents file, named by a hash
// of its bytes like a segment and, like one, never rewritten, retired when
// no manifest names it (Retired); the manifest's documents section is the
// delta, the documents added, changed or removed since. A save past
// binrec.CompactAt of the base's documents writes a new base holding them
// all, and an empty delta. The manifest names its base: the pair is read
// whole or not at all, whatever other processes write meanwhile.
//
// The documents section holds the number of its records (uvarint) and the
// records, sorted by path: the length of the prefix the path shares with
// the previous one (uvarint) and the rest (a string), a byte (0: the
// document was removed, and the record ends; 1: it is live), its content
// hash and source key (strings) and its field lengths (numFields uvarints).
// A documents file (docsMagic) is the magic line, format and schema of the
// manifest, then one section: the number of documents and, sorted by
// path, each laid out as a live record without its byte.

const (
	manifestMagic = "arbor index\n"
	docsMagic     = "arbor index documents\n"
	docsSuffix    = ".docs" // ends the names of documents files
)

// manifest is what manifestName holds.
type manifest struct {
	Epoch    uint64 // bluge's snapshot epoch; 0 when empty
	Snapshot []byte // bluge's snapshot bytes
	Segments []segmentEntry
	// Retired lists the segment and documents files a save stopped
	// naming, with when: they stay for retireGrace, for processes still
	// reading an older manifest.
	Retired []retiredFile
	// Base is the documents file the documents section changes; none when
	// its name is "": the section holds every document.
	Base docsFile
	// Docs is, sorted by path, the documents section: what changed since
	// Base. A manifest readManifest returns has no Base, and every document
	// in Docs.
	Docs  []docEntry
	nDocs int // the live documents, base and delta together
	// docs is the documents section, for eachDoc, when decodeHeads left
	// it undecoded, and base the documents of Base, once readBase read
	// them.
	docs, base *binrec.Reader
	// changed is the paths of the documents section, which eachDoc
	// collects: those a save writes again until the next base.
	changed map[string]struct{}
	// summary describes the live documents (docs.go), when the store's
	// summary file describes this manifest.
	summary *docSummary
}

// docsFile names a documents file, and the number of documents it holds
// once read.
type docsFile struct {
	Name string
	Size int
	n    int
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
	Gone bool // in a delta: the document was removed
}

// encode returns the manifest's bytes.
func (m *manifest) encode() []byte { return m.encodeAs(formatVersion, schemaFP) }

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
	head = binrec.AppendString(head, m.Base.Name)
	head = binary.AppendUvarint(head, uint64(m.Base.Size))
	n := m.nDocs
	if m.Base.Name == "" {
		n = 0
		for _, d := range m.Docs {
			if !d.Gone {
				n++
			}
		}
	}
	head = binary.AppendUvarint(head, uint64(n))

	out := make([]byte, 0, len(manifestMagic)+len(head)+64*len(m.Docs)+128)
	out = append(out, manifestMagic...)
	out = binary.AppendUvarint(out, format)
	out = binrec.AppendString(out, schema)
	out = binrec.AppendSection(out, head)
	return binrec.AppendSection(out, appendDocs(nil, m.Docs, true))
}

// appendDocs appends the count of docs, sorted by path, and their records;
// a delta's (flagged) tell the removed from the live.
func appendDocs(b []byte, docs []docEntry, flagged bool) []byte {
	b = binary.AppendUvarint(b, uint64(len(docs)))
	prev := ""
	for _, d := range docs {
		n := commonPrefix(prev, d.Path)
		b = binary.AppendUvarint(b, uint64(n))
		b = binrec.AppendString(b, d.Path[n:])
		prev = d.Path
		if flagged {
			if d.Gone {
				b = append(b, 0)
				continue
			}
			b = append(b, 1)
		}
		b = binrec.AppendString(b, d.Hash)
		b = binrec.AppendString(b, d.Key)
		for _, l := range d.Lens {
			b = binary.AppendUvarint(b, uint64(l))
		}
	}
	return b
}

// encodeDocs returns the bytes of a documents file holding docs, sorted
// by path.
func encodeDocs(docs []docEntry) []byte {
	return appendFile(docsMagic, appendDocs(nil, docs, false))
}

// appendFile returns a file of one section (a documents file, the
// summary): the magic line, this format's version and schema
// fingerprint, then sec, checksummed.
func appendFile(magic string, sec []byte) []byte {
	out := []byte(magic)
	out = binary.AppendUvarint(out, formatVersion)
	out = binrec.AppendString(out, schemaFP)
	return binrec.AppendSection(out, sec)
}

// fileSection returns the section of b, a file appendFile wrote with
// magic; nil when b is not one, is of another format or schema, or is
// damaged.
func fileSection(b []byte, magic string) *binrec.Reader {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil
	}
	r := binrec.NewReader(b)
	r.Take(len(magic))
	if format, schema := r.Uvarint(), r.Str(); r.Err() != nil || format != formatVersion || schema != schemaFP {
		return nil
	}
	sec := r.Section()
	if r.Err() != nil || r.Len() != 0 {
		return nil
	}
	return sec
}

// docsName is the name of the documents file of these bytes.
func docsName(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%016x%s", h.Sum64(), docsSuffix)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// errOtherFormat is a manifest this code does not read: of another
// format, or written by other analysis code (schemaFP).
var errOtherFormat = errors.New("written for another index format")

// errDamaged is a manifest that does not decode.
var errDamaged = errors.New("damaged (it ends early, its checksum fails, or it holds what this version does not write)")

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
	if docs.Err() != nil || (m.Base.Name == "" && m.nDocs > docs.Len()/(3+numFields)) {
		return nil, errDamaged
	}
	m.docs = docs
	return m, nil
}

// readBase reads the documents file m names from dir of fsys; the
// documents stay undecoded for eachDoc. It fails when the file is missing
// or not the one named (its size, its checksum). Its name is not hashed
// again: a name is the hash of the bytes written under it (docsName), so
// a file of that name holds other bytes only when damaged, which the
// section's checksum finds; the hash, byte by byte, was 2 % of an open
// under WebAssembly.
func (m *manifest) readBase(fsys host.FS, dir string) error {
	if m.Base.Name == "" {
		return nil
	}
	p := path.Join(dir, m.Base.Name)
	b, err := fsys.ReadFile(p)
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	if len(b) != m.Base.Size {
		return fmt.Errorf("%s: %w", p, errDamaged)
	}
	sec := fileSection(b, docsMagic)
	if sec == nil {
		return fmt.Errorf("%s: %w", p, errDamaged)
	}
	n := sec.Count(3 + numFields)
	if sec.Err() != nil {
		return fmt.Errorf("%s: %w", p, errDamaged)
	}
	m.base, m.Base.n = sec, n
	return nil
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
	if format != formatVersion || schema != schemaFP {
		return nil, fmt.Errorf("%w (%d/%s, this is %d/%s)", errOtherFormat, format, schema, formatVersion, schemaFP)
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
	m.Base = docsFile{Name: r.Str(), Size: r.Size()}
	m.nDocs = r.Size()
	if r.Err() != nil || r.Len() != 0 {
		return nil, errDamaged
	}
	return m, nil
}

// eachDoc decodes the documents decodeHeads and readBase left, calling
// each with every live document in path order: the base's, as the
// documents section changes them. It fails at the first damage it meets
// (each has then seen the documents before it), and when called twice.
func (m *manifest) eachDoc(each func(docEntry)) error {
	if m.docs == nil || (m.Base.Name != "" && m.base == nil) {
		return errors.New("manifest: documents decoded twice, or their base not read")
	}
	delta := docReader{r: m.docs, flagged: true}
	delta.n = delta.r.Count(1)
	base := docReader{r: m.base, n: m.Base.n}
	m.docs, m.base = nil, nil
	m.changed = make(map[string]struct{}, delta.n)
	b, bok := base.next()
	d, dok := delta.next()
	live := 0
	for bok || dok {
		if dok && (!bok || d.Path <= b.Path) {
			if bok && d.Path == b.Path {
				b, bok = base.next()
			}
			m.changed[d.Path] = struct{}{}
			if !d.Gone {
				each(d)
				live++
			}
			d, dok = delta.next()
			continue
		}
		each(b)
		live++
		b, bok = base.next()
	}
	if base.err != nil || delta.err != nil || live != m.nDocs {
		return errDamaged
	}
	return nil
}

// docReader decodes the records of a documents section one at a time.
type docReader struct {
	r       *binrec.Reader // nil: no records
	n, i    int
	flagged bool // a delta's: each record tells a removal from a live document
	prev    string
	err     error
	// paths holds the bytes of the paths decoded, a chunk at a time
	// (pathChunk): a path is stored as the part it shares with the
	// previous one and its rest, and a string made of the two per
	// document was an allocation each. A chunk's bytes never change once
	// a path holds them; a chunk lives as long as one of its paths.
	paths []byte
}

// pathChunk is the size of docReader.paths' chunks: about a hundred paths.
const pathChunk = 4 << 10

// join returns prefix + rest, in the current chunk of dr.paths.
func (dr *docReader) join(prefix, rest string) string {
	n := len(prefix) + len(rest)
	if n == 0 {
		return ""
	}
	if cap(dr.paths)-len(dr.paths) < n {
		dr.paths = make([]byte, 0, max(n, pathChunk))
	}
	i := len(dr.paths)
	dr.paths = append(append(dr.paths, prefix...), rest...)
	return unsafe.String(&dr.paths[i], n)
}

// next returns the next record; ok is false at the end or at the first
// damage (err).
func (dr *docReader) next() (d docEntry, ok bool) {
	if dr.r == nil || dr.err != nil {
		return d, false
	}
	r := dr.r
	if dr.i == dr.n {
		if r.Err() != nil || r.Len() != 0 {
			dr.err = errDamaged
		}
		return d, false
	}
	k := r.Size()
	if r.Err() != nil || k > len(dr.prev) {
		dr.err = errDamaged
		return d, false
	}
	d.Path = dr.join(dr.prev[:k], r.Str())
	if dr.flagged {
		switch r.Byte() {
		case 0:
			d.Gone = true
		case 1:
		default:
			dr.err = errDamaged
			return d, false
		}
	}
	if !d.Gone {
		d.Hash = r.Str()
		d.Key = r.Str()
		for f := range d.Lens {
			l := r.Uvarint()
			if l > math.MaxInt32 {
				dr.err = errDamaged
				return d, false
			}
			d.Lens[f] = int32(l)
		}
	}
	if r.Err() != nil || (dr.i > 0 && d.Path <= dr.prev) {
		dr.err = errDamaged
		return d, false
	}
	dr.prev = d.Path
	dr.i++
	return d, true
}
