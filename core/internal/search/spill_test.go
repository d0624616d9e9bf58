package search

import (
	"errors"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// segmentWrites records how the segment files of a store were written:
// each file's appends (followed through renames), its whole writes, and
// what was written to a partial file.
type segmentWrites struct {
	*host.MemFS
	mu      sync.Mutex
	appends map[string][]int // file → the size of each append
	whole   map[string]int   // file → the size of its largest WriteFile
	// full, when set, refuses every append to a segment file past this
	// many bytes in all, as a full disk does.
	full    int
	written int
}

func newSegmentWrites() *segmentWrites {
	return &segmentWrites{MemFS: host.NewMemFS(), appends: map[string][]int{}, whole: map[string]int{}}
}

func (f *segmentWrites) Append(p string, data []byte) error {
	if strings.HasSuffix(p, ".seg") {
		f.mu.Lock()
		if f.full > 0 && f.written+len(data) > f.full {
			f.mu.Unlock()
			// A full disk may take part of the bytes.
			f.MemFS.Append(p, data[:len(data)/2])
			return errors.New("no space left on device")
		}
		f.written += len(data)
		f.appends[path.Base(p)] = append(f.appends[path.Base(p)], len(data))
		f.mu.Unlock()
	}
	return f.MemFS.Append(p, data)
}

func (f *segmentWrites) WriteFile(p string, data []byte) error {
	if strings.HasSuffix(p, ".seg") {
		f.mu.Lock()
		f.whole[path.Base(p)] = max(f.whole[path.Base(p)], len(data))
		f.mu.Unlock()
	}
	return f.MemFS.WriteFile(p, data)
}

func (f *segmentWrites) Rename(from, to string) error {
	f.mu.Lock()
	f.appends[path.Base(to)] = f.appends[path.Base(from)]
	delete(f.appends, path.Base(from))
	f.mu.Unlock()
	return f.MemFS.Rename(from, to)
}

// smallSpills has the test's index spill segments of two blocks or more
// and merge through a buffer of one, so that a small index takes the
// paths of a large one.
func smallSpills(t *testing.T) {
	n, m := spillBytes, mergeBufferSize
	t.Cleanup(func() { spillBytes, mergeBufferSize = n, m })
	spillBytes, mergeBufferSize = 2*blockSize, blockSize
}

// spillDocs are documents long enough to make segments of many blocks.
func spillDocs(n int) []Doc {
	_, vocab := chatCorpus(0)
	docs := storeDocs(n)
	for i := range docs {
		var b strings.Builder
		for k := range 90 {
			b.WriteString(vocab[(i*13+k*11)%len(vocab)] + " ")
		}
		docs[i].Content += " " + b.String()
	}
	return docs
}

// A large new segment (a merge's) goes to the store as bluge makes it, a
// few blocks at a time, and is never held whole to be written: the build's
// memory does not hold twice its largest segment. The index answers as one
// built in memory, and the store it leaves reopens without a rebuild.
func TestSpillStreamsLargeSegments(t *testing.T) {
	smallSpills(t)
	docs := spillDocs(1200)
	fs := newSegmentWrites()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Sources: tree(docs)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(docs); i += 40 {
		if err := x.Put(docs[i:min(i+40, len(docs))]...); err != nil {
			t.Fatal(err)
		}
	}
	sameAnswers(t, "built", answers(t, x), coldAnswers(t, docs))
	closeIndex(t, x)

	streamed := 0
	for name, sizes := range fs.appends {
		if strings.Contains(name, "-part-") {
			t.Errorf("partial file %s left", name)
		}
		total := 0
		for _, n := range sizes {
			total += n
		}
		if len(sizes) > 2 && total > 4*spillBytes {
			streamed++
		}
		if fs.whole[name] != 0 {
			t.Errorf("%s written whole too", name)
		}
	}
	if streamed == 0 {
		t.Fatalf("no segment of more than %d bytes was written in pieces: %v", 4*spillBytes, fs.appends)
	}
	for name, n := range fs.whole {
		if n > spillBytes {
			t.Errorf("%s: a segment of %d bytes was written whole, over %d", name, n, spillBytes)
		}
	}
	reopen(t, fs, docs, "reopened")
}

// When the store refuses a segment's bytes halfway (a full disk), the
// segment stays in memory: the build goes on, answers as before, leaves no
// partial file, says why; the save, once there is room, writes what the
// index holds, and it reopens as built.
func TestSpillKeptInMemoryWhenTheStoreIsFull(t *testing.T) {
	smallSpills(t)
	docs := spillDocs(600)
	fs := newSegmentWrites()
	fs.full = 13 * blockSize // past a few segments, within a merge's
	var log logLines
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Logger: &log, Sources: tree(docs)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(docs); i += 30 {
		if err := x.Put(docs[i:min(i+30, len(docs))]...); err != nil {
			t.Fatal(err)
		}
	}
	sameAnswers(t, "with the store full", answers(t, x), coldAnswers(t, docs))
	log.mu.Lock()
	warned := strings.Join(log.lines, "\n")
	log.mu.Unlock()
	if !strings.Contains(warned, "no space left on device; the segment stays in memory until a save") {
		t.Errorf("no warning of the refused write:\n%s", warned)
	}
	for name := range storeNames(fs) {
		if strings.Contains(name, "-part-") {
			t.Errorf("partial file %s left", name)
		}
	}
	fs.mu.Lock()
	fs.full = 0
	fs.mu.Unlock()
	closeIndex(t, x)
	reopen(t, fs, docs, "reopened")
}
