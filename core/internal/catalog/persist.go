package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

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
// Layout: the magic line, then the format version (uvarint), the
// fingerprint (a string), the CRC-32C of the body (4 bytes, little endian)
// and the body: the number of records (uvarint) and the records, sorted by
// path. A string is its length (uvarint) and its bytes; a list is its
// length and its strings. A record is its kind (one byte), path, stamp,
// size and modification time (varints; a size of -1 when the catalog has
// no listing of the file, which the next open then reads), then by kind:
// an entry's title, links, lifecycle keys (key, value, key, value...),
// sources and the time it last changed by its front matter (a varint of
// Unix seconds, 0 for none) (kind 4 is an entry holding a merge conflict
// section, laid out as kind 1); a context file's title and body; a broken
// file's error.

// catalogMagic begins the file.
const catalogMagic = "arbor catalog\n"

// catalogFormat changes whenever the layout above changes.
const catalogFormat = 3

// Record kinds.
const (
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

var catalogFP struct {
	sync.Once
	fp string
}

// catalogFingerprint identifies the code a persisted catalog's records
// come from: the layout, the documents made of files (docFingerprint) and
// the cards made of entries, of docProbes.
func catalogFingerprint() string {
	catalogFP.Do(func() {
		h := fnv.New128a()
		fmt.Fprintf(h, "catalog %d %s\n", catalogFormat, docFingerprint())
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
		catalogFP.fp = fmt.Sprintf("%x", h.Sum(nil))
	})
	return catalogFP.fp
}

// Save writes the catalog to api.CatalogFile, atomically (host.FS
// WriteFile). The caller holds the root's lock.
func (c *Catalog) Save(fsys host.FS) error {
	c.init()
	var recs []byte
	n := 0
	for _, p := range c.Stamped() {
		if rec, ok := c.record(p); ok {
			recs = append(recs, rec...)
			n++
		}
	}
	body := append(binary.AppendUvarint(nil, uint64(n)), recs...)
	out := []byte(catalogMagic)
	out = binary.AppendUvarint(out, catalogFormat)
	out = binrec.AppendString(out, catalogFingerprint())
	out = binary.LittleEndian.AppendUint32(out, binrec.Checksum(body))
	out = append(out, body...)
	if err := fsys.WriteFile(api.CatalogFile, out); err != nil {
		return fmt.Errorf("write %s: %w", api.CatalogFile, err)
	}
	c.dirty = false
	return nil
}

// record encodes what the catalog holds of the stamped file p.
func (c *Catalog) record(p string) ([]byte, bool) {
	var b []byte
	head := func(kind byte) {
		b = append(b, kind)
		b = binrec.AppendString(b, p)
		r := c.recs[p]
		b = binrec.AppendString(b, r.stamp)
		fi := r.seen
		if !r.noted {
			fi = FileInfo{Size: -1}
		}
		b = binary.AppendVarint(b, fi.Size)
		b = binary.AppendVarint(b, fi.ModTime)
	}
	if cd, ok := c.card(p); ok {
		if cd.conflict() {
			head(kindEntryConflict)
		} else {
			head(kindEntry)
		}
		b = binrec.AppendString(b, cd.title)
		b = binrec.AppendList(b, cd.links())
		kv := make([]string, 0, 2*len(cd.lifecycle()))
		for _, x := range cd.lifecycle() {
			kv = append(kv, x.Key, x.Value)
		}
		b = binrec.AppendList(b, kv)
		b = binrec.AppendList(b, cd.sources())
		b = binary.AppendVarint(b, cd.changed)
		return b, true
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

// ErrNoCatalog is Restore's error when the root has no persisted catalog.
var ErrNoCatalog = errors.New("no persisted catalog")

// Restore reads the catalog persisted in api.CatalogFile. It returns
// ErrNoCatalog when there is none, and an error saying why when it cannot
// be used (damaged, of another format or parsing code): the caller then
// reads the tree. Entries come back as cards, read from fsys at their
// first Get (maxBytes bounds them as Load does). A file whose modification
// time is not older than the catalog's own is read again all the same:
// it may have changed within the tick the catalog was written in.
func Restore(fsys host.FS, maxBytes int) (*Catalog, error) {
	data, err := fsys.ReadFile(api.CatalogFile)
	if errors.Is(err, host.ErrNotFound) {
		return nil, ErrNoCatalog
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", api.CatalogFile, err)
	}
	st, err := fsys.Stat(api.CatalogFile)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", api.CatalogFile, err)
	}
	c, err := decodeCatalog(data, st.ModTime)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", api.CatalogFile, err)
	}
	c.files = &fileSource{fs: fsys, maxBytes: maxBytes}
	return c, nil
}

// errDamaged is a persisted catalog that does not decode.
var errDamaged = errors.New("damaged (the file ends early or holds what this version does not write)")

// decodeCatalog decodes a persisted catalog written at the modification
// time written (Unix milliseconds).
func decodeCatalog(data []byte, written int64) (*Catalog, error) {
	if !bytes.HasPrefix(data, []byte(catalogMagic)) {
		return nil, errors.New("not a catalog file")
	}
	r := binrec.NewReader(data)
	r.Take(len(catalogMagic))
	if v := r.Uvarint(); r.Err() != nil || v != catalogFormat {
		return nil, fmt.Errorf("format %d, this version reads %d", v, catalogFormat)
	}
	if fp := r.Str(); r.Err() != nil || fp != catalogFingerprint() {
		return nil, errors.New("written by another version of the parser")
	}
	sum := r.Uint32()
	if r.Err() != nil {
		return nil, errDamaged
	}
	if binrec.Checksum(r.Rest()) != sum {
		return nil, errors.New("checksum mismatch")
	}
	n := r.Count(1)
	if r.Err() != nil {
		return nil, errDamaged
	}
	c := &Catalog{}
	c.initSized(n)
	prev := ""
	for i := 0; i < n && r.Err() == nil; i++ {
		kind := r.Byte()
		p := r.Str()
		stamp := r.Str()
		fi := FileInfo{Size: r.Varint(), ModTime: r.Varint()}
		if r.Err() != nil {
			break
		}
		if i > 0 && p <= prev {
			return nil, errDamaged
		}
		prev = p
		if _, err := api.CleanPath(p); err != nil {
			return nil, fmt.Errorf("%w: %v", errDamaged, err)
		}
		rc := rec{stamp: stamp, stamped: true}
		switch kind {
		case kindEntry, kindEntryConflict:
			title, links, kv := r.Str(), r.List(), r.List()
			if len(kv)%2 != 0 {
				return nil, errDamaged
			}
			var lc []tree.KeyValue
			for j := 0; j < len(kv); j += 2 {
				lc = append(lc, tree.KeyValue{Key: kv[j], Value: kv[j+1]})
			}
			rc.card, rc.entry = newCard(title, links, lc, r.List(), kind == kindEntryConflict), true
			rc.card.changed = r.Varint()
			c.nEntries++
			if rc.card.conflict() {
				c.nConflict++
			}
		case kindContext:
			c.PutContext(&tree.Context{Path: p, Title: r.Str(), Body: r.Str()})
		case kindBroken:
			c.MarkBroken(p, errors.New(r.Str()))
		default:
			return nil, errDamaged
		}
		if fi.Size >= 0 && fi.ModTime < written {
			rc.seen, rc.noted = fi, true
		}
		c.recs[p] = rc // paths are unique and sorted: nothing to replace
		c.nStamped++
	}
	if r.Err() != nil || r.Len() != 0 {
		return nil, errDamaged
	}
	return c, nil
}
