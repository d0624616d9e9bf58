package search

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/arbormem/arbor/core/host"
	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"
)

// Persistence. A stored index is a folder of the host file system holding
// bluge segments (<id>.seg, immutable once written) and manifest.json, which
// names the segments in use with their sizes and checksums, holds bluge's
// snapshot (which segments, which of their documents are deleted) and, per
// document, a content hash, the key of its source (Source) and the field
// lengths BM25 needs (score.go). It is written segments first, manifest
// last, each file atomically through host.FS.WriteFile, and unused segments
// are removed only after that: a crash at any point leaves the old or the
// new manifest, each with all its segments. The tree stays the source of
// truth: Sync builds only the documents whose source key changed and
// re-analyzes only those whose hash changed, and a stored index that
// cannot be used (missing, bad manifest, missing or damaged segment, other
// format) is replaced by a rebuild from the tree, never an error.

// Store is where an index persists itself: a folder of a host file system.
type Store struct {
	FS     host.FS
	Dir    string      // folder below the root, e.g. ".arbor/index"
	Logger host.Logger // gets a warn line when a stored index is unusable; nil discards
	// ReadOnly loads the stored index but never writes it: Flush and Close
	// keep the changes in memory (a read-only grant, docs/sandbox.md).
	ReadOnly bool
}

// formatVersion changes whenever the stored bytes would mean something
// else to this code (the manifest's layout, the norms of score.go). Changes
// to document fields or analysis are caught by schemaFingerprint.
const formatVersion = 1

const manifestName = "manifest.json"

// manifest is manifest.json.
type manifest struct {
	Format   int            `json:"format"`
	Schema   string         `json:"schema"`   // schemaFingerprint() when written
	Epoch    uint64         `json:"epoch"`    // bluge's snapshot epoch; 0 when empty
	Snapshot []byte         `json:"snapshot"` // bluge's snapshot bytes
	SnapCRC  uint32         `json:"snapshotCrc"`
	Segments []segmentEntry `json:"segments"`
	Docs     []docEntry     `json:"docs"` // sorted by path
}

type segmentEntry struct {
	ID   uint64 `json:"id"`
	Size int    `json:"size"`
	CRC  uint32 `json:"crc"` // CRC-32C of the file
}

type docEntry struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
	// Key is the key of the Source the document was synced from; absent
	// after a Put, and in manifests written before keys were stored, which
	// are read alike: such documents are built and compared by Hash.
	Key  string           `json:"key,omitempty"`
	Lens [numFields]int32 `json:"lens"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func segmentName(id uint64) string { return fmt.Sprintf("%012x.seg", id) }

// storeState is an open index's link to its Store.
type storeState struct {
	Store
	dir     *memDirectory           // the live index's bluge directory
	written map[uint64]segmentEntry // segments the current manifest names
}

func (s *storeState) warn(msg string) {
	if s.Logger != nil {
		s.Logger.Log("warn", msg)
	}
}

// Open returns the index stored in st, or an empty one when st holds none
// or one that cannot be used (a warn line says why; the next Flush or
// Close replaces it). The index persists itself into st on Flush and
// Close. Follow Open with Sync to bring it in step with the tree.
func Open(opts Options, st Store) (*Index, error) {
	if st.FS == nil {
		return nil, errors.New("search: open: store has no file system")
	}
	s := &storeState{Store: st, written: map[uint64]segmentEntry{}}
	m, dir, err := s.load()
	if err == nil && m != nil {
		var x *Index
		if x, err = openLoaded(opts, dir, m); err == nil {
			s.dir = dir
			x.store = s
			for _, seg := range m.Segments {
				s.written[seg.ID] = seg
			}
			return x, nil
		}
	}
	if err != nil {
		s.warn(fmt.Sprintf("search index %s: %v; rebuilding it from the tree", st.Dir, err))
	}
	s.dir = newMemDirectory()
	x, err2 := open(opts, s.dir.self)
	if err2 != nil {
		return nil, err2
	}
	x.store = s
	// A stored index that could not be used is replaced at the next flush
	// even when the tree turns out to be empty.
	x.dirty = err != nil
	return x, nil
}

// load reads and checks the manifest and its segments; (nil, nil, nil) when
// there is no manifest.
func (s *storeState) load() (*manifest, *memDirectory, error) {
	mp := path.Join(s.Dir, manifestName)
	raw, err := s.FS.ReadFile(mp)
	if errors.Is(err, host.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", mp, err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", mp, err)
	}
	if m.Format != formatVersion || m.Schema != schemaFingerprint() {
		return nil, nil, fmt.Errorf("%s: written for another index format (%d/%s, this is %d/%s)", mp, m.Format, m.Schema, formatVersion, schemaFingerprint())
	}
	d := newMemDirectory()
	if m.Epoch == 0 {
		if len(m.Segments) > 0 || len(m.Docs) > 0 {
			return nil, nil, fmt.Errorf("%s: documents without a snapshot", mp)
		}
		return &m, d, nil
	}
	if checksum(m.Snapshot) != m.SnapCRC {
		return nil, nil, fmt.Errorf("%s: snapshot checksum mismatch", mp)
	}
	ids, err := snapshotSegments(m.Snapshot)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: snapshot: %w", mp, err)
	}
	listed := map[uint64]bool{}
	for _, seg := range m.Segments {
		listed[seg.ID] = true
	}
	for _, id := range ids {
		if !listed[id] {
			return nil, nil, fmt.Errorf("%s: snapshot uses segment %d, which is not listed", mp, id)
		}
	}
	for _, seg := range m.Segments {
		sp := path.Join(s.Dir, segmentName(seg.ID))
		b, err := s.FS.ReadFile(sp)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", sp, err)
		}
		if len(b) != seg.Size {
			return nil, nil, fmt.Errorf("%s: %d bytes, want %d", sp, len(b), seg.Size)
		}
		if checksum(b) != seg.CRC {
			return nil, nil, fmt.Errorf("%s: checksum mismatch", sp)
		}
		d.put(index.ItemKindSegment, seg.ID, b)
	}
	d.put(index.ItemKindSnapshot, m.Epoch, m.Snapshot)
	return &m, d, nil
}

// openLoaded opens an index over a preloaded directory and restores its
// bookkeeping from the manifest. A panic while bluge decodes the stored
// bytes is a damaged index, not a crash: the caller rebuilds.
func openLoaded(opts Options, d *memDirectory, m *manifest) (x *Index, err error) {
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, fmt.Errorf("decode stored segments: %v", r)
		}
	}()
	x, err = open(opts, d.self)
	if err != nil {
		return nil, err
	}
	for _, de := range m.Docs {
		x.setLens(de.Path, de.Lens, true)
		x.hashes[de.Path] = de.Hash
		if de.Key != "" {
			x.keys[de.Path] = de.Key
		}
	}
	n, err := x.reader.Count()
	if err == nil && n != uint64(len(m.Docs)) {
		err = fmt.Errorf("the segments hold %d documents, the manifest %d", n, len(m.Docs))
	}
	if err != nil {
		_ = x.Close()
		return nil, err
	}
	return x, nil
}

// save writes the index's current state: new segments, then the manifest,
// then removes the segments it no longer names.
func (s *storeState) save(lens map[string][numFields]int32, hashes, keys map[string]string) error {
	epoch, snap, segs, ok, err := s.dir.state()
	if err != nil {
		return err
	}
	m := manifest{Format: formatVersion, Schema: schemaFingerprint(), Segments: []segmentEntry{}, Docs: make([]docEntry, 0, len(lens))}
	if ok {
		m.Epoch, m.Snapshot, m.SnapCRC = epoch, snap, checksum(snap)
	}
	written := make(map[uint64]segmentEntry, len(segs))
	for id, b := range segs {
		e := segmentEntry{ID: id, Size: len(b), CRC: checksum(b)}
		// A segment id is never reused for other bytes within one manifest
		// lineage, but a crash may have left a file of that name from a
		// manifest that was never written: rewrite unless this one names it.
		if s.written[id] != e {
			if err := s.FS.WriteFile(path.Join(s.Dir, segmentName(id)), b); err != nil {
				return fmt.Errorf("write segment %d: %w", id, err)
			}
		}
		written[id] = e
		m.Segments = append(m.Segments, e)
	}
	sort.Slice(m.Segments, func(i, j int) bool { return m.Segments[i].ID < m.Segments[j].ID })
	for p, l := range lens {
		m.Docs = append(m.Docs, docEntry{Path: p, Hash: hashes[p], Key: keys[p], Lens: l})
	}
	sort.Slice(m.Docs, func(i, j int) bool { return m.Docs[i].Path < m.Docs[j].Path })
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	if err := s.FS.WriteFile(path.Join(s.Dir, manifestName), raw); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	s.written = written
	return s.removeUnused()
}

// removeUnused deletes segment files the manifest does not name: replaced
// by merges, or left by a crash before their manifest was written.
func (s *storeState) removeUnused() error {
	list, err := s.FS.ReadDir(s.Dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.Dir, err)
	}
	var errs []error
	for _, de := range list {
		name, isSeg := strings.CutSuffix(de.Name, ".seg")
		if de.IsDir || !isSeg {
			continue
		}
		if id, err := strconv.ParseUint(name, 16, 64); err == nil {
			if _, used := s.written[id]; used {
				continue
			}
		}
		if err := s.FS.Remove(path.Join(s.Dir, de.Name)); err != nil && !errors.Is(err, host.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove unused segment: %w", err))
		}
	}
	return errors.Join(errs...)
}

// docHash identifies a document's indexed content: Sync re-analyzes a
// document only when it changes. FNV-1a maps inputs of equal length that
// differ in one byte to different hashes; the field lengths are hashed too.
func docHash(d Doc) string {
	h := fnv.New64a()
	var n [binary.MaxVarintLen64]byte
	field := func(s string) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	kind := d.Kind
	if kind == "" {
		kind = "entry"
	}
	field(d.Path)
	field(kind)
	field(d.Title)
	field(d.Summary)
	field(d.Content)
	field(strings.Join(d.Tags, listSep))
	field(strings.Join(d.Keywords, listSep))
	field(d.Aside)
	return strconv.FormatUint(h.Sum64(), 16)
}

// schemaProbes are analyzed to fingerprint the index schema: their analyzed
// fields exercise stemming, stop words, splitting, CJK and every field.
var schemaProbes = []Doc{
	{Path: "Engineering/Billing-Ops/invoice_retry.policy.md", Kind: "entry", Title: "The Invoice Retry Policies",
		Summary: "Failed invoices are retried 3 times; the customer's card isn't charged twice.",
		Content: "Running runners ran quickly through e-mail, C++ and v2.1.0 notes. 価値観 가치관을 존중한다. Café naïve STRASSE.",
		Tags:    []string{"billing", "E-mail"}, Keywords: []string{"retry", "invoices"},
		Aside: "In reply to Ann: the retries failed."},
	{Path: "engineering/context.md", Kind: "context", Title: "Engineering", Content: "Systems we build and run."},
}

var schemaOnce struct {
	sync.Once
	fp string
}

// schemaFingerprint hashes what document() and the analyzers make of the
// probes (field names, options, terms, positions) and the norm encoding, so
// a stored index built by different code is rebuilt rather than misread.
func schemaFingerprint() string {
	schemaOnce.Do(func() {
		h := fnv.New128a()
		for _, p := range schemaProbes {
			doc, _ := document(p)
			doc.Analyze()
			for _, f := range *doc {
				fmt.Fprintf(h, "field %q %t %t %t %d %q\n", f.Name(), f.Index(), f.Store(), f.IndexDocValues(), f.Length(), f.Value())
				var terms []string
				f.EachTerm(func(t segment.FieldTerm) {
					var b strings.Builder
					fmt.Fprintf(&b, "%q %d", t.Term(), t.Frequency())
					t.EachLocation(func(l segment.Location) {
						fmt.Fprintf(&b, " %d:%d-%d", l.Pos(), l.Start(), l.End())
					})
					terms = append(terms, b.String())
				})
				sort.Strings(terms)
				fmt.Fprintln(h, strings.Join(terms, "\n"))
			}
		}
		var sim bm25
		for _, n := range []int{0, 1, 7, 1000} {
			fmt.Fprintf(h, "norm %d %08x\n", n, math.Float32bits(sim.ComputeNorm(n)))
		}
		schemaOnce.fp = fmt.Sprintf("%x", h.Sum(nil))
	})
	return schemaOnce.fp
}
