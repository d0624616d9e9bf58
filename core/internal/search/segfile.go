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
// every block is checked against the CRC-32C its manifest lists before a
// byte of it is used: a file that another process removed, or that is
// shorter or other than the manifest says, is an error (ErrSegmentLost),
// never bytes handed to the decoder. Opening checks no more than the
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
// (0 for a segment a save wrote) and the CRC-32C of each block.
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
	// last is the block read last: bluge reads a segment in many small
	// pieces in a row (a chunk of doc values is two reads of a varint per
	// document, then the chunk), which it serves without the cache's lock.
	last atomic.Pointer[lastBlock]
}

type lastBlock struct {
	i int
	b []byte
}

// ReadAt implements io.ReaderAt over the segment's checked blocks.
func (f *segFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s at %d: %w", f.path, off, host.ErrInvalid)
	}
	c := f.set.cache
	n := 0
	for n < len(p) && off+int64(n) < int64(f.entry.Size) {
		at := off + int64(n)
		i := int(at / blockSize)
		within := int(at - int64(i)*blockSize)
		if l := f.last.Load(); l != nil && l.i == i {
			n += copy(p[n:], l.b[within:])
			continue
		}
		b, ok := c.get(f, i)
		if !ok {
			var err error
			if b, err = f.load(i); err != nil {
				return n, err
			}
			c.put(f, i, b)
		}
		f.last.Store(&lastBlock{i, b})
		n += copy(p[n:], b[within:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// load reads block i from the file and checks it.
func (f *segFile) load(i int) ([]byte, error) {
	if f.set.searching.Load() > 0 {
		yieldToGC()
	}
	size := min(blockSize, f.entry.Size-i*blockSize)
	b := make([]byte, size)
	n, err := f.set.rr.ReadAt(f.path, b, int64(i)*blockSize)
	switch {
	case n < size && (err == nil || errors.Is(err, io.EOF)):
		return nil, f.set.fail(f, fmt.Errorf("%d bytes at block %d, want %d: the file is shorter than its manifest says", n, i, size))
	case n < size:
		return nil, f.set.fail(f, err)
	case binrec.Checksum(b) != f.entry.Blocks[i]:
		return nil, f.set.fail(f, fmt.Errorf("block %d: checksum mismatch", i))
	}
	return b, nil
}

// blockCache keeps the most recently read blocks of an index's segments,
// up to cacheBytes; it is safe for concurrent use (bluge merges in the
// background while queries read). A block's bytes never change once read:
// an evicted block is left to the garbage collector, since a segFile may
// still hold it as its last.
type blockCache struct {
	mu    sync.Mutex
	max   int
	size  int
	items map[blockKey]*cached
	head  cached // sentinel of the recency list: head.next is the newest
}

type blockKey struct {
	f *segFile
	i int
}

type cached struct {
	key        blockKey
	b          []byte
	prev, next *cached
}

func newBlockCache(max int) *blockCache {
	c := &blockCache{max: max, items: map[blockKey]*cached{}}
	c.head.prev, c.head.next = &c.head, &c.head
	return c
}

func (c *blockCache) get(f *segFile, i int) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[blockKey{f, i}]
	if !ok {
		return nil, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.b, true
}

// put adds block i of f, read as b.
func (c *blockCache) put(f *segFile, i int, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := blockKey{f, i}
	if _, ok := c.items[k]; ok { // read twice at once
		return
	}
	e := &cached{key: k, b: b}
	c.items[k] = e
	c.pushFront(e)
	c.size += len(b)
	for c.size > c.max && c.head.prev != e {
		old := c.head.prev
		c.unlink(old)
		delete(c.items, old.key)
		c.size -= len(old.b)
	}
}

func (c *blockCache) unlink(e *cached) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *blockCache) pushFront(e *cached) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}
