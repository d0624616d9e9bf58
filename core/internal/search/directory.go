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
// that state to the host at well-defined points (Flush, Close) instead of
// letting bluge's background goroutines touch the host at any time.
type memDirectory struct {
	mu    sync.Mutex
	items map[string]map[uint64][]byte // kind → id → bytes
}

func newMemDirectory() *memDirectory {
	return &memDirectory{items: map[string]map[uint64][]byte{
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
	b, ok := d.items[kind][id]
	if !ok {
		return nil, nil, fmt.Errorf("index directory: no %s %d", kind, id)
	}
	return segment.NewDataBytes(b), nil, nil
}

// Persist implements index.Directory.
func (d *memDirectory) Persist(kind string, id uint64, w index.WriterTo, closeCh chan struct{}) error {
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf, closeCh); err != nil {
		return err
	}
	d.put(kind, id, buf.Bytes())
	return nil
}

func (d *memDirectory) put(kind string, id uint64, b []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.items[kind] == nil {
		d.items[kind] = map[uint64][]byte{}
	}
	d.items[kind][id] = b
}

// Remove implements index.Directory.
func (d *memDirectory) Remove(kind string, id uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.items[kind], id)
	return nil
}

// Stats implements index.Directory: bluge's persister paces itself on the
// number of items.
func (d *memDirectory) Stats() (numItems, numBytes uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.items {
		for _, b := range m {
			numItems++
			numBytes += uint64(len(b))
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
func (d *memDirectory) state() (epoch uint64, snap []byte, segs map[uint64][]byte, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for e, b := range d.items[index.ItemKindSnapshot] {
		if !ok || e > epoch {
			epoch, snap, ok = e, b, true
		}
	}
	if !ok {
		return 0, nil, nil, false, nil
	}
	ids, err := snapshotSegments(snap)
	if err != nil {
		return 0, nil, nil, false, fmt.Errorf("snapshot %d: %w", epoch, err)
	}
	segs = make(map[uint64][]byte, len(ids))
	for _, id := range ids {
		b, found := d.items[index.ItemKindSegment][id]
		if !found {
			return 0, nil, nil, false, fmt.Errorf("snapshot %d uses segment %d, which is missing", epoch, id)
		}
		segs[id] = b
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
