package search

import (
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/binrec"
)

// Stored segments are read where bluge needs them, a block at a time, and
// every block is checked against the checksum its manifest lists
// (binrec.Checksum) before a byte of it is used: a file that another
// process removed, or that is shorter or other than the manifest says, is
// an error (ErrSegmentLost), never bytes handed to the decoder. Opening checks no more than the
// sizes, so its cost does not grow with the index; the blocks a query
// reads are kept in a bounded cache (blockCache).

// blockSize is the unit a stored segment is checked, read and cached in.
// Smaller blocks waste less of a read for the few bytes a posting list or
// a document's stored fields need; larger ones take fewer host calls and
// checks for a merge that reads a segment whole.
const blockSize = 32 << 10

// cacheBytes bounds the blocks an index keeps read. A query reads the
// dictionaries (kept apart, by bluge, once loaded), the posting lists of
// its terms and the stored fields of its hits: the frequent terms' lists
// are what pays to keep. Twenty LongMemEval questions of a 100,000-entry
// tree read about 100 MiB of blocks; a cache of 64 MiB instead of 16 cut
// their reads by a tenth (bench/index/REPORT.md), and a wasm module keeps
// twice what it holds live in its linear memory.
var cacheBytes = 16 << 20 // a variable for the tests

// ErrSegmentLost is the error of a read of a stored segment whose file is
// gone, shorter, or does not hold the bytes its manifest lists: another
// process replaced the index and removed the file after the grace period
// (retireGrace), or the file was damaged. The index then reloads the
// current one (Store.Sources).
var ErrSegmentLost = errors.New("a segment file of the stored index is gone or damaged")

var crc64Table = crc64.MakeTable(crc64.ECMA)

// segmentEntry describes a stored segment: its bluge id, size, a CRC-64 of
// its bytes (part of its file name, so that a name always means the same
// bytes, whichever process wrote it), the tag of the index that spilled it
// (0 for a segment a save wrote) and the checksum of each block.
type segmentEntry struct {
	ID     uint64
	Size   int
	Hash   uint64
	Spill  uint64
	Blocks []uint32
}

// newSegmentEntry describes the segment id whose bytes are b.
func newSegmentEntry(id uint64, b []byte) segmentEntry {
	e := segmentEntry{ID: id, Blocks: make([]uint32, 0, blocksOf(len(b)))}
	e.add(b)
	return e
}

// add extends e with the bytes b that follow those it describes, which
// must be whole blocks.
func (e *segmentEntry) add(b []byte) {
	e.Hash = crc64.Update(e.Hash, crc64Table, b)
	for off := 0; off < len(b); off += blockSize {
		e.Blocks = append(e.Blocks, binrec.Checksum(b[off:min(off+blockSize, len(b))]))
	}
	e.Size += len(b)
}

func blocksOf(size int) int { return (size + blockSize - 1) / blockSize }

// name is the segment's file name: its id and the hash of its bytes. Two
// processes that loaded one manifest number their new segments alike; the
// hash keeps them apart. A spilled segment's name ends with the spilling
// index's tag: until a save names it, no other process knows the file, so
// the index may remove it the moment it is merged away (Index.reap), even
// while another process building the same documents holds the same bytes.
func (e segmentEntry) name() string {
	if e.Spill != 0 {
		return fmt.Sprintf("%012x-%016x-%016x.seg", e.ID, e.Hash, e.Spill)
	}
	return fmt.Sprintf("%012x-%016x.seg", e.ID, e.Hash)
}

// check reports whether b holds the bytes e describes.
func (e segmentEntry) check(b []byte) error {
	if len(b) != e.Size {
		return fmt.Errorf("%d bytes, want %d", len(b), e.Size)
	}
	for i, want := range e.Blocks {
		off := i * blockSize
		if binrec.Checksum(b[off:min(off+blockSize, len(b))]) != want {
			return fmt.Errorf("block %d: checksum mismatch", i)
		}
	}
	return nil
}

// yieldToGC lets other goroutines run where a query's read of the store
// would block. Under WebAssembly (one thread, no preemption) the garbage
// collector's workers get no other turn while a query reads and allocates:
// twenty questions of a 100,000-entry tree grew the heap past a gigabyte,
// its collection never finishing, which with this yield stays at 260 MiB.
// A build does not yield: bluge's merges, which read segments too, would
// then fall behind its batches.
func yieldToGC() { runtime.Gosched() }

// fileSet is the stored segments one loaded state of an index reads: when
// one of them is found lost, the index reloads (Index.reload) and reads a
// new set; the old one keeps its mark for the operations still using it.
type fileSet struct {
	rr    host.RangeReader
	dir   string
	cache *blockCache
	lost  atomic.Bool
	// searching counts the queries reading now (yieldToGC).
	searching atomic.Int32
	mu        sync.Mutex
	err       error  // the first loss
	name      string // its file
}

// fail marks the set lost and returns the error for a read of f.
func (s *fileSet) fail(f *segFile, err error) error {
	err = fmt.Errorf("%s/%s: %w: %w", s.dir, f.entry.name(), ErrSegmentLost, err)
	s.mu.Lock()
	if s.err == nil {
		s.err, s.name = err, f.entry.name()
	}
	s.mu.Unlock()
	s.lost.Store(true)
	return err
}

// loss returns the first loss and the name of its file.
func (s *fileSet) loss() (error, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err, s.name
}

// segFile is a stored segment read by blocks: bluge's segment.Data reads
// it through ReadAt (readerData).
type segFile struct {
	set   *fileSet
	path  string
	entry segmentEntry
	// last is the block read last, with a reference of its own: bluge
	// reads a segment in many small pieces in a row (a chunk of doc values
	// is two reads of a varint per document, then the chunk), which it
	// serves without the cache's lock.
	mu   sync.Mutex
	last *block
}

// ReadAt implements io.ReaderAt over the segment's checked blocks.
func (f *segFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s at %d: %w", f.path, off, host.ErrInvalid)
	}
	n := 0
	for n < len(p) && off+int64(n) < int64(f.entry.Size) {
		at := off + int64(n)
		i := int(at / blockSize)
		b, err := f.block(i)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], b.b[at-int64(i)*blockSize:])
		f.set.cache.release(b)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block i of the file with a reference the caller releases:
// f's last, or the cache's, or one read now, which becomes both.
func (f *segFile) block(i int) (*block, error) {
	c := f.set.cache
	f.mu.Lock()
	if l := f.last; l != nil && l.i == i {
		l.refs.Add(1)
		f.mu.Unlock()
		return l, nil
	}
	f.mu.Unlock()
	b := c.get(f, i)
	if b == nil {
		var err error
		if b, err = f.load(i); err != nil {
			return nil, err
		}
		c.put(b)
	}
	b.refs.Add(1) // last's
	f.mu.Lock()
	old := f.last
	f.last = b
	f.mu.Unlock()
	if old != nil {
		c.release(old)
	}
	return b, nil
}

// load reads block i from the file and checks it, into a block with one
// reference, the caller's.
func (f *segFile) load(i int) (*block, error) {
	if f.set.searching.Load() > 0 {
		yieldToGC()
	}
	c := f.set.cache
	size := min(blockSize, f.entry.Size-i*blockSize)
	b := c.alloc(f, i, size)
	n, err := f.set.rr.ReadAt(f.path, b.b, int64(i)*blockSize)
	switch {
	case n < size && (err == nil || errors.Is(err, io.EOF)):
		err = f.set.fail(f, fmt.Errorf("%d bytes at block %d, want %d: the file is shorter than its manifest says", n, i, size))
	case n < size:
		err = f.set.fail(f, err)
	case binrec.Checksum(b.b) != f.entry.Blocks[i]:
		err = f.set.fail(f, fmt.Errorf("block %d: checksum mismatch", i))
	default:
		return b, nil
	}
	c.release(b)
	return nil, err
}

// block is one read and checked block of a segment. Its bytes are shared
// by its holders, each with a reference: the cache while it keeps the
// block, the segFile whose last it is, and each ReadAt copying from it.
// The last reference released returns the block to the cache's free
// list, whose next read overwrites it: a reference is only ever added by
// a holder that has one (the cache under its lock, last under its file's)
// so no reader can reach a block once it is free. TestBlockReuse and
// TestBlockReadsConcurrent (under the race detector) check it.
type block struct {
	f    *segFile
	i    int
	b    []byte
	refs atomic.Int32
	// prev and next link the cache's recency list, under its lock.
	prev, next *block
}

// blockCache keeps the most recently read blocks of an index's segments,
// up to cacheBytes, and the freed blocks the next reads fill; it is safe
// for concurrent use (bluge merges in the background while queries read).
//
// A query of a 100,000-entry tree reads a few dozen blocks past the cache:
// allocating each, 32 KiB, was a quarter of a query's allocated bytes,
// which a wasm module pays for in garbage collection.
type blockCache struct {
	mu    sync.Mutex
	max   int
	size  int
	items map[blockKey]*block
	head  block    // sentinel of the recency list: head.next is the newest
	free  []*block // whole blocks no one holds, at most maxFree
}

// maxFree bounds the free list: a read past a full cache frees the block
// it evicts, or soon after the one its file read last, so a few suffice.
const maxFree = 8

type blockKey struct {
	f *segFile
	i int
}

func newBlockCache(max int) *blockCache {
	c := &blockCache{max: max, items: map[blockKey]*block{}}
	c.head.prev, c.head.next = &c.head, &c.head
	return c
}

// alloc returns a block for block i of f, size bytes, with one reference:
// a free one when the size is a whole block.
func (c *blockCache) alloc(f *segFile, i, size int) *block {
	var b *block
	if size == blockSize {
		c.mu.Lock()
		if n := len(c.free); n > 0 {
			b, c.free[n-1] = c.free[n-1], nil
			c.free = c.free[:n-1]
		}
		c.mu.Unlock()
	}
	if b == nil {
		b = &block{b: make([]byte, size)}
	}
	b.f, b.i = f, i
	b.refs.Store(1)
	return b
}

// release drops a reference to b, freeing it with the last one.
func (c *blockCache) release(b *block) {
	if c.unref(b) {
		c.mu.Lock()
		c.recycle(b)
		c.mu.Unlock()
	}
}

// unref drops a reference to b and reports whether it was the last.
func (c *blockCache) unref(b *block) bool {
	switch r := b.refs.Add(-1); {
	case r > 0:
		return false
	case r < 0:
		panic("search: a segment block released more often than held")
	}
	return true
}

// recycle adds b, which no one holds, to the free list; called with c.mu
// held.
func (c *blockCache) recycle(b *block) {
	b.f = nil // keep no segment reachable from the free list
	// A file's short last block is left to the garbage collector.
	if len(b.b) == blockSize && len(c.free) < maxFree {
		c.free = append(c.free, b)
	}
}

// get returns block i of f with a reference for the caller, or nil.
func (c *blockCache) get(f *segFile, i int) *block {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.items[blockKey{f, i}]
	if !ok {
		return nil
	}
	b.refs.Add(1)
	c.unlink(b)
	c.pushFront(b)
	return b
}

// put keeps b, evicting the least recently read blocks past the cache's
// size.
func (c *blockCache) put(b *block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := blockKey{b.f, b.i}
	if _, ok := c.items[k]; ok { // read twice at once
		return
	}
	b.refs.Add(1)
	c.items[k] = b
	c.pushFront(b)
	c.size += len(b.b)
	for c.size > c.max && c.head.prev != b {
		old := c.head.prev
		c.unlink(old)
		delete(c.items, blockKey{old.f, old.i})
		c.size -= len(old.b)
		if c.unref(old) {
			c.recycle(old)
		}
	}
}

func (c *blockCache) unlink(b *block) {
	b.prev.next, b.next.prev = b.next, b.prev
}

func (c *blockCache) pushFront(b *block) {
	b.prev, b.next = &c.head, c.head.next
	c.head.next.prev = b
	c.head.next = b
}
