package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// blockFile stores a segment of n blocks and a half of random bytes and
// returns it read through a cache of cacheBlocks blocks.
func blockFile(t *testing.T, n, cacheBlocks int) (*segFile, []byte) {
	t.Helper()
	data := make([]byte, n*blockSize+blockSize/2)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	set := &fileSet{rr: bytesReader(data), dir: ".", cache: newBlockCache(cacheBlocks * blockSize)}
	return &segFile{set: set, path: "s.seg", entry: newSegmentEntry(1, data)}, data
}

// bytesReader reads every path as its bytes, allocating nothing (MemFS
// checks the path, which allocates).
type bytesReader []byte

func (r bytesReader) ReadAt(_ string, buf []byte, off int64) (int, error) {
	return bytes.NewReader(r).ReadAt(buf, off)
}

// readBlock reads block i of f whole and checks its bytes.
func readBlock(t *testing.T, f *segFile, data []byte, i int) {
	t.Helper()
	p := make([]byte, blockSize)
	if _, err := f.ReadAt(p, int64(i*blockSize)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p, data[i*blockSize:(i+1)*blockSize]) {
		t.Fatalf("block %d: other bytes", i)
	}
}

// A block a reader still holds is not reused, however many blocks are
// read past the cache meanwhile; once released, the next read reuses it.
func TestBlockReuse(t *testing.T) {
	f, data := blockFile(t, 6, 1)
	held, err := f.block(0)
	if err != nil {
		t.Fatal(err)
	}
	// Block 0 leaves the cache and stops being f's last; each read frees a
	// block that the next one refills.
	for i := 1; i < 6; i++ {
		readBlock(t, f, data, i)
		if f.last == held {
			t.Fatalf("read of block %d refilled block 0, still held", i)
		}
	}
	if held.f != f || held.i != 0 || !bytes.Equal(held.b, data[:blockSize]) {
		t.Fatal("a held block was overwritten")
	}
	f.set.cache.release(held)
	readBlock(t, f, data, 1) // evicted: read again
	if f.last != held {
		t.Fatal("a read past the cache did not reuse the block released")
	}
	if held.i != 1 {
		t.Fatalf("the reused block says it is block %d, want 1", held.i)
	}
}

// Reading past the cache allocates no block once the free list has some.
func TestBlockReadsAllocateNothing(t *testing.T) {
	f, data := blockFile(t, 4, 1)
	p := make([]byte, 100)
	i := 0
	allocs := testing.AllocsPerRun(50, func() {
		i = (i + 1) % 4
		if _, err := f.ReadAt(p, int64(i*blockSize+7)); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per read past the cache, want 0", allocs)
	}
	readBlock(t, f, data, 3)
}

// Concurrent readers of two segments sharing a small cache read the bytes
// of their files, whichever blocks the others free and refill: run with
// -race, a block overwritten while one of them copies from it is a race.
func TestBlockReadsConcurrent(t *testing.T) {
	f, data := blockFile(t, 8, 2)
	g := &segFile{set: f.set, path: f.path, entry: f.entry}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := range 8 {
		file := f
		if r%2 == 1 {
			file = g
		}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for range 300 {
				off := rng.IntN(len(data))
				p := make([]byte, min(1+rng.IntN(3*blockSize), len(data)-off))
				if _, err := file.ReadAt(p, int64(off)); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(p, data[off:off+len(p)]) {
					errs <- fmt.Errorf("reader %d: other bytes at %d", r, off)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
