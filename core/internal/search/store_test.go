package search

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/binrec"
)

const testStoreDir = ".arbor/index"

// logLines records log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+": "+msg)
}

func (l *logLines) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.HasPrefix(s, "warn: ") {
			out = append(out, s)
		}
	}
	return out
}

// storeDocs is a corpus big enough to need several segments and to make
// BM25 statistics matter.
func storeDocs(n int) []Doc {
	topics := []string{"invoice retry", "card expiry reminder", "kubernetes deploy", "korean tokenizer 가치관", "lisbon restaurants"}
	var docs []Doc
	for i := range n {
		t := topics[i%len(topics)]
		docs = append(docs, Doc{
			Path:     fmt.Sprintf("domain%d/topic%d/entry_%03d.md", i%3, i%7, i),
			Title:    fmt.Sprintf("%s note %d", t, i),
			Summary:  fmt.Sprintf("what we know about %s, item %d", t, i),
			Content:  strings.Repeat(t+" details and decisions. ", 1+i%4) + fmt.Sprintf("unique%d", i),
			Tags:     []string{strings.Fields(t)[0]},
			Keywords: []string{fmt.Sprintf("k%d", i%11)},
		})
	}
	docs = append(docs, Doc{Path: "domain0/context.md", Kind: "context", Title: "Domain zero", Content: "Billing and invoices live here."})
	return docs
}

var storeQueries = []string{"invoice retry", "card", "kubernetes deploy note", "가치관", "lisbon", "unique7", "billing invoices", "retr", "decisons"}

// openStore opens (and registers the closing of) an index on fs and syncs docs.
func openStore(t *testing.T, fs host.FS, log host.Logger, docs []Doc) (*Index, api.IndexStats) {
	t.Helper()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Logger: log, Sources: tree(docs)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	st, err := x.Sync(sources(docs))
	if err != nil {
		t.Fatal(err)
	}
	return x, st
}

// sources gives docs to Sync without keys: each is built and compared by
// its content hash.
func sources(docs []Doc) []Source {
	out := make([]Source, len(docs))
	for i, d := range docs {
		out[i] = Source{Path: d.Path, Doc: func(string) Doc { return d }}
	}
	return out
}

// tree is Store.Sources for a tree of docs.
func tree(docs []Doc) func(func(Source) error) error {
	return func(add func(Source) error) error {
		for _, s := range sources(docs) {
			if err := add(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// answers runs every test query.
func answers(t *testing.T, x *Index) map[string]Result {
	t.Helper()
	out := map[string]Result{}
	for _, q := range storeQueries {
		out[q] = mustSearch(t, x, q, 20)
	}
	return out
}

// coldAnswers are the answers of an in-memory index holding docs.
func coldAnswers(t *testing.T, docs []Doc) map[string]Result {
	t.Helper()
	return answers(t, newIndex(t, Options{}, docs...))
}

func sameAnswers(t *testing.T, label string, got, want map[string]Result) {
	t.Helper()
	for _, q := range storeQueries {
		if !reflect.DeepEqual(got[q], want[q]) {
			t.Errorf("%s: %q:\n got %+v\nwant %+v", label, q, got[q], want[q])
		}
	}
}

// reopen opens the store in fs again over docs, and checks that it reuses
// every document and answers as a cold build of them does; label names
// the moment in failures.
func reopen(t *testing.T, fs host.FS, docs []Doc, label string) *Index {
	t.Helper()
	var log logLines
	y, st := openStore(t, fs, &log, docs)
	if want := (api.IndexStats{Reused: len(docs)}); st != want {
		t.Fatalf("%s: sync: %+v, want %+v; %v", label, st, want, log.lines)
	}
	sameAnswers(t, label, answers(t, y), coldAnswers(t, docs))
	return y
}

func closeIndex(t *testing.T, x *Index) {
	t.Helper()
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
}

// buildStored writes a stored index of docs into a new MemFS, in several
// batches so that it has several segments and deletions.
func buildStored(t *testing.T, docs []Doc) *host.MemFS {
	t.Helper()
	fs := host.NewMemFS()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(docs); i += 10 {
		if err := x.Put(docs[i:min(i+10, len(docs))]...); err != nil {
			t.Fatal(err)
		}
	}
	// Re-put some documents so that older segments hold deleted copies.
	if err := x.Put(docs[3], docs[17]); err != nil {
		t.Fatal(err)
	}
	closeIndex(t, x)
	return fs
}

func storeFiles(fs *host.MemFS) []string {
	var out []string
	for p := range fs.Files() {
		if strings.HasPrefix(p, testStoreDir+"/") {
			out = append(out, strings.TrimPrefix(p, testStoreDir+"/"))
		}
	}
	sort.Strings(out)
	return out
}

func TestStoreReopenReusesEverything(t *testing.T) {
	docs := storeDocs(60)
	fs := buildStored(t, docs)
	if files := storeFiles(fs); len(files) < 3 || !slices.Contains(files, manifestName) || !slices.Contains(files, summaryName) {
		t.Fatalf("stored files %v: want segments, %s and %s", files, manifestName, summaryName)
	}
	log := &logLines{}
	x, st := openStore(t, fs, log, docs)
	if want := (api.IndexStats{Reused: len(docs)}); st != want {
		t.Fatalf("sync after reopen: %+v, want %+v", st, want)
	}
	if w := log.warnings(); len(w) != 0 {
		t.Fatalf("warnings: %v", w)
	}
	if x.Count() != len(docs) {
		t.Fatalf("count %d, want %d", x.Count(), len(docs))
	}
	sameAnswers(t, "reopened", answers(t, x), coldAnswers(t, docs))
}

func TestStoreReopenAppliesChanges(t *testing.T) {
	docs := storeDocs(60)
	fs := buildStored(t, docs)

	changed := append([]Doc(nil), docs...)
	changed[5].Content = "the zeppelin hangar was moved to the north field"
	changed[len(changed)-1].Content = "Billing, invoices and the zeppelin budget live here." // the context.md
	gone := changed[9].Path
	changed = append(changed[:9], changed[10:]...)
	changed = append(changed, Doc{Path: "domain9/new_entry.md", Title: "Zeppelin maintenance", Content: "inspect the zeppelin envelope monthly"})

	x, st := openStore(t, fs, nil, changed)
	if want := (api.IndexStats{Reused: len(docs) - 3, Indexed: 3, Removed: 1}); st != want {
		t.Fatalf("sync: %+v, want %+v", st, want)
	}
	got := answers(t, x)
	sameAnswers(t, "changed", got, coldAnswers(t, changed))
	r := mustSearch(t, x, "zeppelin", 10)
	var paths []string
	for _, h := range r.Hits {
		paths = append(paths, h.Path)
	}
	sort.Strings(paths)
	want := []string{"domain0/context.md", changed[5].Path, "domain9/new_entry.md"}
	sort.Strings(want)
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("zeppelin: %v, want %v", paths, want)
	}
	for _, q := range []string{"unique9", "item 9"} {
		for _, h := range mustSearch(t, x, q, 100).Hits {
			if h.Path == gone {
				t.Errorf("%q still finds the removed %s", q, gone)
			}
		}
	}

	// The changes persist too: a third open reuses everything.
	closeIndex(t, x)
	_, st = openStore(t, fs, nil, changed)
	if want := (api.IndexStats{Reused: len(changed)}); st != want {
		t.Fatalf("third open: %+v, want %+v", st, want)
	}
}

func TestStoreRebuildsDamagedIndex(t *testing.T) {
	docs := storeDocs(40)
	want := coldAnswers(t, docs)
	firstSegment := func(fs *host.MemFS) string {
		for _, f := range storeFiles(fs) {
			if strings.HasSuffix(f, ".seg") {
				return testStoreDir + "/" + f
			}
		}
		t.Fatal("no segment file")
		return ""
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, fs *host.MemFS)
		warns  bool
	}{
		{"manifest is not a manifest", func(t *testing.T, fs *host.MemFS) {
			mustWrite(t, fs, testStoreDir+"/"+manifestName, []byte("{\"format\":1,"))
		}, true},
		{"manifest from another format", func(t *testing.T, fs *host.MemFS) {
			rewriteManifest(t, fs, func(m *manifest) []byte { return m.encodeAs(formatVersion+1, schemaFP) })
		}, true},
		{"manifest from another schema", func(t *testing.T, fs *host.MemFS) {
			rewriteManifest(t, fs, func(m *manifest) []byte { return m.encodeAs(formatVersion, "0123") })
		}, true},
		{"manifest damaged", func(t *testing.T, fs *host.MemFS) {
			rewriteManifest(t, fs, func(m *manifest) []byte {
				b := m.encode()
				b[len(b)-3] ^= 0x10 // a field length: only the checksum tells
				return b
			})
		}, true},
		{"manifest cut short", func(t *testing.T, fs *host.MemFS) {
			rewriteManifest(t, fs, func(m *manifest) []byte { b := m.encode(); return b[:len(b)-1] })
		}, true},
		{"only a manifest of format 1", func(t *testing.T, fs *host.MemFS) {
			for _, f := range storeFiles(fs) {
				if err := fs.Remove(testStoreDir + "/" + f); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, fs, testStoreDir+"/"+legacyManifest, []byte(`{"format":1,"docs":[]}`))
		}, true},
		{"snapshot damaged", func(t *testing.T, fs *host.MemFS) {
			editManifest(t, fs, func(m *manifest) { m.Snapshot[len(m.Snapshot)/2] ^= 0x40 })
		}, true},
		{"manifest lists fewer documents", func(t *testing.T, fs *host.MemFS) {
			editManifest(t, fs, func(m *manifest) { m.Docs = m.Docs[1:] })
		}, true},
		{"documents file missing", func(t *testing.T, fs *host.MemFS) {
			if err := fs.Remove(testStoreDir + "/" + storedBase(t, fs)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"documents file damaged", func(t *testing.T, fs *host.MemFS) {
			p := testStoreDir + "/" + storedBase(t, fs)
			b, _ := fs.ReadFile(p)
			b[len(b)-3] ^= 0x10
			mustWrite(t, fs, p, b)
		}, true},
		{"segment truncated", func(t *testing.T, fs *host.MemFS) {
			p := firstSegment(fs)
			b, _ := fs.ReadFile(p)
			mustWrite(t, fs, p, b[:len(b)/2])
		}, true},
		{"segment corrupt", func(t *testing.T, fs *host.MemFS) {
			// Every block: the open reads the last, where bluge's footer is.
			p := firstSegment(fs)
			b, _ := fs.ReadFile(p)
			for i := 0; i < len(b); i += blockSize {
				b[min(i+blockSize, len(b))-5] ^= 0xff
			}
			mustWrite(t, fs, p, b)
		}, true},
		{"segment missing", func(t *testing.T, fs *host.MemFS) {
			if err := fs.Remove(firstSegment(fs)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"index folder deleted", func(t *testing.T, fs *host.MemFS) {
			for _, f := range storeFiles(fs) {
				if err := fs.Remove(testStoreDir + "/" + f); err != nil {
					t.Fatal(err)
				}
			}
			if err := fs.Remove(testStoreDir); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := buildStored(t, docs)
			c.damage(t, fs)
			log := &logLines{}
			x, st := openStore(t, fs, log, docs)
			if want := (api.IndexStats{Indexed: len(docs)}); st != want {
				t.Errorf("sync: %+v, want a rebuild %+v", st, want)
			}
			if w := log.warnings(); c.warns != (len(w) == 1) {
				t.Errorf("warnings %q, want one: %v", w, c.warns)
			}
			sameAnswers(t, c.name, answers(t, x), want)
			// The rebuilt index replaces the damaged one.
			closeIndex(t, x)
			log = &logLines{}
			_, st = openStore(t, fs, log, docs)
			if want := (api.IndexStats{Reused: len(docs)}); st != want || len(log.warnings()) != 0 {
				t.Errorf("after the rebuild: %+v, warnings %v; want %+v and none", st, log.warnings(), want)
			}
		})
	}
}

func mustWrite(t *testing.T, fs host.FS, p string, b []byte) {
	t.Helper()
	if err := fs.WriteFile(p, b); err != nil {
		t.Fatal(err)
	}
}

// storedManifest reads the manifest stored in fs whole (readManifest).
func storedManifest(t *testing.T, fs host.FS) *manifest {
	t.Helper()
	m, err := readManifest(fs, testStoreDir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// storedBase is the name of the documents file the stored manifest names.
func storedBase(t *testing.T, fs host.FS) string {
	t.Helper()
	raw, err := fs.ReadFile(testStoreDir + "/" + manifestName)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeHeads(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m.Base.Name
}

// editManifest changes the stored manifest and writes it back, valid.
func editManifest(t *testing.T, fs *host.MemFS, edit func(*manifest)) {
	t.Helper()
	rewriteManifest(t, fs, func(m *manifest) []byte { edit(m); return m.encode() })
}

// rewriteManifest replaces the stored manifest with what encode makes of it.
func rewriteManifest(t *testing.T, fs *host.MemFS, encode func(*manifest) []byte) {
	t.Helper()
	mustWrite(t, fs, testStoreDir+"/"+manifestName, encode(storedManifest(t, fs)))
}

// failingFS fails writes to one file name, counting the writes it lets through.
type failingFS struct {
	*host.MemFS
	fail   string
	writes []string
}

func (f *failingFS) WriteFile(p string, b []byte) error {
	if strings.HasSuffix(p, "/"+f.fail) {
		return fmt.Errorf("write %s: %w", p, host.ErrIO)
	}
	f.writes = append(f.writes, p)
	return f.MemFS.WriteFile(p, b)
}

func TestStoreCrashBeforeManifestKeepsOldIndex(t *testing.T) {
	docs := storeDocs(30)
	fs := buildStored(t, docs)
	before := fs.Files()[testStoreDir+"/"+manifestName]

	// New segments get written, the manifest write fails (as a crash there
	// would leave it): the old manifest and all its segments must remain.
	ffs := &failingFS{MemFS: fs, fail: manifestName}
	x, st := openStore(t, ffs, nil, docs)
	if st.Reused != len(docs) {
		t.Fatalf("sync: %+v", st)
	}
	changed := append([]Doc(nil), docs...)
	changed[0].Content = "the quokka enclosure"
	if err := x.Put(changed[0]); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err == nil || !errors.Is(err, host.ErrIO) {
		t.Fatalf("flush: %v, want the injected i/o error", err)
	}
	if len(ffs.writes) == 0 {
		t.Fatal("flush wrote no segment before the manifest")
	}
	log := &logLines{}
	x.store.Logger = log
	closeIndex(t, x)
	if len(log.warnings()) != 1 {
		t.Errorf("close after a failed save: warnings %v, want one", log.warnings())
	}
	if after := fs.Files()[testStoreDir+"/"+manifestName]; string(after) != string(before) {
		t.Fatal("the manifest changed although its write failed")
	}

	y, st := openStore(t, fs, nil, changed)
	if want := (api.IndexStats{Reused: len(docs) - 1, Indexed: 1}); st != want {
		t.Fatalf("reopen: %+v, want %+v", st, want)
	}
	if r := mustSearch(t, y, "quokka", 5); len(r.Hits) != 1 || r.Hits[0].Path != docs[0].Path {
		t.Errorf("quokka: %+v", r.Hits)
	}
	sameAnswers(t, "after crash", answers(t, y), coldAnswers(t, changed))
}

func TestStoreFlushWritesOnlyChanges(t *testing.T) {
	docs := storeDocs(30)
	fs := buildStored(t, docs)
	ffs := &failingFS{MemFS: fs}
	x, _ := openStore(t, ffs, nil, docs)
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	closeIndex(t, x)
	if len(ffs.writes) != 0 {
		t.Fatalf("an unchanged index wrote %v", ffs.writes)
	}

	// Many small batches (as curate makes), with flushes in between: bluge
	// merges segments, and the store must end up with exactly the segments
	// its manifest names.
	y, _ := openStore(t, fs, nil, docs)
	for i := range 25 {
		d := docs[i]
		d.Content += fmt.Sprintf(" revision %d", i)
		docs[i] = d
		if err := y.Put(d); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			if err := y.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	closeIndex(t, y)
	// The segments the saves replaced stay for retireGrace, listed with
	// the time they were retired (TestStoreRemovesAfterGrace).
	m := storedManifest(t, fs)
	var want []string
	for _, s := range m.Segments {
		want = append(want, s.name())
	}
	for _, r := range m.Retired {
		want = append(want, r.Name)
	}
	want = append(want, manifestName, summaryName, storedBase(t, fs))
	sort.Strings(want)
	if got := storeFiles(fs); !reflect.DeepEqual(got, want) {
		t.Errorf("stored files %v, want %v", got, want)
	}
	z, st := openStore(t, fs, nil, docs)
	if st != (api.IndexStats{Reused: len(docs)}) {
		t.Fatalf("reopen: %+v", st)
	}
	sameAnswers(t, "after merges", answers(t, z), coldAnswers(t, docs))
}

func TestStoreEmpty(t *testing.T) {
	fs := host.NewMemFS()
	x, st := openStore(t, fs, nil, nil)
	if st != (api.IndexStats{}) {
		t.Fatalf("sync: %+v", st)
	}
	closeIndex(t, x)
	if files := storeFiles(fs); len(files) != 0 {
		t.Fatalf("an empty, unchanged index wrote %v", files)
	}
	// Documents added, then all removed: the stored index is empty but valid.
	y, _ := openStore(t, fs, nil, storeDocs(5))
	closeIndex(t, y)
	log := &logLines{}
	z, st := openStore(t, fs, log, nil)
	if st != (api.IndexStats{Removed: 6}) || z.Count() != 0 {
		t.Fatalf("sync: %+v, count %d", st, z.Count())
	}
	closeIndex(t, z)
	_, st = openStore(t, fs, log, nil)
	if st != (api.IndexStats{}) || len(log.warnings()) != 0 {
		t.Fatalf("empty reopen: %+v, warnings %v", st, log.warnings())
	}
}

// keyedSources gives docs to Sync keyed by keys[path] (the document's own
// hash when absent), counting the documents Sync builds.
func keyedSources(docs []Doc, keys map[string]string, built *[]string) []Source {
	out := make([]Source, len(docs))
	for i, d := range docs {
		k, ok := keys[d.Path]
		if !ok {
			k = "k" + docHash(d)
		}
		out[i] = Source{Path: d.Path, Key: k, Doc: func(string) Doc {
			*built = append(*built, d.Path)
			return d
		}}
	}
	return out
}

func syncKeyed(t *testing.T, fs host.FS, docs []Doc, keys map[string]string) (*Index, api.IndexStats, []string) {
	t.Helper()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	var built []string
	st, err := x.Sync(keyedSources(docs, keys, &built))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(built)
	return x, st, built
}

func TestStoreSyncSkipsUnchangedKeys(t *testing.T) {
	docs := storeDocs(30)
	fs := host.NewMemFS()
	x, st, built := syncKeyed(t, fs, docs, nil)
	if st != (api.IndexStats{Indexed: len(docs)}) || len(built) != len(docs) {
		t.Fatalf("first sync: %+v, built %d", st, len(built))
	}
	closeIndex(t, x)

	// Same keys: nothing is built.
	x, st, built = syncKeyed(t, fs, docs, nil)
	if st != (api.IndexStats{Reused: len(docs)}) || len(built) != 0 {
		t.Fatalf("same keys: %+v, built %v", st, built)
	}
	closeIndex(t, x)

	// A new key for the same document (a file rewritten with the same
	// meaning): built, not re-analyzed, and its new key is stored.
	keys := map[string]string{docs[2].Path: "other"}
	x, st, built = syncKeyed(t, fs, docs, keys)
	if st != (api.IndexStats{Reused: len(docs)}) || !reflect.DeepEqual(built, []string{docs[2].Path}) {
		t.Fatalf("new key, same document: %+v, built %v", st, built)
	}
	closeIndex(t, x)
	x, st, built = syncKeyed(t, fs, docs, keys)
	if st != (api.IndexStats{Reused: len(docs)}) || len(built) != 0 {
		t.Fatalf("after storing the new key: %+v, built %v", st, built)
	}

	// Put drops the key: the next Sync builds that document and compares it
	// by hash; a changed key and content is re-analyzed.
	if err := x.Put(docs[4]); err != nil {
		t.Fatal(err)
	}
	closeIndex(t, x)
	changed := append([]Doc(nil), docs...)
	changed[7].Content = "the narwhal migration"
	keys[changed[7].Path] = "changed"
	x, st, built = syncKeyed(t, fs, changed, keys)
	want := []string{docs[4].Path, docs[7].Path}
	sort.Strings(want)
	if st != (api.IndexStats{Reused: len(docs) - 1, Indexed: 1}) || !reflect.DeepEqual(built, want) {
		t.Fatalf("after a put and a change: %+v, built %v, want %v", st, built, want)
	}
	if r := mustSearch(t, x, "narwhal", 5); len(r.Hits) != 1 || r.Hits[0].Path != docs[7].Path {
		t.Errorf("narwhal: %+v", r.Hits)
	}
	sameAnswers(t, "keyed", answers(t, x), coldAnswers(t, changed))
}

func TestStoreSyncChecksBuiltPath(t *testing.T) {
	x, err := Open(Options{}, Store{FS: host.NewMemFS(), Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIndex(t, x)
	_, err = x.Sync([]Source{{Path: "a.md", Key: "k", Doc: func(string) Doc { return Doc{Path: "b.md", Title: "B"} }}})
	if err == nil || !strings.Contains(err.Error(), `"a.md"`) {
		t.Fatalf("sync of a source building another path: %v", err)
	}
}

// Documents stored without source keys (put, not synced) are used as they
// are: built and compared by hash, not rebuilt, and the keys are stored at
// the next flush.
func TestStoreManifestWithoutKeys(t *testing.T) {
	docs := storeDocs(20)
	fs := host.NewMemFS()
	x, _, _ := syncKeyed(t, fs, docs, nil)
	closeIndex(t, x)
	if st, err := ReadStored(fs, testStoreDir); err != nil || st.Keys[docs[0].Path] == "" {
		t.Fatalf("the manifest stores no keys: %v %v", st.Keys, err)
	}
	editManifest(t, fs, func(m *manifest) {
		for i := range m.Docs {
			m.Docs[i].Key = ""
		}
	})
	log := &logLines{}
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	var built []string
	st, err := x.Sync(keyedSources(docs, nil, &built))
	if err != nil {
		t.Fatal(err)
	}
	if st != (api.IndexStats{Reused: len(docs)}) || len(built) != len(docs) || len(log.warnings()) != 0 {
		t.Fatalf("manifest without keys: %+v, built %d, warnings %v", st, len(built), log.warnings())
	}
	closeIndex(t, x)
	_, st, built = syncKeyed(t, fs, docs, nil)
	if st != (api.IndexStats{Reused: len(docs)}) || len(built) != 0 {
		t.Fatalf("after the keys were stored: %+v, built %v", st, built)
	}
}

// A flush writes the documents that changed since the stored documents
// file, in the manifest, and leaves the file alone; past
// binrec.CompactAt of them it writes a new documents file, and the one it
// replaces is retired as a segment is. Every open answers as an index
// built afresh.
func TestStoreDocumentsDelta(t *testing.T) {
	docs := storeDocs(200)
	fs := buildStored(t, docs)
	base := storedBase(t, fs)
	ffs := &failingFS{MemFS: fs}
	x, _ := openStore(t, ffs, nil, docs)
	limit := binrec.CompactAt(len(docs))
	for i := 0; ; i++ {
		ffs.writes = nil
		switch i % 3 {
		case 0: // a change
			d := &docs[i%len(docs)]
			d.Content += fmt.Sprintf(" revision %d", i)
			if err := x.Put(*d); err != nil {
				t.Fatal(err)
			}
		case 1: // a new document
			d := storeDocs(1)[0]
			d.Path = fmt.Sprintf("added/a%03d.md", i)
			docs = append(docs, d)
			if err := x.Put(d); err != nil {
				t.Fatal(err)
			}
		case 2: // a removal
			p := docs[0].Path
			docs = docs[1:]
			if err := x.Delete(p); err != nil {
				t.Fatal(err)
			}
		}
		changed := len(x.store.since)
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
		var wroteDocs bool
		for _, w := range ffs.writes {
			wroteDocs = wroteDocs || strings.HasSuffix(w, docsSuffix)
		}
		if changed <= limit {
			if wroteDocs || storedBase(t, fs) != base {
				t.Fatalf("flush %d of %d changes (limit %d) wrote %v", i, changed, limit, ffs.writes)
			}
			if i%20 == 0 {
				closeIndex(t, reopen(t, fs, docs, fmt.Sprintf("after flush %d", i)))
			}
			continue
		}
		if !wroteDocs || storedBase(t, fs) == base {
			t.Fatalf("flush %d of %d changes (limit %d) wrote no documents file: %v", i, changed, limit, ffs.writes)
		}
		if len(x.store.since) != 0 {
			t.Errorf("after the new documents file, %d changes pending", len(x.store.since))
		}
		if m := storedManifest(t, fs); !slices.ContainsFunc(m.Retired, func(r retiredFile) bool { return r.Name == base }) {
			t.Errorf("the documents file replaced is not retired: %v", m.Retired)
		}
		break
	}
	closeIndex(t, x)
	reopen(t, fs, docs, "after the new documents file")
}

// indexedPaths returns the paths x holds documents of, sorted.
func indexedPaths(x *Index) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []string
	for p := range x.docs.All() {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// A Syncer removes exactly the documents of the paths it was not given,
// whatever happened to the others: kept, re-keyed, changed (and so
// replaced in the bookkeeping), new, or given twice.
func TestSyncRemovesWhatWasNotAdded(t *testing.T) {
	docs := storeDocs(12)
	fs := host.NewMemFS()
	x, _, _ := syncKeyed(t, fs, docs, nil)
	closeIndex(t, x)

	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIndex(t, x)
	changed := docs[3]
	changed.Content = "the narwhal migration"
	added := Doc{Path: "domain9/new.md", Title: "A new note"}
	var built []string
	keys := map[string]string{docs[2].Path: "rekeyed", changed.Path: "changed", added.Path: "new"}
	// docs[9] and docs[12] are gone (the context file, first by path: the
	// document of the first slot); the new document and docs[7] come
	// twice, the second time after a batch was put.
	srcs := keyedSources([]Doc{docs[0], docs[1], docs[2], changed, docs[4], added, docs[5], docs[6], docs[7], docs[8], docs[10], docs[11]}, keys, &built)
	s := x.NewSyncer(nil)
	for i, src := range srcs {
		if err := s.Add(src); err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			if err := s.put(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, src := range keyedSources([]Doc{added, docs[7]}, keys, &built) {
		if err := s.Add(src); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Done()
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed != 2 || st.Indexed != 2 {
		t.Errorf("stats %+v, want 2 indexed (one changed, one new) and 2 removed", st)
	}
	var want []string
	for i, d := range docs {
		if i != 9 && i != 12 {
			want = append(want, d.Path)
		}
	}
	want = append(want, added.Path)
	sort.Strings(want)
	if got := indexedPaths(x); !reflect.DeepEqual(got, want) {
		t.Errorf("indexed %v\nwant %v", got, want)
	}
	if r := mustSearch(t, x, "narwhal", 5); len(r.Hits) != 1 || r.Hits[0].Path != changed.Path {
		t.Errorf("narwhal: %+v", r.Hits)
	}
}

// A Syncer whose index renumbered its documents meanwhile (its slots
// given anew, pathtab.Table.Compact) no longer knows which it was given:
// it fails and removes nothing, and the next sync removes what it should.
func TestSyncAfterRenumbering(t *testing.T) {
	docs := storeDocs(6)
	x, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIndex(t, x)
	if _, err := x.Sync(sources(docs)); err != nil {
		t.Fatal(err)
	}
	s := x.NewSyncer(nil)
	for _, src := range sources(append(docs[1:], Doc{Path: "new.md", Title: "New"})) {
		if err := s.Add(src); err != nil {
			t.Fatal(err)
		}
	}
	x.mu.Lock()
	x.docs.Compact()
	x.mu.Unlock()
	if _, err := s.Done(); err == nil || !strings.Contains(err.Error(), "reloaded") {
		t.Fatalf("sync across a renumbering: %v", err)
	}
	if n := x.Count(); n != len(docs)+1 {
		t.Fatalf("%d documents after the failed sync, want %d: nothing removed", n, len(docs)+1)
	}
	st, err := x.Sync(sources(append(docs[1:], Doc{Path: "new.md", Title: "New"})))
	if err != nil || st.Removed != 1 || x.Count() != len(docs) {
		t.Fatalf("sync after: %+v, %v, %d documents", st, err, x.Count())
	}
}

// The fingerprint written in the code is what the code makes of the
// probes: change it with the analysis, and every stored index is rebuilt.
func TestSchemaFingerprint(t *testing.T) {
	if fp := computeSchemaFingerprint(); fp != schemaFP {
		t.Fatalf("the analysis changed: set schemaFP to %q", fp)
	}
	if err := checkSchemaFingerprint(); err != nil {
		t.Fatal(err)
	}
}
