package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/binrec"
	"github.com/arbormem/arbor/core/internal/pathtab"
	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"
)

// Persistence. A stored index is a folder of the host file system holding
// bluge segments and a manifest (manifestName, manifest.go). The manifest
// names the segments in use with their sizes and checksums, holds bluge's
// snapshot (which segments, which of their documents are deleted) and, per
// document, a content hash, the key of its source (Source) and the field
// lengths BM25 needs (score.go).
//
// Several processes may open one store (the CLI, arbor mcp and serve, Node
// programs), and a process reads its segments from their files while it
// runs (segfile.go), so what a file name means never changes:
//
//   - A segment file is named by its bluge id and a hash of its bytes
//     (segmentEntry.name): two processes that loaded one manifest number
//     their new segments alike, and never write different bytes under
//     one name. Segment files are never rewritten.
//   - A save writes its new segments, then the manifest, each atomically
//     through host.FS.WriteFile: a crash at any point leaves the old or
//     the new manifest, each with all its segments. It removes a segment
//     file only once no manifest has named it for retireGrace: the
//     manifest lists the files it stopped naming with when (Retired), and
//     a file no manifest knows (written by a process that has not saved
//     yet, or left by a crash) counts from its modification time.
//   - A process still reading a file removed after that (a long-lived
//     arbor mcp holding its snapshot for hours) finds it gone at its next
//     read (ErrSegmentLost): the index reloads the store's current manifest
//     and brings it in step with the tree through Store.Sources (reload),
//     and the call that met the loss runs again.
//
// The tree stays the source of truth: Sync builds only the documents whose
// source key changed and re-analyzes only those whose hash changed, and a
// stored index that cannot be used (missing, bad manifest, missing or
// truncated segment, other format) is replaced by a rebuild from the tree,
// never an error.

// Store is where an index persists itself: a folder of a host file system.
type Store struct {
	FS     host.FS
	Dir    string      // folder below the root, e.g. ".arbor/index"
	Logger host.Logger // gets a warn line when a stored index is unusable; nil discards
	// ReadOnly loads the stored index but never writes it: Flush and Close
	// keep the changes in memory (a read-only grant, docs/sandbox.md).
	ReadOnly bool
	// Fresh ignores what the store holds: the index starts empty, as when
	// the stored one cannot be used, and replaces it at the next flush.
	Fresh bool
	// Sources gives add every source of the tree, as an open gives them to
	// a Syncer. An index that finds a file of its stored index lost
	// (ErrSegmentLost) reloads the store's current index and brings it in
	// step with the tree through it; without it, the loss is the error of
	// the call that met it.
	Sources func(add func(Source) error) error
	// Now tells when a save retires a segment file and whether a retired
	// one is old enough to remove; nil is the system's clock (not the
	// engine's, which a host may fix: retirements are compared with file
	// times and across processes).
	Now func() time.Time
}

// formatVersion changes whenever the stored bytes would mean something
// else to this code (the manifest's layout, the segment names, the norms
// of score.go). Changes to document fields or analysis are caught by
// schemaFP (TestSchemaFingerprint). Format 1 was manifest.json, with segments named by
// their id alone; format 2 had no spill tags; format 3 held every document
// in the manifest; format 4 checked blocks and sections with a CRC-32C.
const formatVersion = 5

const (
	manifestName   = "manifest.bin"
	legacyManifest = "manifest.json" // format 1, removed like an unused segment
)

// retireGrace is how long a segment file stays once no manifest names it:
// a process reading an older manifest still finds its files for that long
// after another process replaced the index. Ten minutes covers any command
// of the CLI; long-lived processes (arbor mcp and serve, a Node program)
// that outlive it reload the current index when they find a file gone.
const retireGrace = 10 * time.Minute

// spillBytes is the size from which a segment bluge makes (a merge, a
// large batch) is written to the store at once and read from its file,
// instead of staying in memory until a save: what a build holds in memory
// stops growing with the tree. Smaller segments are merged away soon, and
// writing them would only add writes.
var spillBytes = 4 << 20 // a variable for the tests

// storeState is an open index's link to its Store.
type storeState struct {
	Store
	rr    host.RangeReader // nil: segments are read whole at open
	cache *blockCache
	dir   *memDirectory // the live index's bluge directory
	// tag ends the names of the segments this index spills (segmentEntry.Spill):
	// random, so that no other process names a file alike.
	tag uint64
	// named is the segment files the manifest this index loaded or last
	// wrote names: they are in the store, whole and checked.
	named map[string]segmentEntry
	// base is the documents file that manifest names, and since the
	// documents changed since it was written (the manifest's documents
	// section, and the changes since: touch); since is nil when there is
	// none, and the next save writes one.
	base  docsFile
	since map[string]struct{}
}

// touch records a change to the document at p, for the next save.
func (s *storeState) touch(p string) {
	if s != nil && s.since != nil {
		s.since[p] = struct{}{}
	}
}

func newStoreState(st Store) *storeState {
	s := &storeState{Store: st, rr: host.RangeReaderOf(st.FS), named: map[string]segmentEntry{}, tag: rand.Uint64() | 1}
	if s.rr != nil {
		s.cache = newBlockCache(cacheBytes)
	}
	return s
}

func (s *storeState) warn(msg string) {
	if s.Logger != nil {
		s.Logger.Log("warn", msg)
	}
}

func (s *storeState) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// newDirectory returns an empty directory whose segments are read from,
// and spilled to, this store.
func (s *storeState) newDirectory() *memDirectory {
	d := newMemDirectory()
	if s.rr != nil {
		d.files = &fileSet{rr: s.rr, dir: s.Dir, cache: s.cache}
		if !s.ReadOnly {
			d.spill = s.spill
		}
	}
	return d
}

// adopt makes d, loaded from m (nil: empty), the index's directory.
func (s *storeState) adopt(d *memDirectory, m *manifest) {
	s.dir = d
	s.named = map[string]segmentEntry{}
	s.base, s.since = docsFile{}, nil
	if m != nil {
		for _, seg := range m.Segments {
			s.named[seg.name()] = seg
		}
		if m.Base.Name != "" {
			s.base, s.since = m.Base, m.changed
		}
	}
}

// spill returns the writer of the new segment id of d.
func (s *storeState) spill(d *memDirectory, id uint64) *spillWriter {
	return &spillWriter{s: s, d: d, entry: segmentEntry{ID: id}}
}

// spillWriter receives a new segment as bluge writes it (a batch's, or a
// merge's as the merge makes it): the first spillBytes in memory; past
// that, the segment goes to the store in whole blocks as it comes, into a
// partial file that takes its content's name at the end. No segment is
// held whole for its writing: a merge of a 1M-entry tree makes segments of
// 280 MB, and the growing buffer that held each took twice that, the
// largest part of a WebAssembly cold build's peak. When the store refuses
// a write (a full disk), what the partial file holds is read back and the
// segment stays in memory, as a small one does: the next save writes it,
// or reports the failure.
type spillWriter struct {
	s *storeState
	d *memDirectory
	// pending is what the partial file does not hold yet: the whole
	// segment while it is in memory.
	pending []byte
	part    string       // the partial file's name, "" while in memory
	entry   segmentEntry // of the bytes in the partial file
	kept    bool         // the store refused a write: in memory to the end
	err     error        // the bytes written could not be read back
}

// Write implements io.Writer.
func (w *spillWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.pending = append(w.pending, p...)
	if !w.kept && len(w.pending) >= spillBytes {
		w.flush(false)
	}
	return len(p), w.err
}

// flush appends pending to the partial file: its whole blocks, or all of
// it at the end, so that each block's checksum is computed once.
func (w *spillWriter) flush(end bool) {
	n := len(w.pending)
	if !end {
		n -= n % blockSize
	}
	if n == 0 {
		return
	}
	if w.part == "" {
		w.part = fmt.Sprintf("%012x-part-%016x.seg", w.entry.ID, w.s.tag)
		w.d.noteSpill(w.part)
	}
	if err := w.s.FS.Append(path.Join(w.s.Dir, w.part), w.pending[:n]); err != nil {
		w.keep(fmt.Errorf("write segment %d: %w", w.entry.ID, err))
		return
	}
	w.entry.add(w.pending[:n])
	w.pending = append(w.pending[:0], w.pending[n:]...)
}

// keep brings the segment back into memory after the store refused a
// write (cause).
func (w *spillWriter) keep(cause error) {
	w.kept = true
	if w.part == "" {
		return
	}
	p := path.Join(w.s.Dir, w.part)
	b, err := w.s.FS.ReadFile(p)
	w.drop()
	switch {
	case err != nil:
		w.err = fmt.Errorf("%w; reading back its %d bytes: %w", cause, w.entry.Size, err)
	case len(b) < w.entry.Size:
		w.err = fmt.Errorf("%w; %d of its %d bytes read back", cause, len(b), w.entry.Size)
	default:
		// A failed append may have left part of its bytes.
		w.pending = append(b[:w.entry.Size], w.pending...)
	}
	w.s.warn(fmt.Sprintf("search index: %v; the segment stays in memory until a save", cause))
}

// drop removes the partial file (what a failed write of the segment left).
func (w *spillWriter) drop() {
	if w.part != "" {
		w.s.FS.Remove(path.Join(w.s.Dir, w.part))
		w.d.forgetSpill(w.part)
		w.part = ""
	}
}

// finish returns the written segment: in memory, or read from its file.
func (w *spillWriter) finish() (*segItem, error) {
	if w.err != nil {
		return nil, w.err
	}
	if !w.kept && (w.part != "" || len(w.pending) >= spillBytes) {
		w.flush(true)
	}
	if w.err != nil {
		return nil, w.err
	}
	if w.kept || w.part == "" {
		return &segItem{b: w.pending}, nil
	}
	e := w.entry
	e.Spill = w.s.tag
	w.d.noteSpill(e.name())
	if err := w.s.FS.Rename(path.Join(w.s.Dir, w.part), path.Join(w.s.Dir, e.name())); err != nil {
		w.d.forgetSpill(e.name())
		w.keep(fmt.Errorf("name segment %d: %w", e.ID, err))
		if w.err != nil {
			return nil, w.err
		}
		return &segItem{b: w.pending}, nil
	}
	w.d.forgetSpill(w.part)
	return &segItem{file: &segFile{set: w.d.files, path: path.Join(w.s.Dir, e.name()), entry: e}}, nil
}

// Open returns the index stored in st, or an empty one when st holds none
// or one that cannot be used (a warn line says why; the next Flush or
// Close replaces it). The index persists itself into st on Flush and
// Close. Follow Open with Sync to bring it in step with the tree.
func Open(opts Options, st Store) (*Index, error) {
	if st.FS == nil {
		return nil, errors.New("search: open: store has no file system")
	}
	s := newStoreState(st)
	x := newIndexOf(opts)
	x.store = s
	var err error
	if !st.Fresh {
		var ok bool
		if ok, err = x.loadStored(); ok {
			return x, nil
		}
		if err != nil {
			s.warn(fmt.Sprintf("search index %s: %v; rebuilding it from the tree", st.Dir, err))
		}
	}
	if err := x.startEmpty(); err != nil {
		return nil, err
	}
	// A stored index that could not be used is replaced at the next flush
	// even when the tree turns out to be empty.
	x.dirty = err != nil || st.Fresh
	return x, nil
}

// loadStored opens x over the store's current index. ok is false when the
// store holds none (err nil) or one that cannot be used (err says why).
func (x *Index) loadStored() (ok bool, err error) {
	s := x.store
	m, d, err := s.load()
	if err != nil || m == nil {
		return false, err
	}
	if err := x.openLoaded(d, m); err != nil {
		return false, err
	}
	s.adopt(d, m)
	return true, nil
}

// startEmpty opens x over an empty directory of its store.
func (x *Index) startEmpty() error {
	d := x.store.newDirectory()
	if err := x.start(d.self, buildPolicy); err != nil {
		return err
	}
	x.store.adopt(d, nil)
	return nil
}

// load reads and checks the manifest and the sizes of its segments; (nil,
// nil, nil) when there is no manifest. Segments are read where queries
// need them when the file system reads ranges, and read whole and checked
// here otherwise.
func (s *storeState) load() (*manifest, *memDirectory, error) {
	mp := path.Join(s.Dir, manifestName)
	raw, err := s.FS.ReadFile(mp)
	if errors.Is(err, host.ErrNotFound) {
		if _, lerr := s.FS.Stat(path.Join(s.Dir, legacyManifest)); lerr == nil {
			return nil, nil, fmt.Errorf("%s: %w (format 1)", path.Join(s.Dir, legacyManifest), errOtherFormat)
		}
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", mp, err)
	}
	m, err := decodeHeads(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", mp, err)
	}
	if err := m.readBase(s.FS, s.Dir); err != nil {
		return nil, nil, err // it names the file
	}
	if b, err := s.FS.ReadFile(path.Join(s.Dir, summaryName)); err == nil {
		m.summary = decodeSummary(b, raw, m.nDocs)
	}
	d := s.newDirectory()
	if m.Epoch == 0 {
		if len(m.Segments) > 0 || m.nDocs > 0 {
			return nil, nil, fmt.Errorf("%s: documents without a snapshot", mp)
		}
		return m, d, nil
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
		sp := path.Join(s.Dir, seg.name())
		if d.files != nil {
			st, err := s.FS.Stat(sp)
			if err != nil {
				return nil, nil, err // it names the file
			}
			if st.Size != int64(seg.Size) {
				return nil, nil, fmt.Errorf("%s: %d bytes, want %d", sp, st.Size, seg.Size)
			}
			d.put(index.ItemKindSegment, seg.ID, &segItem{file: &segFile{set: d.files, path: sp, entry: seg}})
			continue
		}
		b, err := s.FS.ReadFile(sp)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", sp, err)
		}
		if err := seg.check(b); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", sp, err)
		}
		d.put(index.ItemKindSegment, seg.ID, &segItem{b: b, entry: &seg})
	}
	d.put(index.ItemKindSnapshot, m.Epoch, &segItem{b: m.Snapshot})
	return m, d, nil
}

// openLoaded opens x over a loaded directory and restores its bookkeeping
// from the manifest. A panic while bluge decodes the stored bytes is a
// damaged index, not a crash: the caller rebuilds.
func (x *Index) openLoaded(d *memDirectory, m *manifest) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decode stored segments: %v", r)
		}
	}()
	if err := x.start(d.self, mergePolicy); err != nil {
		return err
	}
	x.newDocs(m.nDocs)
	// With a summary, the table is decoded when first needed (docs.go).
	if m.summary != nil {
		x.stats, x.digest = m.summary.stats, m.summary.digest
		x.pending.Store(&lazyDocs{m: m, n: m.nDocs})
	} else if x.stats, x.digest, err = x.decodeDocs(m); err != nil {
		err = fmt.Errorf("manifest: %w", err)
	} else {
		// An earlier version's manifest: the next flush writes it again,
		// with the summary that spares the next opens this decoding.
		x.dirty = true
	}
	var n uint64
	if err == nil {
		n, err = x.reader.Count()
	}
	if err == nil && n != uint64(m.nDocs) {
		err = fmt.Errorf("the segments hold %d documents, the manifest %d", n, m.nDocs)
	}
	if err == nil && d.files != nil && d.files.lost.Load() {
		err, _ = d.files.loss()
	}
	if err != nil {
		x.stop()
		return err
	}
	return nil
}

// Stored is what a stored index holds, read without opening it.
type Stored struct {
	Keys     map[string]string // the source key of each document, by path
	Segments []string          // the segment files the manifest names
	Retired  []string          // the segment files it lists as retired
}

// ReadStored reads the manifest of the index stored in fs at dir.
func ReadStored(fs host.FS, dir string) (Stored, error) {
	m, err := readManifest(fs, dir)
	if err != nil {
		return Stored{}, err
	}
	st := Stored{Keys: make(map[string]string, len(m.Docs))}
	for _, d := range m.Docs {
		st.Keys[d.Path] = d.Key
	}
	for _, seg := range m.Segments {
		st.Segments = append(st.Segments, seg.name())
	}
	for _, r := range m.Retired {
		st.Retired = append(st.Retired, r.Name)
	}
	return st, nil
}

// readManifest reads the manifest stored in fsys at dir whole: without a
// Base, every document in Docs.
func readManifest(fsys host.FS, dir string) (*manifest, error) {
	mp := path.Join(dir, manifestName)
	raw, err := fsys.ReadFile(mp)
	if err != nil {
		return nil, err
	}
	m, err := decodeHeads(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mp, err)
	}
	if err := m.readBase(fsys, dir); err != nil {
		return nil, err
	}
	m.Docs = make([]docEntry, 0, m.nDocs)
	if err := m.eachDoc(func(d docEntry) { m.Docs = append(m.Docs, d) }); err != nil {
		return nil, fmt.Errorf("%s: %w", mp, err)
	}
	m.Base = docsFile{}
	return m, nil
}

// save writes the index's current state: new segments, a documents file
// when the changes since the last one pass binrec.CompactAt, then the
// manifest, then removes the segment and documents files that have been
// unused for retireGrace.
func (s *storeState) save(docs *pathtab.Table[docMeta], sum docSummary) error {
	if err := checkSchemaFingerprint(); err != nil {
		return err
	}
	epoch, snap, segs, ok, err := s.dir.state()
	if err != nil {
		return err
	}
	list, err := s.FS.ReadDir(s.Dir)
	if err != nil && !errors.Is(err, host.ErrNotFound) {
		return fmt.Errorf("list %s: %w", s.Dir, err)
	}
	onDisk := make(map[string]host.DirEntry, len(list))
	for _, de := range list {
		if !de.IsDir {
			onDisk[de.Name] = de
		}
	}
	m := manifest{Segments: make([]segmentEntry, 0, len(segs)), nDocs: docs.Len()}
	if ok {
		m.Epoch, m.Snapshot = epoch, snap
	}
	named := make(map[string]segmentEntry, len(segs))
	for _, id := range slices.Sorted(maps.Keys(segs)) {
		it := segs[id]
		var e segmentEntry
		if it.file != nil {
			e = it.file.entry
			// A manifest naming a file that is gone would send the next
			// open to a rebuild: the index reloads instead (reload).
			if de, ok := onDisk[e.name()]; !ok || de.Size != int64(e.Size) {
				return it.file.set.fail(it.file, errors.New("gone before the index was saved"))
			}
		} else {
			if it.entry == nil {
				en := newSegmentEntry(id, it.b)
				it.entry = &en
			}
			e = *it.entry
			// Content-named: a file this index knows holds these bytes. Any
			// other of the name (a crash's, another process's) is written
			// again, atomically, with the same bytes.
			if _, known := s.named[e.name()]; !known {
				if err := s.FS.WriteFile(path.Join(s.Dir, e.name()), it.b); err != nil {
					return fmt.Errorf("write segment %d: %w", id, err)
				}
			}
		}
		named[e.name()] = e
		m.Segments = append(m.Segments, e)
	}
	since, err := s.saveDocs(&m, docs, onDisk)
	if err != nil {
		return err
	}
	remove := s.retire(&m, named, onDisk)
	mb := m.encode()
	if err := s.FS.WriteFile(path.Join(s.Dir, manifestName), mb); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	// Written after the manifest it names: until then, or if it fails,
	// the summary there names another manifest, and the next open decodes
	// the documents.
	if err := s.FS.WriteFile(path.Join(s.Dir, summaryName), encodeSummary(sum, mb)); err != nil {
		s.warn(fmt.Sprintf("search index %s: write %s: %v; the next open reads every document's record", s.Dir, summaryName, err))
	}
	s.named = named
	s.base, s.since = m.Base, since
	s.dir.publish(named)
	var errs []error
	for _, name := range remove {
		if err := s.FS.Remove(path.Join(s.Dir, name)); err != nil && !errors.Is(err, host.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove unused segment: %w", err))
		}
	}
	return errors.Join(errs...)
}

// saveDocs lays docs out in m: the changes since the documents file the
// index loaded or last wrote, when that file is still in the store and
// they are few enough (binrec.CompactAt); else all of them in a new
// documents file, written here. It returns the paths the manifest's
// documents section holds.
func (s *storeState) saveDocs(m *manifest, docs *pathtab.Table[docMeta], onDisk map[string]host.DirEntry) (map[string]struct{}, error) {
	entry := func(p string) docEntry {
		d, ok := docs.Get(p)
		return docEntry{Path: p, Hash: d.hash, Key: d.key, Lens: d.lens, Gone: !ok}
	}
	if de, ok := onDisk[s.base.Name]; ok && s.since != nil && de.Size == int64(s.base.Size) && len(s.since) <= binrec.CompactAt(s.base.n) {
		m.Base = s.base
		m.Docs = make([]docEntry, 0, len(s.since))
		for _, p := range slices.Sorted(maps.Keys(s.since)) {
			m.Docs = append(m.Docs, entry(p))
		}
		return s.since, nil
	}
	all := make([]docEntry, 0, docs.Len())
	for p, i := range docs.All() {
		d := docs.At(i)
		all = append(all, docEntry{Path: p, Hash: d.hash, Key: d.key, Lens: d.lens})
	}
	if !docs.Sorted() {
		slices.SortFunc(all, func(a, b docEntry) int { return strings.Compare(a.Path, b.Path) })
	}
	b := encodeDocs(all)
	m.Base = docsFile{Name: docsName(b), Size: len(b), n: len(all)}
	// Content-named, as a segment: written again unless this index wrote
	// or read it.
	if de, ok := onDisk[m.Base.Name]; !ok || m.Base.Name != s.base.Name || de.Size != int64(len(b)) {
		if err := s.FS.WriteFile(path.Join(s.Dir, m.Base.Name), b); err != nil {
			return nil, fmt.Errorf("write %s: %w", m.Base.Name, err)
		}
	}
	return map[string]struct{}{}, nil
}

// retire lists in m the segment files of the store that m does not name
// and that some manifest named, or this index used, less than retireGrace
// ago, and returns those to remove: retired longer ago, or known to no
// manifest (left by a crash, or written by a process that has not saved
// them yet) and not modified for retireGrace. It reads back the head of
// the manifest m replaces, which may be another process's.
func (s *storeState) retire(m *manifest, named map[string]segmentEntry, onDisk map[string]host.DirEntry) []string {
	now := s.now().UnixMilli()
	grace := retireGrace.Milliseconds()
	since := map[string]int64{}
	inUse := s.dir.inUse()
	known := map[string]bool{s.base.Name: true}
	for name := range s.named {
		known[name] = true
	}
	if prev := s.readHead(); prev != nil {
		known[prev.Base.Name] = true
		for _, seg := range prev.Segments {
			known[seg.name()] = true
		}
		for _, r := range prev.Retired {
			since[r.Name] = r.Since
		}
	}
	var remove []string
	for _, name := range slices.Sorted(maps.Keys(onDisk)) {
		if _, ok := named[name]; ok || name == m.Base.Name || (!strings.HasSuffix(name, ".seg") && !strings.HasSuffix(name, docsSuffix) && name != legacyManifest) {
			continue
		}
		t, retired := since[name]
		switch {
		case inUse[name]:
			t, retired = now, true
		case retired:
		case known[name]:
			t, retired = now, true
		default:
			t = onDisk[name].ModTime
		}
		switch {
		case now-t >= grace:
			remove = append(remove, name)
		case retired:
			m.Retired = append(m.Retired, retiredFile{Name: name, Since: t})
		}
	}
	return remove
}

// headPrefix is how much of the manifest readHead reads at first: the head
// of an index of a few hundred segments.
const headPrefix = 64 << 10

// readHead returns the head of the store's manifest (Docs not decoded), or
// nil when there is none or it cannot be read: a save then knows only its
// own files.
func (s *storeState) readHead() *manifest {
	p := path.Join(s.Dir, manifestName)
	var b []byte
	if s.rr == nil {
		var err error
		if b, err = s.FS.ReadFile(p); err != nil {
			return nil
		}
	} else {
		read := func(n int) []byte {
			buf := make([]byte, n)
			k, err := s.rr.ReadAt(p, buf, 0)
			if err != nil && !errors.Is(err, io.EOF) {
				return nil
			}
			return buf[:k]
		}
		if b = read(headPrefix); b == nil {
			return nil
		}
		r, err := preamble(b)
		if err != nil {
			return nil
		}
		r.Uint32()
		n := r.Size()
		if r.Err() != nil {
			return nil
		}
		if end := len(b) - r.Len() + n; end > len(b) {
			if b = read(end); len(b) < end {
				return nil
			}
		}
	}
	r, err := preamble(b)
	if err != nil {
		return nil
	}
	m, err := decodeHead(r.Section())
	if err != nil {
		return nil
	}
	return m
}

// reload replaces the index's state by the store's current one and brings
// it in step with the tree (Store.Sources), after a file of seen, the
// state the caller read, was found lost. ok is false when it did not
// reload: another call did already (seen is no longer the index's), or it
// cannot (no Sources; err is then the loss).
func (x *Index) reload(seen *fileSet) (ok bool, err error) {
	x.reloading.Lock()
	defer x.reloading.Unlock()
	x.mu.Lock()
	s := x.store
	switch {
	case x.closed:
		x.mu.Unlock()
		return false, ErrClosed
	case s == nil || s.dir.files != seen:
		x.mu.Unlock()
		return true, nil
	}
	loss, lost := seen.loss()
	if s.Sources == nil {
		x.mu.Unlock()
		return false, loss
	}
	x.stop()
	why := fmt.Sprintf("search index %s: %v", s.Dir, loss)
	loaded, err := x.loadStored()
	if loaded {
		if _, still := s.named[lost]; still {
			// Not removed: damaged. The index is built again.
			x.stop()
			loaded, err = false, errors.New("the current manifest names it")
		}
	}
	if loaded {
		s.warn(why + "; reloaded the current index")
		x.dirty = false
	} else {
		if err != nil {
			why += fmt.Sprintf(", and the current index cannot be used: %v", err)
		}
		s.warn(why + "; rebuilding it from the tree")
		if err := x.startEmpty(); err != nil {
			x.closed = true
			x.mu.Unlock()
			return false, err
		}
		x.dirty = true
	}
	x.unflushed = 0
	x.mu.Unlock()
	sy := x.NewSyncer(nil)
	if err := s.Sources(sy.Add); err != nil {
		return false, fmt.Errorf("search: reload %s: %w", s.Dir, err)
	}
	if _, err := sy.Done(); err != nil {
		return false, fmt.Errorf("search: reload %s: %w", s.Dir, err)
	}
	return true, nil
}

// files returns the stored files the index reads now; nil when it reads
// none (an in-memory index, or one of a file system without range reads).
func (x *Index) files() *fileSet {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.filesLocked()
}

// filesLocked is files for a caller holding x.mu.
func (x *Index) filesLocked() *fileSet {
	if x.store == nil || x.store.dir == nil {
		return nil
	}
	return x.store.dir.files
}

// retry runs op, and when a file of the stored index was found lost
// meanwhile (by op, or by a merge in the background), reloads the index
// (reload) and runs op again.
func (x *Index) retry(op func() error) error {
	seen := x.files()
	err := op()
	if seen == nil || !seen.lost.Load() {
		return err
	}
	ok, rerr := x.reload(seen)
	if !ok {
		if err == nil {
			return nil // op read nothing lost: its answer stands
		}
		return errors.Join(err, rerr)
	}
	return op()
}

// lossOf returns the loss of the files x reads now, if any: a Syncer,
// which runs inside an open or a reload, reports it instead of reloading.
func (x *Index) lossOf() error {
	if f := x.files(); f != nil && f.lost.Load() {
		err, _ := f.loss()
		return err
	}
	return nil
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
	if !d.Date.IsZero() {
		field(dateKey(d.Date))
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// schemaProbes are analyzed to fingerprint the index schema: their analyzed
// fields exercise stemming, stop words, splitting, CJK and every field,
// the keyword fields of filters included.
var schemaProbes = []Doc{
	{Path: "Engineering/Billing-Ops/invoice_retry.policy.md", Kind: "entry", Title: "The Invoice Retry Policies",
		Summary: "Failed invoices are retried 3 times; the customer's card isn't charged twice.",
		Content: "Running runners ran quickly through e-mail, C++ and v2.1.0 notes. 価値観 가치관을 존중한다. Café naïve STRASSE.",
		Tags:    []string{"billing", "E-mail"}, Keywords: []string{"retry", "invoices"},
		Aside: "In reply to Ann: the retries failed.", Date: time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)},
	{Path: "engineering/context.md", Kind: "context", Title: "Engineering", Content: "Systems we build and run."},
}

// schemaFP is what this code makes of schemaProbes
// (computeSchemaFingerprint), written out so that opening an index
// analyses nothing: analysing the probes was 5 ms of a WebAssembly
// process's start. TestSchemaFingerprint fails when the analysis changes,
// and gives the new value; a process checks it once before it writes an
// index (checkSchemaFingerprint), so that a build whose analysis differs,
// in whatever runtime, never stores an index under another's fingerprint.
const schemaFP = "55c39845ec40354f9e0de10ac71339b5"

var schemaCheck struct {
	sync.Once
	err error
}

// checkSchemaFingerprint reports a build whose analysis does not make
// schemaFP of the probes.
func checkSchemaFingerprint() error {
	schemaCheck.Do(func() {
		if fp := computeSchemaFingerprint(); fp != schemaFP {
			schemaCheck.err = fmt.Errorf("search: this build's analysis fingerprints as %s, not %s (schemaFP; TestSchemaFingerprint)", fp, schemaFP)
		}
	})
	return schemaCheck.err
}

// computeSchemaFingerprint hashes what document() and the analyzers make
// of the probes (field names, options, terms, positions), the irregular
// forms' lemmas (which no probe could cover whole) and the norm encoding,
// so a stored index built by different code is rebuilt rather than
// misread.
func computeSchemaFingerprint() string {
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
	for _, f := range slices.Sorted(maps.Keys(irregular)) {
		fmt.Fprintf(h, "lemma %s %s\n", f, irregular[f])
	}
	var sim bm25
	for _, n := range []int{0, 1, 7, 1000} {
		fmt.Fprintf(h, "norm %d %08x\n", n, math.Float32bits(sim.ComputeNorm(n)))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
