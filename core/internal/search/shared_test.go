package search

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// Several processes on one store: each test below opens indexes on one
// MemFS as processes open one folder, and checks that a process reading its
// segments from their files keeps answering from what it indexed while the
// others replace the stored index.

// clock is the time of a test: the store's (Store.Now) and its files'.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *clock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// namingFS records every segment written, and every time a name was
// written with other bytes than it held before: a name must always mean
// the same bytes, since other processes read the file by that name.
type namingFS struct {
	*host.MemFS
	mu       sync.Mutex
	written  map[string][]byte
	renamed  []string // names written with other bytes
	segments int      // segment writes
}

func newNamingFS(c *clock) *namingFS {
	fs := &namingFS{MemFS: host.NewMemFS(), written: map[string][]byte{}}
	fs.SetNow(c.ms.Load)
	return fs
}

func (f *namingFS) WriteFile(p string, b []byte) error {
	if strings.HasSuffix(p, ".seg") {
		f.mu.Lock()
		if old, ok := f.written[p]; ok && !bytes.Equal(old, b) {
			f.renamed = append(f.renamed, p)
		}
		f.written[p] = append([]byte(nil), b...)
		f.segments++
		f.mu.Unlock()
	}
	return f.MemFS.WriteFile(p, b)
}

// process is one process's index of a shared store, with the documents it
// holds (its view of the tree, which Store.Sources gives).
type process struct {
	x    *Index
	docs []Doc
	log  *logLines
}

func openProcess(t *testing.T, fs host.FS, c *clock, docs []Doc) *process {
	t.Helper()
	p := &process{docs: slices.Clone(docs), log: &logLines{}}
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Logger: p.log, Now: c.now, Sources: func(add func(Source) error) error {
		return tree(p.docs)(add)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if _, err := x.Sync(sources(p.docs)); err != nil {
		t.Fatal(err)
	}
	p.x = x
	return p
}

// put indexes docs as this process's changes to the tree.
func (p *process) put(t *testing.T, docs ...Doc) {
	t.Helper()
	for _, d := range docs {
		if i := slices.IndexFunc(p.docs, func(e Doc) bool { return e.Path == d.Path }); i >= 0 {
			p.docs[i] = d
		} else {
			p.docs = append(p.docs, d)
		}
	}
	if err := p.x.Put(docs...); err != nil {
		t.Fatal(err)
	}
}

func (p *process) flush(t *testing.T) {
	t.Helper()
	if err := p.x.Flush(); err != nil {
		t.Fatal(err)
	}
}

// check asks every test query and compares with an index built from the
// process's documents alone.
func (p *process) check(t *testing.T, label string) {
	t.Helper()
	sameAnswers(t, label, answers(t, p.x), coldAnswers(t, p.docs))
}

// revised is docs[i] with new words, so that it is indexed again.
func revised(d Doc, round int) Doc {
	d.Content += fmt.Sprintf(" revision%d of the quokka ledger", round)
	return d
}

// One process keeps answering through the snapshot it opened while
// another rewrites the index again and again: merges that drop the first
// one's segments from the manifest, new segments numbered as the ones the
// first reads (both go back to one manifest). It never reads another's
// bytes under one of its names, nor finds a file gone: no reload within
// the grace period.
func TestStoreReaderAcrossOtherSaves(t *testing.T) {
	noCache(t)
	c := newClock()
	fs := newNamingFS(c)
	docs := storeDocs(80)
	closeIndex(t, openProcess(t, fs, c, docs).x)

	writer := openProcess(t, fs, c, docs)
	// A third process saves a segment numbered as the writer's next one
	// will be, and the reader opens its manifest.
	third := openProcess(t, fs, c, docs)
	third.put(t, revised(docs[0], 99))
	closeIndex(t, third.x)
	reader := openProcess(t, fs, c, third.docs)
	reader.check(t, "before")
	// The writer's first save makes the same change to the same document
	// with other words: its segments get the third's numbers.
	writer.put(t, revised(docs[0], 98))
	writer.flush(t)
	reader.check(t, "after the writer's first save")
	for round := range 12 {
		for i := round; i < len(docs); i += 6 {
			writer.put(t, revised(docs[i], round))
		}
		writer.flush(t)
		c.advance(time.Minute / 2)
		reader.check(t, fmt.Sprintf("reader after the writer's save %d", round))
		writer.check(t, fmt.Sprintf("writer after its save %d", round))
		if round%4 == 3 {
			// The reader writes too, its segments numbered from its manifest.
			reader.put(t, revised(docs[round], 100+round))
			reader.flush(t)
			writer.check(t, fmt.Sprintf("writer after the reader's save %d", round))
		}
	}
	if len(fs.renamed) > 0 {
		t.Errorf("segment names written again with other bytes: %v", fs.renamed)
	}
	if w := append(reader.log.warnings(), writer.log.warnings()...); len(w) > 0 {
		t.Errorf("a process reloaded within the grace period: %v", w)
	}
	closeIndex(t, reader.x)
	closeIndex(t, writer.x)
	last := openProcess(t, fs, c, writer.docs)
	last.check(t, "reopened")
}

// Two processes that loaded one manifest save new segments with the same
// bluge id: their files have different names, and each process keeps
// reading its own.
func TestStoreSameNumberedSegments(t *testing.T) {
	noCache(t)
	c := newClock()
	fs := newNamingFS(c)
	docs := storeDocs(30)
	closeIndex(t, openProcess(t, fs, c, docs).x)
	before := storedManifest(t, fs)
	a := openProcess(t, fs, c, docs)
	b := openProcess(t, fs, c, docs)
	a.put(t, Doc{Path: "a/only_a.md", Title: "Written by a", Content: "the aardvark ledger"})
	b.put(t, Doc{Path: "b/only_b.md", Title: "Written by b", Content: "the bandicoot ledger"})
	a.flush(t)
	ma := storedManifest(t, fs)
	b.flush(t)
	mb := storedManifest(t, fs)
	newOf := func(m *manifest) segmentEntry {
		t.Helper()
		for _, s := range m.Segments {
			if !slices.ContainsFunc(before.Segments, func(o segmentEntry) bool { return o.ID == s.ID }) {
				return s
			}
		}
		t.Fatal("no new segment")
		return segmentEntry{}
	}
	sa, sb := newOf(ma), newOf(mb)
	if sa.ID != sb.ID || sa.name() == sb.name() {
		t.Fatalf("new segments %s and %s: want one id, two names", sa.name(), sb.name())
	}
	for _, s := range []segmentEntry{sa, sb} {
		if _, err := fs.Stat(path.Join(testStoreDir, s.name())); err != nil {
			t.Errorf("%s: %v", s.name(), err)
		}
	}
	if len(fs.renamed) > 0 {
		t.Errorf("segment names written again with other bytes: %v", fs.renamed)
	}
	a.check(t, "a")
	b.check(t, "b")
	if r := mustSearch(t, a.x, "bandicoot", 5); len(r.Hits) != 0 {
		t.Errorf("a finds b's document: %+v", r.Hits)
	}
	if r := mustSearch(t, b.x, "aardvark", 5); len(r.Hits) != 0 {
		t.Errorf("b finds a's document: %+v", r.Hits)
	}
}

// storeNames lists the segment files of the store.
func storeNames(fs host.FS) map[string]bool {
	out := map[string]bool{}
	list, _ := fs.ReadDir(testStoreDir)
	for _, de := range list {
		if strings.HasSuffix(de.Name, ".seg") {
			out[de.Name] = true
		}
	}
	return out
}

// A save retires the segment files it stops naming with the time, keeps
// them for retireGrace and removes them at the first save after that;
// files no manifest knows go by their modification time.
func TestStoreRemovesAfterGrace(t *testing.T) {
	c := newClock()
	fs := newNamingFS(c)
	docs := storeDocs(40)
	p := openProcess(t, fs, c, docs)
	p.flush(t)
	first := storeNames(fs)
	legacy := []string{legacyManifest, "000000000001.seg"} // format 1's
	for _, name := range legacy {
		mustWrite(t, fs, testStoreDir+"/"+name, []byte("written by format 1"))
	}
	mustWrite(t, fs, testStoreDir+"/notes.txt", []byte("not the index's"))
	exists := func(name string) bool {
		_, err := fs.Stat(testStoreDir + "/" + name)
		return err == nil
	}

	// Rewrite every document: merges replace the first segments.
	c.advance(time.Minute)
	for i := range docs {
		p.put(t, revised(docs[i], 1))
	}
	p.flush(t)
	m := storedManifest(t, fs)
	retired := map[string]int64{}
	for _, r := range m.Retired {
		retired[r.Name] = r.Since
	}
	gone := 0
	for name := range first {
		if !slices.ContainsFunc(m.Segments, func(s segmentEntry) bool { return s.name() == name }) {
			gone++
			if retired[name] != c.ms.Load() {
				t.Errorf("%s: retired at %d, want now (%d)", name, retired[name], c.ms.Load())
			}
			if !exists(name) {
				t.Errorf("%s removed at once", name)
			}
		}
	}
	if gone == 0 {
		t.Fatal("the rewrite replaced no segment")
	}
	for _, name := range legacy {
		if _, ok := retired[name]; ok || !exists(name) {
			t.Errorf("%s, a file no manifest names, one minute old: retired %v, kept %v; want kept by its time, unlisted", name, ok, exists(name))
		}
	}

	// Written by a process that has not saved yet.
	c.advance(4 * time.Minute)
	orphan := "0000000000ff-0123456789abcdef.seg"
	mustWrite(t, fs, testStoreDir+"/"+orphan, []byte("a new segment"))

	// Within the grace period, later saves keep the retired files, with
	// their time; format 1's files go once as old as the grace period.
	c.advance(retireGrace - 5*time.Minute)
	p.put(t, revised(docs[0], 2))
	p.flush(t)
	for name, since := range retired {
		if !exists(name) {
			t.Errorf("%s removed before the grace period", name)
		}
		if got := storedManifest(t, fs).Retired; !slices.Contains(got, retiredFile{name, since}) {
			t.Errorf("%s: no longer listed as retired at %d: %v", name, since, got)
		}
	}
	for _, name := range legacy {
		if exists(name) {
			t.Errorf("%s kept after the grace period of its time", name)
		}
	}

	// After it, the next save removes them; the orphan is not old enough.
	c.advance(time.Minute)
	p.put(t, revised(docs[1], 3))
	p.flush(t)
	for name := range retired {
		if exists(name) {
			t.Errorf("%s kept after the grace period", name)
		}
	}
	if !exists(orphan) {
		t.Error("the orphan removed within the grace period of its time")
	}
	if !exists("notes.txt") {
		t.Error("a file that is no segment was removed")
	}
	for _, r := range storedManifest(t, fs).Retired {
		if !exists(r.Name) {
			t.Errorf("%s listed as retired, but removed", r.Name)
		}
	}
	c.advance(5 * time.Minute)
	p.put(t, revised(docs[2], 4))
	p.flush(t)
	if exists(orphan) {
		t.Error("the orphan kept after the grace period")
	}
	p.check(t, "after the removals")
	closeIndex(t, p.x)
	q := openProcess(t, fs, c, p.docs)
	if len(q.log.warnings()) != 0 {
		t.Errorf("reopen: %v", q.log.warnings())
	}
	q.check(t, "reopened")
}

// noCache makes every read of a block not read just before go to its file,
// as in an index much larger than the cache.
func noCache(t *testing.T) {
	defer func(n int) { t.Cleanup(func() { cacheBytes = n }) }(cacheBytes)
	cacheBytes = 0
}

// A process that outlives the grace period finds its files removed by
// another's save: it reloads the current index, brings it in step with
// its own view of the tree and answers as before.
func TestStoreReloadsWhenFilesGo(t *testing.T) {
	noCache(t)
	c := newClock()
	fs := newNamingFS(c)
	docs := storeDocs(60)
	closeIndex(t, openProcess(t, fs, c, docs).x)
	old := openProcess(t, fs, c, docs)
	// Its own change, unflushed: the reload must keep it.
	old.put(t, Doc{Path: "old/own.md", Title: "Old's own", Content: "the wombat ledger"})
	other := openProcess(t, fs, c, docs)
	for i := range docs {
		other.put(t, revised(docs[i], 1))
	}
	other.put(t, Doc{Path: "other/own.md", Title: "Other's own", Content: "the platypus ledger"})
	other.flush(t)
	c.advance(retireGrace + time.Minute)
	other.put(t, revised(docs[0], 2))
	other.flush(t)
	if len(old.log.warnings()) != 0 {
		t.Fatalf("warnings before the loss: %v", old.log.warnings())
	}
	old.check(t, "after its files went")
	if w := old.log.warnings(); len(w) != 1 || !strings.Contains(w[0], "reloaded the current index") {
		t.Errorf("warnings %v, want one saying the index was reloaded", w)
	}
	if r := mustSearch(t, old.x, "wombat", 5); len(r.Hits) != 1 {
		t.Errorf("its unflushed document after the reload: %+v", r.Hits)
	}
	other.check(t, "other")
	// Its flush writes its own state, complete.
	old.flush(t)
	closeIndex(t, old.x)
	again := openProcess(t, fs, c, old.docs)
	again.check(t, "reopened")
	if len(again.log.warnings()) != 0 {
		t.Errorf("reopen: %v", again.log.warnings())
	}
}

// A segment file deleted, cut short or overwritten under a running index:
// the read that finds it fails (nothing of it is decoded), and the index
// rebuilds from the tree (the current manifest names the damaged file).
// Without Store.Sources the query fails with ErrSegmentLost instead.
func TestStoreSegmentDamagedUnderAReader(t *testing.T) {
	damages := []struct {
		name   string
		damage func(fs *host.MemFS, p string)
	}{
		{"deleted", func(fs *host.MemFS, p string) { _ = fs.Remove(p) }},
		{"truncated", func(fs *host.MemFS, p string) {
			b, _ := fs.ReadFile(p)
			_ = fs.WriteFile(p, b[:len(b)/2])
		}},
		{"overwritten", func(fs *host.MemFS, p string) {
			b, _ := fs.ReadFile(p)
			for i := range b {
				b[i] ^= 0x5a
			}
			_ = fs.WriteFile(p, b)
		}},
	}
	noCache(t)
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			c := newClock()
			fs := newNamingFS(c)
			docs := storeDocs(60)
			closeIndex(t, openProcess(t, fs, c, docs).x)
			p := openProcess(t, fs, c, docs)
			x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Now: c.now})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			for name := range storeNames(fs) {
				d.damage(fs.MemFS, path.Join(testStoreDir, name))
			}
			p.check(t, "after the damage")
			if w := p.log.warnings(); len(w) != 1 || !strings.Contains(w[0], "rebuilding it from the tree") {
				t.Errorf("warnings %v, want one about the rebuild", w)
			}
			var lost error
			for _, q := range storeQueries {
				if _, err := x.Search(q, 10); err != nil {
					lost = err
					break
				}
			}
			if !errors.Is(lost, ErrSegmentLost) {
				t.Errorf("without sources: %v, want ErrSegmentLost", lost)
			}
			closeIndex(t, p.x)
			q := openProcess(t, fs, c, docs)
			if n := q.x.Count(); n != len(docs) || len(q.log.warnings()) != 0 {
				t.Errorf("reopen after the rebuild was saved: %d documents, warnings %v", n, q.log.warnings())
			}
			q.check(t, "reopened")
		})
	}
}

// A flush whose index reads a file that is gone reloads first: the
// manifest it writes names only files that are there.
func TestStoreFlushAfterLoss(t *testing.T) {
	noCache(t)
	c := newClock()
	fs := newNamingFS(c)
	docs := storeDocs(40)
	closeIndex(t, openProcess(t, fs, c, docs).x)
	p := openProcess(t, fs, c, docs)
	for name := range storeNames(fs) {
		_ = fs.Remove(path.Join(testStoreDir, name))
	}
	p.put(t, Doc{Path: "new/entry.md", Title: "New entry", Content: "the echidna ledger"})
	p.flush(t)
	for _, s := range storedManifest(t, fs).Segments {
		if !storeNames(fs)[s.name()] {
			t.Errorf("the manifest names %s, which is not there", s.name())
		}
	}
	closeIndex(t, p.x)
	q := openProcess(t, fs, c, p.docs)
	if len(q.log.warnings()) != 0 {
		t.Errorf("reopen: %v", q.log.warnings())
	}
	q.check(t, "reopened")
}

// segmentReads counts how a stored index's segments are read.
type segmentReads struct {
	*host.MemFS
	whole  atomic.Int64 // ReadFile of a segment
	ranged atomic.Int64 // bytes read by ReadAt
}

func (f *segmentReads) ReadFile(p string) ([]byte, error) {
	if strings.HasSuffix(p, ".seg") {
		f.whole.Add(1)
	}
	return f.MemFS.ReadFile(p)
}

func (f *segmentReads) ReadAt(p string, buf []byte, off int64) (int, error) {
	n, err := f.MemFS.ReadAt(p, buf, off)
	f.ranged.Add(int64(n))
	return n, err
}

// A file system that reads ranges has a stored index's segments read where
// queries need them, never whole: an open reads a fraction of them. The
// answers are those of segments held in memory, through writes, merges and
// flushes; large new segments (spillBytes) go to the store as they are
// made.
func TestStoreReadsSegmentsByRange(t *testing.T) {
	// Long enough for segments of many blocks.
	_, vocab := chatCorpus(0)
	long := func(docs []Doc) []Doc {
		for i := range docs {
			var b strings.Builder
			for k := range 120 {
				b.WriteString(vocab[(i*31+k*7)%len(vocab)] + " ")
			}
			docs[i].Content += " " + b.String()
		}
		return docs
	}
	docs := long(storeDocs(300))
	mem := buildStored(t, docs)
	total := 0
	for name := range storeNames(mem) {
		b, _ := mem.ReadFile(path.Join(testStoreDir, name))
		total += len(b)
	}
	fs := &segmentReads{MemFS: mem}
	x, st := openStore(t, fs, nil, docs)
	if st != (api.IndexStats{Reused: len(docs)}) {
		t.Fatalf("sync: %+v", st)
	}
	if fs.whole.Load() != 0 || fs.ranged.Load() == 0 || fs.ranged.Load() >= int64(total) {
		t.Fatalf("open: segments read whole %d times, %d of their %d bytes by range", fs.whole.Load(), fs.ranged.Load(), total)
	}
	whole, _ := openStore(t, wholeReads{mem}, nil, docs)
	sameAnswers(t, "read by range", answers(t, x), answers(t, whole))
	closeIndex(t, whole)

	defer func(n int) { spillBytes = n }(spillBytes)
	spillBytes = 4 << 10
	more := long(storeDocs(500))[300:500] // without its context file, which docs has
	written := len(storeNames(mem))
	for i := 0; i < len(more); i += 7 {
		if err := x.Put(more[i:min(i+7, len(more))]...); err != nil {
			t.Fatal(err)
		}
		if i%21 == 0 {
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		answers(t, x) // every segment a snapshot holds can still be read
	}
	all := append(append([]Doc(nil), docs...), more...)
	sameAnswers(t, "after merges", answers(t, x), coldAnswers(t, all))
	if fs.whole.Load() != 0 {
		t.Errorf("segments read whole %d times", fs.whole.Load())
	}
	_, _, segs, _, _ := x.store.dir.state()
	spilled := 0
	for _, it := range segs {
		if it.file != nil {
			spilled++
		}
	}
	if spilled == 0 || len(storeNames(mem)) <= written {
		t.Errorf("no new segment was written as it was made (%d read from files)", spilled)
	}
	closeIndex(t, x)
	reopen(t, fs, all, "reopened after merges")
}

// A cold build spills its large segments to the store as bluge makes them
// and merges them into larger ones: the files of segments merged away
// before any save named them are this index's alone, and go as soon as
// its reader is past them, not ten minutes after the build. After a build
// and a close, the store holds the manifest's segments and nothing else.
func TestStoreBuildLeavesNoMergedSpills(t *testing.T) {
	defer func(n int) { spillBytes = n }(spillBytes)
	spillBytes = 2 << 10
	_, vocab := chatCorpus(0)
	docs := storeDocs(400)
	for i := range docs {
		var b strings.Builder
		for k := range 60 {
			b.WriteString(vocab[(i*17+k*5)%len(vocab)] + " ")
		}
		docs[i].Content += " " + b.String()
	}
	mem := host.NewMemFS()
	x, err := Open(Options{}, Store{FS: mem, Dir: testStoreDir, Sources: tree(docs)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(docs); i += 8 {
		if err := x.Put(docs[i:min(i+8, len(docs))]...); err != nil {
			t.Fatal(err)
		}
	}
	spilled := len(x.store.dir.inUse())
	closeIndex(t, x)
	m := storedManifest(t, mem)
	named := map[string]bool{}
	for _, seg := range m.Segments {
		named[seg.name()] = true
	}
	for name := range storeNames(mem) {
		if !named[name] {
			t.Errorf("%s is on disk, named by no manifest (%d retired)", name, len(m.Retired))
		}
	}
	if spilled == 0 {
		t.Fatal("no segment spilled during the build")
	}
	reopen(t, mem, docs, "reopened")
}

// Two processes building the same documents into one store at once make
// segments of the same ids and bytes; each removes the spilled files it
// merges away while the other still builds. Neither finds a file of its
// own gone, and the store they leave opens without a rebuild. (What keeps
// them apart is the tag in a spilled file's name, segmentEntry.name.)
func TestStoreTwoBuildsOfTheSameDocuments(t *testing.T) {
	defer func(n int) { spillBytes = n }(spillBytes)
	spillBytes = 2 << 10
	noCache(t) // every query reads the files
	docs := storeDocs(150)
	mem := &missingReads{MemFS: host.NewMemFS()}
	// Files get the time they were written, as on disk: a save leaves the
	// files of others it knows no manifest of for the grace period.
	mem.SetNow(func() int64 { return time.Now().UnixMilli() })
	var xs [2]*Index
	for k := range xs {
		x, err := Open(Options{}, Store{FS: mem, Dir: testStoreDir, Sources: tree(docs)})
		if err != nil {
			t.Fatal(err)
		}
		xs[k] = x
	}
	// In turns, batch by batch: the two make their first segments alike.
	for i := 0; i < len(docs); i += 6 {
		for _, x := range xs {
			if err := x.Put(docs[i:min(i+6, len(docs))]...); err != nil {
				t.Fatal(err)
			}
			answers(t, x)
		}
	}
	for _, x := range xs {
		closeIndex(t, x)
	}
	if n := mem.missing.Load(); n != 0 {
		t.Errorf("%d reads found their segment file removed", n)
	}
	reopen(t, mem, docs, "after two builds")
}

// missingReads counts the range reads of segment files that are not there.
type missingReads struct {
	*host.MemFS
	missing atomic.Int64
}

func (f *missingReads) ReadAt(p string, buf []byte, off int64) (int, error) {
	n, err := f.MemFS.ReadAt(p, buf, off)
	if errors.Is(err, host.ErrNotFound) && strings.HasSuffix(p, ".seg") {
		f.missing.Add(1)
	}
	return n, err
}

// Queries running at once over segments whose files went before any query
// read their dictionaries: each returns (an answer or the loss), none
// waits forever. ice reads a dictionary under its segment's lock and
// leaves the lock held when that read fails; a query waiting on it held
// the index's read lock, which the reload answering the loss waits for.
func TestStoreConcurrentQueriesOverLostSegments(t *testing.T) {
	noCache(t)
	c := newClock()
	fs := newNamingFS(c)
	docs := storeDocs(60)
	closeIndex(t, openProcess(t, fs, c, docs).x)
	for round := range 5 {
		x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		saved := map[string][]byte{}
		for name := range storeNames(fs) {
			p := path.Join(testStoreDir, name)
			b, _ := fs.ReadFile(p)
			saved[p] = b
			_ = fs.Remove(p)
		}
		done := make(chan error, 8)
		for i := range 8 {
			go func() {
				_, err := x.Search(fmt.Sprintf("ledger entry %d", i), 5)
				done <- err
			}()
		}
		for range 8 {
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, ErrSegmentLost) {
					t.Errorf("round %d: %v, want an answer or ErrSegmentLost", round, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("round %d: queries over lost segments still waiting after a minute", round)
			}
		}
		_ = x.Abandon()
		for p, b := range saved {
			if err := fs.WriteFile(p, b); err != nil {
				t.Fatal(err)
			}
		}
	}
}
