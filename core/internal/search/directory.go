package search

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"
)

// memDirectory is the bluge Directory of a live index: segments and
// snapshots in memory, as bluge's InMemoryDirectory keeps segments, but
// snapshots too, and preloadable from a Store. bluge's persister writes
// every batch here before Batch returns (batches are not "unsafe"), so the
// latest snapshot always describes every completed write; a Store copies
// that state to the host at well-defined points (Flush, Close).
//
// A segment loaded from a Store whose file system reads ranges is not in
// memory: bluge reads it from its file, by checked blocks (segFile), and
// so is a new segment of spillBytes or more, which the directory writes
// to the Store as bluge makes it (spillWriter), named by its content.
type memDirectory struct {
	mu    sync.Mutex
	items map[string]map[uint64]*segItem // kind → id → item
	// files is the stored files this directory reads (nil when the file
	// system reads no ranges); spill, when not nil, returns the writer of
	// a new segment, which goes to the store once it is large.
	files *fileSet
	spill func(d *memDirectory, id uint64) *spillWriter
	// spilled names the files spill wrote (from before each write): a save
	// keeps them though its manifest does not name them, since bluge may
	// be about to use them (a merge persists its segment, then introduces
	// it).
	spilled map[string]bool
	// published names the spilled files a saved manifest named: another
	// process may read them, so they leave by the store's grace period.
	// dropped holds, by id, the other spilled files once bluge removed
	// their segment: no manifest ever named them and their names carry
	// this index's tag (segmentEntry.name), so only this index can be
	// reading them, and it removes them once its reader no longer does
	// (Index.reap). Before, a cold build of a million entries kept every
	// merge's output on disk until ten minutes after it ended: gigabytes.
	published map[string]bool
	dropped   map[uint64]string
}

// inUse returns the names of the stored files d reads or spilled.
func (d *memDirectory) inUse() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]bool, len(d.spilled))
	for name := range d.spilled {
		out[name] = true
	}
	for _, it := range d.items[index.ItemKindSegment] {
		if it.file != nil {
			out[it.file.entry.name()] = true
		}
	}
	return out
}

// noteSpill records that name is about to be written by a spillWriter.
func (d *memDirectory) noteSpill(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.spilled == nil {
		d.spilled = map[string]bool{}
	}
	d.spilled[name] = true
}

// forgetSpill records that the spilled file name is gone (a partial file
// renamed or removed).
func (d *memDirectory) forgetSpill(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.spilled, name)
}

// segItem is a segment or snapshot of a memDirectory: its bytes, or the
// file it is read from.
type segItem struct {
	b     []byte
	entry *segmentEntry // of b, once a save or a load computed it
	file  *segFile      // not nil: read from this file, b is nil
}

func (it *segItem) size() int {
	if it.file != nil {
		return it.file.entry.Size
	}
	return len(it.b)
}

func newMemDirectory() *memDirectory {
	return &memDirectory{items: map[string]map[uint64]*segItem{
		index.ItemKindSegment:  {},
		index.ItemKindSnapshot: {},
	}}
}

// self is the directory function of a bluge configuration using d.
func (d *memDirectory) self() index.Directory { return d }

// Setup implements index.Directory.
func (d *memDirectory) Setup(bool) error { return nil }

// List implements index.Directory: ids of one kind, newest first.
func (d *memDirectory) List(kind string) ([]uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := make([]uint64, 0, len(d.items[kind]))
	for id := range d.items[kind] {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	return ids, nil
}

// Load implements index.Directory.
func (d *memDirectory) Load(kind string, id uint64) (*segment.Data, io.Closer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	it, ok := d.items[kind][id]
	if !ok {
		return nil, nil, fmt.Errorf("index directory: no %s %d", kind, id)
	}
	if it.file != nil {
		return readerData(it.file, it.file.entry.Size), nil, nil
	}
	return segment.NewDataBytes(it.b), nil, nil
}

// Persist implements index.Directory. A segment goes through a
// spillWriter when the store takes spills, so that a large one is never
// held whole to be written.
func (d *memDirectory) Persist(kind string, id uint64, w index.WriterTo, closeCh chan struct{}) error {
	if kind != index.ItemKindSegment || d.spill == nil {
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf, closeCh); err != nil {
			return err
		}
		d.put(kind, id, &segItem{b: buf.Bytes()})
		return nil
	}
	sw := d.spill(d, id)
	if _, err := w.WriteTo(sw, closeCh); err != nil {
		sw.drop()
		return err
	}
	it, err := sw.finish()
	if err != nil {
		return err
	}
	d.put(kind, id, it)
	return nil
}

func (d *memDirectory) put(kind string, id uint64, it *segItem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.items[kind] == nil {
		d.items[kind] = map[uint64]*segItem{}
	}
	d.items[kind][id] = it
}

// Remove implements index.Directory.
func (d *memDirectory) Remove(kind string, id uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if it := d.items[kind][id]; it != nil && it.file != nil {
		if name := it.file.entry.name(); d.spilled[name] && !d.published[name] {
			if d.dropped == nil {
				d.dropped = map[uint64]string{}
			}
			d.dropped[id] = name
		}
	}
	delete(d.items[kind], id)
	return nil
}

// publish records that a saved manifest names these files.
func (d *memDirectory) publish(names map[string]segmentEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name := range names {
		if d.spilled[name] {
			if d.published == nil {
				d.published = map[string]bool{}
			}
			d.published[name] = true
		}
	}
}

// unread returns the dropped files of the segments live does not hold,
// and forgets them: the caller removes them. With live nil (the index is
// closed, bluge has stopped), it returns every spilled file no manifest
// named, dropped or not: a merge cut short by the close leaves its output
// unused.
func (d *memDirectory) unread(live map[uint64]bool) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for id, name := range d.dropped {
		if d.published[name] {
			// A save named it after bluge dropped it (it read the snapshot
			// just before): it leaves by the grace period.
			delete(d.dropped, id)
			continue
		}
		if !live[id] {
			out = append(out, name)
			delete(d.dropped, id)
			delete(d.spilled, name)
		}
	}
	if live == nil {
		for name := range d.spilled {
			if !d.published[name] {
				out = append(out, name)
				delete(d.spilled, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Stats implements index.Directory: bluge's persister paces itself on the
// number of items.
func (d *memDirectory) Stats() (numItems, numBytes uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.items {
		for _, it := range m {
			numItems++
			numBytes += uint64(it.size())
		}
	}
	return numItems, numBytes
}

// Sync implements index.Directory.
func (d *memDirectory) Sync() error { return nil }

// Lock implements index.Directory: one writer per directory by construction.
func (d *memDirectory) Lock() error { return nil }

// Unlock implements index.Directory.
func (d *memDirectory) Unlock() error { return nil }

// state is a consistent copy of the latest snapshot and the segments it
// uses. bluge persists a snapshot's segments before the snapshot and
// removes a segment only once no kept snapshot uses it, so under the lock
// the newest snapshot is always complete. ok is false before any write.
func (d *memDirectory) state() (epoch uint64, snap []byte, segs map[uint64]*segItem, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for e, it := range d.items[index.ItemKindSnapshot] {
		if !ok || e > epoch {
			epoch, snap, ok = e, it.b, true
		}
	}
	if !ok {
		return 0, nil, nil, false, nil
	}
	ids, err := snapshotSegments(snap)
	if err != nil {
		return 0, nil, nil, false, fmt.Errorf("snapshot %d: %w", epoch, err)
	}
	segs = make(map[uint64]*segItem, len(ids))
	for _, id := range ids {
		it, found := d.items[index.ItemKindSegment][id]
		if !found {
			return 0, nil, nil, false, fmt.Errorf("snapshot %d uses segment %d, which is missing", epoch, id)
		}
		segs[id] = it
	}
	return epoch, snap, segs, true, nil
}

// snapshotSegments lists the segment ids a bluge snapshot refers to, read
// with bluge's own decoder (the trailing CRC is ignored by it).
func snapshotSegments(snap []byte) ([]uint64, error) {
	var s index.Snapshot
	if _, err := s.ReadFrom(bytes.NewReader(snap)); err != nil {
		return nil, err
	}
	var ids []uint64
	for _, seg := range s.Segments() {
		ids = append(ids, seg.ID())
	}
	return ids, nil
}
