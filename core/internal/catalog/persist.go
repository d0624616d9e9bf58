package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"hash/fnv"
	"maps"
	"slices"
	"sync"
	"unsafe"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/binrec"
	"github.com/arbormem/arbor/core/internal/tree"
)

// The persisted catalog (api.CatalogFile) lets an open read only the files
// that changed: per file of the tree it keeps the stamp (SourceKey), the
// size and modification time the file had when it was read, and what the
// catalog holds of it without reading it (an entry's card, a context
// file, a broken file's error). It is a cache of the tree and trusted only
// whole: a file of another format, written by other parsing code
// (catalogFingerprint), or whose checksum fails is rebuilt from the tree,
// never read in part.
//
// It is two files: the base (api.CatalogFile), every record, and the delta
// (api.CatalogDeltaFile), the records that changed since the base was
// written, so that a save writes what changed. A save rewrites the delta
// whole, atomically; past binrec.CompactAt records it writes a new base
// instead and removes the delta. The delta names the base it applies to by
// the base's id, a hash of the base's records (CRC-64): a delta naming
// another base (left by a crash between a base's write and the delta's
// removal, or written by a process that had loaded an older base) is never
// applied, and a reader that meets one reads both files again, then uses
// the base alone.
//
// Layout of the base: the magic line, then the format version (uvarint),
// the fingerprint (a string), the checksum of the body (binrec.Checksum, 4 bytes, little
// endian) and the body: the base's id (8 bytes, little endian: the CRC-64
// of its records, its last bit set, since 0 is no base), the number
// of records (uvarint) and the records, sorted by path. A string is its
// length (uvarint) and its bytes; a list is its length and its strings. A
// record is its kind (one byte), path, stamp, size (a varint; -1 when the
// catalog has no listing of the file, which the next open then reads),
// modification time, change time and inode (8 bytes each, little endian:
// a varint of a time in milliseconds takes six, and under WebAssembly its
// decoding was a tenth of an open's), then by kind: an entry's card as a
// string (its length first, so that a restore steps over it: cards are
// decoded at their first use) holding its title, links, lifecycle keys
// (key, value, key, value...), sources and the time it last changed by its
// front matter (a varint of Unix seconds, 0 for none) (kind 4 is an entry
// holding a merge conflict section, laid out as kind 1); a context file's
// title and body; a broken file's error.
//
// The delta is laid out as the base, with its own magic line; its body
// holds the id of its base and its records, sorted by path, each replacing
// the base's record of its path: a record of kind 0 is its path alone, a
// file the catalog no longer holds.

// catalogMagic begins the base, deltaMagic the delta.
const (
	catalogMagic = "arbor catalog\n"
	deltaMagic   = "arbor catalog delta\n"
)

// crcTable makes a base's id.
var crcTable = crc64.MakeTable(crc64.ECMA)

// catalogFormat changes whenever the layout above changes. Format 3 had no
// delta and no base id, format 4 no change time and inode, format 5 a
// CRC-32C for its checksum, format 6 its times and inode as varints and
// its cards without their length.
const catalogFormat = 7

// Record kinds.
const (
	kindGone          = 0 // in a delta only
	kindEntry         = 1
	kindContext       = 2
	kindBroken        = 3
	kindEntryConflict = 4
)

// racySlack is how recent a file's modification time may be, when the
// catalog lists it, for the catalog to trust its size and time in place of
// its bytes (Note): a file changed again within the same tick of a coarse
// clock (FAT keeps 2 s) would show the same time.
const racySlack = 2000 // milliseconds

// The fingerprints of the code that makes documents and cards, written out
// so that opening a tree parses nothing to tell whether its catalog and
// keys are its own: parsing and printing the probes was 4 ms of a
// WebAssembly process's start. TestFingerprints fails when parsing changes,
// and gives the new values; a process checks them once before it writes a
// catalog (checkFingerprints), so that a build that parses otherwise, in
// whatever runtime, never stores its records or keys under another's.
const (
	docFP     = "7be6f26eb0564e7a3cfd78cec1dba526"
	catalogFP = "6aed6f7f25e24c2a83d522e52f505b2b"
)

var fpCheck struct {
	sync.Once
	err error
}

// checkFingerprints reports a build that does not make docFP and
// catalogFP of the probes.
func checkFingerprints() error {
	fpCheck.Do(func() {
		doc := computeDocFingerprint()
		if cat := computeCatalogFingerprint(doc); doc != docFP || cat != catalogFP {
			fpCheck.err = fmt.Errorf("catalog: this build's parsing fingerprints as %s and %s, not %s and %s (docFP, catalogFP; TestFingerprints)", doc, cat, docFP, catalogFP)
		}
	})
	return fpCheck.err
}

// computeCatalogFingerprint identifies the code a persisted catalog's
// records come from: the layout, the documents made of files (doc, the
// fingerprint computeDocFingerprint gives) and the cards made of entries,
// of docProbes.
func computeCatalogFingerprint(doc string) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "catalog %d %s\n", catalogFormat, doc)
	for _, p := range docProbes {
		if en, err := tree.ParseEntry(p.path, []byte(p.text)); err == nil {
			// The fields as they were printed when a card was one struct
			// of them: the same code makes the same fingerprint.
			type card struct {
				title     string
				links     []string
				lifecycle []tree.KeyValue
				sources   []string
				changed   int64
				conflict  bool
			}
			cd := cardOf(en)
			fmt.Fprintf(h, "%#v\n", card{cd.title, cd.links(), cd.lifecycle(), cd.sources(), cd.changed, cd.conflict()})
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// persisted is what the persisted catalog holds, as this catalog last
// read or wrote it.
type persisted struct {
	id   uint64   // the base's id; 0 when none is known: the next save writes one
	n    int      // the records of the base
	base FileInfo // the base file's size and time when read or written
	// since holds the paths whose records may differ from the base's: in
	// the delta, or changed since (touch); nil when id is 0.
	since map[string]struct{}
}

// Save writes what changed since the catalog was persisted to
// api.CatalogDeltaFile, or every record to a new api.CatalogFile when the
// delta would pass binrec.CompactAt, when no base is known, or when the
// base is not the one this catalog read or wrote (another process wrote
// one since). Each file is written atomically (host.FS WriteFile). The
// caller holds the root's lock.
func (c *Catalog) Save(fsys host.FS) error {
	if err := checkFingerprints(); err != nil {
		return err
	}
	c.init()
	var err error
	if c.saved.id != 0 && len(c.saved.since) <= binrec.CompactAt(c.saved.n) && c.baseIntact(fsys) {
		err = c.saveDelta(fsys)
	} else {
		err = c.saveBase(fsys)
	}
	if err != nil {
		return err
	}
	c.dirty = false
	return nil
}

// baseIntact reports whether the base on disk is, by its size and time,
// the one this catalog read or wrote.
func (c *Catalog) baseIntact(fsys host.FS) bool {
	st, err := fsys.Stat(api.CatalogFile)
	return err == nil && InfoOf(st) == c.saved.base
}

// saveBase writes every record to a new base and removes the delta.
func (c *Catalog) saveBase(fsys host.FS) error {
	var recs []byte
	n := 0
	for _, p := range c.Stamped() {
		if rec, ok := c.record(p); ok {
			recs = append(recs, rec...)
			n++
		}
	}
	id := crc64.Checksum(recs, crcTable) | 1 // never 0, which is no base
	body := binary.LittleEndian.AppendUint64(nil, id)
	body = binary.AppendUvarint(body, uint64(n))
	body = append(body, recs...)
	if err := fsys.WriteFile(api.CatalogFile, appendFile(catalogMagic, body)); err != nil {
		return fmt.Errorf("write %s: %w", api.CatalogFile, err)
	}
	c.saved = persisted{}
	st, err := fsys.Stat(api.CatalogFile)
	if err != nil {
		return fmt.Errorf("stat %s: %w", api.CatalogFile, err)
	}
	c.saved = persisted{id: id, n: n, base: InfoOf(st), since: map[string]struct{}{}}
	// The delta names the base just replaced: it would be ignored, but
	// read at every open until the next save.
	if err := fsys.Remove(api.CatalogDeltaFile); err != nil && !errors.Is(err, host.ErrNotFound) {
		return fmt.Errorf("remove %s: %w", api.CatalogDeltaFile, err)
	}
	return nil
}

// saveDelta writes the records of the paths changed since the base.
func (c *Catalog) saveDelta(fsys host.FS) error {
	paths := slices.Sorted(maps.Keys(c.saved.since))
	body := binary.LittleEndian.AppendUint64(nil, c.saved.id)
	body = binary.AppendUvarint(body, uint64(len(paths)))
	for _, p := range paths {
		if r, _ := c.recs.Get(p); r.stamped {
			if rec, ok := c.record(p); ok {
				body = append(body, rec...)
				continue
			}
		}
		body = append(body, kindGone)
		body = binrec.AppendString(body, p)
	}
	if err := fsys.WriteFile(api.CatalogDeltaFile, appendFile(deltaMagic, body)); err != nil {
		return fmt.Errorf("write %s: %w", api.CatalogDeltaFile, err)
	}
	return nil
}

// appendFile returns a file of the catalog: its magic line, the format,
// the fingerprint, the checksum of body and body.
func appendFile(magic string, body []byte) []byte {
	out := make([]byte, 0, len(magic)+64+len(body))
	out = append(out, magic...)
	out = binary.AppendUvarint(out, catalogFormat)
	out = binrec.AppendString(out, catalogFP)
	out = binary.LittleEndian.AppendUint32(out, binrec.Checksum(body))
	return append(out, body...)
}

// record encodes what the catalog holds of the stamped file p.
func (c *Catalog) record(p string) ([]byte, bool) {
	var b []byte
	r, _ := c.recs.Get(p)
	head := func(kind byte) {
		b = append(b, kind)
		b = binrec.AppendString(b, p)
		b = binrec.AppendString(b, r.stamp)
		fi := r.seen
		if !r.noted {
			fi = FileInfo{Size: -1}
		}
		b = binary.AppendVarint(b, fi.Size)
		b = binary.LittleEndian.AppendUint64(b, uint64(fi.ModTime))
		b = binary.LittleEndian.AppendUint64(b, uint64(fi.Change))
		b = binary.LittleEndian.AppendUint64(b, fi.Ino)
	}
	if r.entry {
		cd := r.card
		if cd.conflict() {
			head(kindEntryConflict)
		} else {
			head(kindEntry)
		}
		if cd.pending() {
			// As restored: a new base written after a restore decodes no
			// card it did not need.
			return binrec.AppendString(b, cd.title), true
		}
		var enc []byte
		enc = binrec.AppendString(enc, cd.title)
		enc = binrec.AppendList(enc, cd.links())
		kv := make([]string, 0, 2*len(cd.lifecycle()))
		for _, x := range cd.lifecycle() {
			kv = append(kv, x.Key, x.Value)
		}
		enc = binrec.AppendList(enc, kv)
		enc = binrec.AppendList(enc, cd.sources())
		enc = binary.AppendVarint(enc, cd.changed)
		b = binary.AppendUvarint(b, uint64(len(enc)))
		return append(b, enc...), true
	}
	if ctx, ok := c.contexts[p]; ok {
		head(kindContext)
		b = binrec.AppendString(b, ctx.Title)
		b = binrec.AppendString(b, ctx.Body)
		return b, true
	}
	if err, ok := c.broken[p]; ok {
		head(kindBroken)
		b = binrec.AppendString(b, err.Error())
		return b, true
	}
	return nil, false
}

// FileError is Restore's error for a file of the catalog it cannot use.
type FileError struct {
	File string // api.CatalogFile or api.CatalogDeltaFile
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// ErrNoCatalog is Restore's error when the root has no persisted catalog.
var ErrNoCatalog = errors.New("no persisted catalog")

// Restore reads the catalog persisted in api.CatalogFile and
// api.CatalogDeltaFile. It returns ErrNoCatalog when there is none, and an
// error saying why when it cannot be used (either file damaged, of
// another format or parsing code): the caller then reads the tree.
// Entries come back as cards, read from fsys at their first Get (maxBytes
// bounds them as Load does). A file whose modification time is not older
// than the file its record was read from is read again all the same: it
// may have changed within the tick that file was written in.
func Restore(fsys host.FS, maxBytes int) (*Catalog, error) {
	var c *Catalog
	var err error
	// A delta of another base was read while another process replaced
	// the files, or was left by a crash: both are read again, and if the
	// delta still names another base, the base is used alone.
	for range 2 {
		var stale bool
		if c, stale, err = restore(fsys); err != nil || !stale {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	c.files = &fileSource{fs: fsys, maxBytes: maxBytes}
	return c, nil
}

// restore reads the base and the delta, laying the delta's records over
// the base's as it decodes them; stale reports a delta that names another
// base, left unapplied.
func restore(fsys host.FS) (c *Catalog, stale bool, err error) {
	data, err := fsys.ReadFile(api.CatalogFile)
	if errors.Is(err, host.ErrNotFound) {
		return nil, false, ErrNoCatalog
	}
	if err != nil {
		return nil, false, &FileError{api.CatalogFile, fmt.Errorf("read: %w", err)}
	}
	st, err := fsys.Stat(api.CatalogFile)
	if err != nil {
		return nil, false, &FileError{api.CatalogFile, fmt.Errorf("stat: %w", err)}
	}
	base, id, err := openBase(data, st.ModTime)
	if err != nil {
		return nil, false, &FileError{api.CatalogFile, err}
	}
	var delta recReader // none: no records
	data, err = fsys.ReadFile(api.CatalogDeltaFile)
	switch {
	case errors.Is(err, host.ErrNotFound):
	case err != nil:
		return nil, false, &FileError{api.CatalogDeltaFile, fmt.Errorf("read: %w", err)}
	default:
		dst, err := fsys.Stat(api.CatalogDeltaFile)
		if err != nil {
			return nil, false, &FileError{api.CatalogDeltaFile, fmt.Errorf("stat: %w", err)}
		}
		var of uint64
		if delta, of, err = openDelta(data, dst.ModTime); err != nil {
			return nil, false, &FileError{api.CatalogDeltaFile, err}
		}
		if of != id {
			delta, stale = recReader{}, true
		}
	}
	c, since, err := decodeCatalog(&base, &delta)
	if err != nil {
		if errors.Is(err, errInDelta) {
			return nil, false, &FileError{api.CatalogDeltaFile, err}
		}
		return nil, false, &FileError{api.CatalogFile, err}
	}
	c.saved = persisted{id: id, n: base.n, base: InfoOf(st), since: since}
	c.dirty = false
	return c, stale, nil
}

// errDamaged is a persisted catalog that does not decode.
var errDamaged = errors.New("damaged (the file ends early or holds what this version does not write)")

// readFile checks the magic line, format, fingerprint and checksum of a
// file of the catalog, and returns a reader at its body.
func readFile(data []byte, magic string) (*binrec.Reader, error) {
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, errors.New("not a catalog file")
	}
	r := binrec.NewReader(data)
	r.Take(len(magic))
	if v := r.Uvarint(); r.Err() != nil || v != catalogFormat {
		return nil, fmt.Errorf("format %d, this version reads %d", v, catalogFormat)
	}
	if fp := r.Str(); r.Err() != nil || fp != catalogFP {
		return nil, errors.New("written by another version of the parser")
	}
	sum := r.Uint32()
	if r.Err() != nil {
		return nil, errDamaged
	}
	if binrec.Checksum(r.Rest()) != sum {
		return nil, errors.New("checksum mismatch")
	}
	return r, nil
}

// openBase checks a persisted base written at the modification time
// written (Unix milliseconds), and returns a reader of its records and
// its id.
func openBase(data []byte, written int64) (recReader, uint64, error) {
	r, err := readFile(data, catalogMagic)
	if err != nil {
		return recReader{}, 0, err
	}
	id := r.Uint64()
	n := r.Count(1)
	if r.Err() != nil || id == 0 {
		return recReader{}, 0, errDamaged
	}
	return recReader{r: r, n: n, written: written}, id, nil
}

// openDelta checks a persisted delta written at the modification time
// written, and returns a reader of its records and the id of the base it
// applies to.
func openDelta(data []byte, written int64) (recReader, uint64, error) {
	r, err := readFile(data, deltaMagic)
	if err != nil {
		return recReader{}, 0, err
	}
	base := r.Uint64()
	n := r.Count(2)
	if r.Err() != nil {
		return recReader{}, 0, errDamaged
	}
	return recReader{r: r, n: n, written: written, delta: true}, base, nil
}

// errInDelta marks an error of decodeCatalog met in the delta.
var errInDelta = errors.New("in the delta")

// decodeCatalog decodes the records of base, each replaced by the record
// of its path in delta, if any: both are sorted by path, so the catalog's
// records are made in path order (pathtab.Table needs no map of them).
// It returns the paths of the delta's records.
func decodeCatalog(base, delta *recReader) (*Catalog, map[string]struct{}, error) {
	c := &Catalog{}
	c.initSized(base.n)
	since := make(map[string]struct{}, delta.n)
	// Decoded in place: a record is over a hundred bytes, and each copy of
	// one, under WebAssembly, was a call to memmove.
	var b, d stored
	bok, dok := base.next(&b), delta.next(&d)
	for bok || dok {
		if dok && (!bok || d.path <= b.path) {
			if bok && d.path == b.path {
				bok = base.next(&b)
			}
			since[d.path] = struct{}{}
			if d.kind != kindGone {
				c.add(&d)
			}
			dok = delta.next(&d)
			continue
		}
		c.add(&b)
		bok = base.next(&b)
	}
	if base.err != nil {
		return nil, nil, base.err
	}
	if delta.err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errInDelta, delta.err)
	}
	return c, since, nil
}

// recReader decodes the records of a file of the catalog one at a time.
type recReader struct {
	r       *binrec.Reader // nil: no records
	n, i    int
	written int64 // when the file was written (Unix milliseconds)
	delta   bool  // a delta's: a record may be of kindGone
	prev    string
	err     error
}

// stored is one record as decoded.
type stored struct {
	kind   byte
	path   string
	rc     rec
	ctx    *tree.Context // kindContext
	broken string        // kindBroken: the error
}

// next decodes the next record into s; false at the end or at the first
// damage (err).
func (rr *recReader) next(s *stored) bool {
	if rr.r == nil || rr.err != nil {
		return false
	}
	r := rr.r
	if rr.i == rr.n {
		if r.Err() != nil || r.Len() != 0 {
			rr.err = errDamaged
		}
		return false
	}
	if rr.err = rr.decode(s); rr.err != nil {
		return false
	}
	rr.prev = s.path
	rr.i++
	return true
}

// decode reads the next record into s; it must follow rr.prev.
func (rr *recReader) decode(s *stored) error {
	r := rr.r
	s.kind, s.path = r.Byte(), r.Str()
	s.ctx, s.broken = nil, ""
	// The paths are not checked against the path rules again: a record
	// holds a path a catalog stored, the file's checksum holds for every
	// byte, and every read or write of a path goes through the host's
	// own check, as the index's documents, also checksummed, do. The check
	// was 7 % of an open under WebAssembly.
	if r.Err() != nil || s.path == "" || (rr.i > 0 && s.path <= rr.prev) {
		return errDamaged
	}
	if s.kind == kindGone {
		if !rr.delta {
			return errDamaged
		}
		s.rc = rec{}
		return nil
	}
	rc := &s.rc
	rc.stamp = r.Str()
	fi := FileInfo{Size: r.Varint(), ModTime: int64(r.Uint64()), Change: int64(r.Uint64()), Ino: r.Uint64()}
	if r.Err() != nil {
		return errDamaged
	}
	rc.stamped, rc.entry, rc.noted, rc.seen, rc.card = true, false, false, FileInfo{}, card{}
	switch s.kind {
	case kindEntry, kindEntryConflict:
		rc.card.title, rc.entry = r.Str(), true
		rc.card.more = pendingCard
		if s.kind == kindEntryConflict {
			rc.card.more = pendingConflictCard
		}
	case kindContext:
		s.ctx = &tree.Context{Path: s.path, Title: r.Str(), Body: r.Str()}
	case kindBroken:
		s.broken = r.Str()
	default:
		return errDamaged
	}
	if r.Err() != nil {
		return errDamaged
	}
	if fi.Size >= 0 && fi.latest() < rr.written {
		rc.seen, rc.noted = fi, true
	}
	return nil
}

// decodeCard decodes the card of an entry's record (enc). The bytes are
// those this version wrote: the file's checksum holds for every one, and
// its format and fingerprint are this version's.
func decodeCard(enc string, conflict bool) card {
	r := binrec.NewReader(unsafe.Slice(unsafe.StringData(enc), len(enc)))
	title, links, kv := r.Str(), r.List(), r.List()
	var lc []tree.KeyValue
	for j := 0; j+1 < len(kv); j += 2 {
		lc = append(lc, tree.KeyValue{Key: kv[j], Value: kv[j+1]})
	}
	cd := newCard(title, links, lc, r.List(), conflict)
	cd.changed = r.Varint()
	return cd
}

// add puts a decoded record, of a path c holds nothing of, into c.
func (c *Catalog) add(s *stored) {
	switch {
	case s.rc.entry:
		c.nEntries++
		if s.rc.card.conflict() {
			c.nConflict++
		}
	case s.ctx != nil:
		c.contexts[s.path] = s.ctx
	default:
		c.broken[s.path] = errors.New(s.broken)
	}
	c.setRec(s.path, s.rc) // a new record, at the end of the table
	c.nStamped++
}
