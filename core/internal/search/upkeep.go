package search

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/RoaringBitmap/roaring"
	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/index/mergeplan"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// Segment upkeep: what bluge's merger leaves undone, done by the writer
// of a stored index when it saves it (flush).
//
//   - An index loaded from its store merges by mergePolicy (config.go), so
//     that the processes that only read it never rewrite it; one stored by
//     an earlier version, or saved before a build's last merges ran, keeps
//     more segments than buildPolicy leaves (25 at 100,000 entries instead
//     of 9), and every query visits each. The flush merges them down as
//     buildPolicy plans, and saves the result: the next processes load it.
//   - bluge merges only segments of fewer than MaxSegmentSize/2 live
//     documents, so the documents deleted (or replaced) in a segment of
//     100,000 to maxSegmentDocs documents were never reclaimed: a tree that
//     rewrites its entries grows its index without bound. A segment of
//     rewriteMinDocs documents or more, a deletedShare of which is deleted,
//     is rewritten alone without them.
//   - Segments whose smaller ones hold half as many documents as their
//     largest are compacted: merged into as few as maxSegmentDocs allows
//     (compactTasks). A cold build's merges left a segment per tier and a
//     few small ones (11 at 10,000 entries), and a question walks the
//     dictionary of every segment for each of its words' expansions: in
//     WebAssembly a question at 10,000 entries took twice the time over 11
//     segments that it takes over one, and the open a third more
//     (bench/wasm/REPORT.md). Writes after that add small segments, which
//     the merge policies keep few, until they hold half of the largest:
//     the largest is rewritten each time the index grew by half, about
//     three times per document in all.
//
// bluge's writer has no call that runs a merge when asked (its merger runs
// on its own, planned from mergeplan.Options), so the upkeep closes the
// writer, merges with ice as bluge's merger does, through the directory,
// whose spillWriter streams a large segment to the store as it is made
// (the memory of an upkeep is a merge's, as in a build), then replaces the
// snapshot and opens the writer again. Queries of this process wait (the
// caller holds x.mu); other processes keep reading the files of the
// manifest they loaded, which a save removes only after retireGrace.
// Nothing is replaced until every merge succeeded: a failed upkeep leaves
// the index as it was.

// deletedShare is the share of deleted documents from which the upkeep
// rewrites a segment alone. Lucene's TieredMergePolicy lets 20 to 33 % of
// an index be deleted (deletesPctAllowed, 20 by default since Lucene 8.5);
// a quarter keeps the postings a query reads at most a third larger than
// the live documents need, and a segment is rewritten once per quarter of
// its documents replaced, not at every flush.
const deletedShare = 0.25

// rewriteMinDocs is the size, in documents, from which a segment is
// rewritten for its deletions alone: smaller ones are bluge's merger's to
// merge (its plans favour merges that reclaim deletions), and rewriting a
// segment a few documents of which were replaced would make most flushes
// of a small index reopen its writer.
const rewriteMinDocs = fewDocs

// maxUpkeepRounds bounds the plans an upkeep applies; each makes fewer
// segments, so the plans run out long before.
const maxUpkeepRounds = 100

// upkeepSegment is a segment of the snapshot an upkeep works on.
type upkeepSegment struct {
	id      uint64
	seg     segment.Segment
	deleted *roaring.Bitmap // nil: none
}

func (s *upkeepSegment) ID() uint64      { return s.id }
func (s *upkeepSegment) FullSize() int64 { return int64(s.seg.Count()) }
func (s *upkeepSegment) LiveSize() int64 {
	n := int64(s.seg.Count())
	if s.deleted != nil {
		n -= int64(s.deleted.GetCardinality())
	}
	return n
}

// compactTasks packs segs first-fit by decreasing size into merges of at
// most maxSegmentDocs live documents (a segment goes into the first merge
// it fits, a merge is opened for one that fits none, so that no two of
// the segments made would fit in one), and returns those in which the
// segments other than the largest hold at least half as many documents as
// it: a merge rewrites the largest only once it takes in that much.
func compactTasks(segs []mergeplan.Segment) [][]mergeplan.Segment {
	sorted := slices.Clone(segs)
	slices.SortStableFunc(sorted, func(a, b mergeplan.Segment) int { return cmp.Compare(b.LiveSize(), a.LiveSize()) })
	var bins [][]mergeplan.Segment
	var sizes []int64
	for _, s := range sorted {
		i := slices.IndexFunc(sizes, func(n int64) bool { return n+s.LiveSize() <= maxSegmentDocs })
		if i < 0 {
			bins, sizes = append(bins, nil), append(sizes, 0)
			i = len(bins) - 1
		}
		bins[i] = append(bins[i], s)
		sizes[i] += s.LiveSize()
	}
	var tasks [][]mergeplan.Segment
	for i, b := range bins {
		if largest := b[0].LiveSize(); len(b) > 1 && 2*(sizes[i]-largest) >= largest {
			tasks = append(tasks, b)
		}
	}
	return tasks
}

// upkeepTasks returns the merges the segments segs call for: compactTasks',
// else buildPolicy's, else the rewrites of segments a deletedShare of
// which is deleted.
func upkeepTasks(segs []mergeplan.Segment) ([][]mergeplan.Segment, error) {
	if tasks := compactTasks(segs); len(tasks) > 0 {
		return tasks, nil
	}
	p, err := mergeplan.Plan(segs, &buildPolicy)
	if err != nil {
		return nil, err
	}
	var tasks [][]mergeplan.Segment
	if p != nil {
		for _, t := range p.Tasks {
			if len(t.Segments) > 0 {
				tasks = append(tasks, t.Segments)
			}
		}
	}
	if len(tasks) > 0 {
		return tasks, nil
	}
	for _, s := range segs {
		if full := s.FullSize(); full >= rewriteMinDocs && float64(full-s.LiveSize()) >= deletedShare*float64(full) {
			tasks = append(tasks, []mergeplan.Segment{s})
		}
	}
	return tasks, nil
}

// needsUpkeep reports whether the segments of x's reader call for an
// upkeep. Called with x.mu held.
func (x *Index) needsUpkeep() bool {
	var segs []mergeplan.Segment
	for _, s := range x.reader.Segments() {
		ps, ok := s.(mergeplan.Segment)
		if !ok {
			return false // not bluge's snapshot: nothing to plan from
		}
		segs = append(segs, ps)
	}
	tasks, err := upkeepTasks(segs)
	return err == nil && len(tasks) > 0
}

// upkeep merges the segments of a stored index as upkeepTasks says, until
// it says nothing more. changed reports whether the segments changed; an
// error leaves them as they were. Called with x.mu held for writing, on a
// store that is written to.
func (x *Index) upkeep() (changed bool, err error) {
	if !x.needsUpkeep() {
		return false, nil
	}
	d := x.store.dir
	if err := x.stop(); err != nil {
		return false, errors.Join(err, x.restart())
	}
	changed, err = upkeepDirectory(d, x.opts.Merged)
	if rerr := x.restart(); rerr != nil {
		return changed, errors.Join(err, rerr)
	}
	// The merged segments are no longer read: their spilled files go.
	x.reap()
	return changed, err
}

// upkeepDirectory applies the upkeep to the latest snapshot of d, whose
// writer is closed: each merge's segment is persisted into d (spilled to
// the store when large), and once all succeeded a new snapshot replaces
// the old ones and the merged segments leave d. On error, d is left as it
// was but for the segments the upkeep added, which leave it again.
// progress, when not nil, is told how many of the live documents of each
// round's merges are merged (a compaction at 100,000 entries takes tens of
// seconds in WebAssembly, after a build's last progress report).
func upkeepDirectory(d *memDirectory, progress func(done, total int)) (changed bool, err error) {
	epoch, snap, _, ok, err := d.state()
	if err != nil || !ok {
		return false, err
	}
	var s index.Snapshot
	if _, err := s.ReadFrom(bytes.NewReader(snap)); err != nil {
		return false, fmt.Errorf("snapshot %d: %w", epoch, err)
	}
	live := map[uint64]*upkeepSegment{} // the segments of the new snapshot
	var order []uint64                  // their ids, in the snapshot's order
	for _, ss := range s.Segments() {
		seg, err := loadSegment(d, ss.ID())
		if err != nil {
			return false, err
		}
		live[ss.ID()] = &upkeepSegment{id: ss.ID(), seg: seg, deleted: ss.Deleted()}
		order = append(order, ss.ID())
	}
	ids, err := d.List(index.ItemKindSegment)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	next := ids[0] + 1 // List is newest first
	var added, merged []uint64
	defer func() {
		if err != nil {
			for _, id := range added {
				_ = d.Remove(index.ItemKindSegment, id)
			}
		}
	}()
	for range maxUpkeepRounds {
		var segs []mergeplan.Segment
		for _, id := range order {
			segs = append(segs, live[id])
		}
		tasks, err := upkeepTasks(segs)
		if err != nil {
			return false, err
		}
		if len(tasks) == 0 {
			break
		}
		done, total := 0, 0
		for _, t := range tasks {
			for _, ps := range t {
				total += int(ps.LiveSize())
			}
		}
		if progress != nil {
			progress(0, total)
		}
		for _, t := range tasks {
			var in []segment.Segment
			var drops []*roaring.Bitmap
			for _, ps := range t {
				us := ps.(*upkeepSegment)
				if us.LiveSize() > 0 {
					in = append(in, us.seg)
					drops = append(drops, us.deleted)
				}
				delete(live, us.id)
				merged = append(merged, us.id)
			}
			order = slices.DeleteFunc(order, func(id uint64) bool { return live[id] == nil })
			if len(in) == 0 {
				continue // only empty segments: dropped
			}
			id := next
			next++
			if err := d.Persist(index.ItemKindSegment, id, ice.Merge(in, drops, mergeBufferSize), nil); err != nil {
				return false, fmt.Errorf("merge segments: %w", err)
			}
			added = append(added, id)
			seg, err := loadSegment(d, id)
			if err != nil {
				return false, err
			}
			live[id] = &upkeepSegment{id: id, seg: seg}
			order = append(order, id)
			if done += int(seg.Count()); progress != nil {
				progress(done, total)
			}
		}
	}
	if len(merged) == 0 {
		return false, nil
	}
	var out []*upkeepSegment
	for _, id := range order {
		out = append(out, live[id])
	}
	b, err := encodeSnapshot(out)
	if err != nil {
		return false, err
	}
	olds, err := d.List(index.ItemKindSnapshot)
	if err != nil {
		return false, err
	}
	d.put(index.ItemKindSnapshot, epoch+1, &segItem{b: b})
	for _, e := range olds {
		_ = d.Remove(index.ItemKindSnapshot, e)
	}
	for _, id := range merged {
		_ = d.Remove(index.ItemKindSegment, id)
	}
	return true, nil
}

// loadSegment opens the segment id of d as bluge's writer opens it.
func loadSegment(d *memDirectory, id uint64) (segment.Segment, error) {
	data, _, err := d.Load(index.ItemKindSegment, id)
	if err != nil {
		return nil, err
	}
	seg, err := ice.Load(data)
	if err != nil {
		return nil, fmt.Errorf("load segment %d: %w", id, err)
	}
	return seg, nil
}

// encodeSnapshot writes a bluge snapshot of segs in bluge's format 1 (see
// index.Snapshot.WriteTo, which only a live writer's snapshot can call):
// the format version, the number of segments, each one's type, version,
// id and deleted documents (a roaring bitmap, its length first), and a
// CRC-32 (IEEE, big-endian) of all that.
func encodeSnapshot(segs []*upkeepSegment) ([]byte, error) {
	var b []byte
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, s := range segs {
		typ := s.seg.Type()
		b = binary.AppendUvarint(b, uint64(len(typ)))
		b = append(b, typ...)
		b = binary.BigEndian.AppendUint32(b, s.seg.Version())
		b = binary.AppendUvarint(b, s.id)
		if s.deleted == nil || s.deleted.IsEmpty() {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		del, err := s.deleted.ToBytes()
		if err != nil {
			return nil, fmt.Errorf("segment %d: deleted documents: %w", s.id, err)
		}
		b = binary.AppendUvarint(b, uint64(len(del)))
		b = append(b, del...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}
