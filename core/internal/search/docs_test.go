package search

import (
	"fmt"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// keptSources are keyedSources marked as found unchanged (Source.Kept).
func keptSources(docs []Doc, keys map[string]string, built *[]string) []Source {
	srcs := keyedSources(docs, keys, built)
	for i := range srcs {
		srcs[i].Kept = true
	}
	return srcs
}

// storedKeyed writes a stored index of docs synced with their keys, and
// closes it.
func storedKeyed(t *testing.T, docs []Doc) *host.MemFS {
	t.Helper()
	fs := host.NewMemFS()
	x, _, _ := syncKeyed(t, fs, docs, nil)
	closeIndex(t, x)
	return fs
}

// openLazy opens the stored index of fs and checks that its document
// table is left undecoded.
func openLazy(t *testing.T, fs host.FS, log host.Logger) *Index {
	t.Helper()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if x.pending.Load() == nil {
		t.Fatal("the document table was decoded at open")
	}
	return x
}

// syncAll gives srcs to a Syncer of x.
func syncAll(t *testing.T, x *Index, srcs []Source) api.IndexStats {
	t.Helper()
	s := x.NewSyncer(nil)
	for _, src := range srcs {
		if err := s.Add(src); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Done()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// An index reopened over the sources it holds, each found unchanged,
// decodes no document: it answers, counts and scores as a cold build,
// and its next open is as lazy.
func TestLazyDocsUnchanged(t *testing.T) {
	docs := storeDocs(60)
	fs := storedKeyed(t, docs)
	for round := range 2 {
		log := &logLines{}
		x := openLazy(t, fs, log)
		var built []string
		if st := syncAll(t, x, keptSources(docs, nil, &built)); st != (api.IndexStats{Reused: len(docs)}) || len(built) != 0 {
			t.Fatalf("round %d: %+v, built %v", round, st, built)
		}
		if x.pending.Load() == nil {
			t.Fatalf("round %d: a sync of the documents the index holds decoded its table", round)
		}
		if n := x.Count(); n != len(docs) {
			t.Fatalf("round %d: Count %d, want %d", round, n, len(docs))
		}
		sameAnswers(t, fmt.Sprintf("round %d", round), answers(t, x), coldAnswers(t, docs))
		if x.pending.Load() == nil {
			t.Fatalf("round %d: queries decoded the table", round)
		}
		closeIndex(t, x)
		if w := log.warnings(); len(w) != 0 {
			t.Fatalf("round %d: %v", round, w)
		}
	}
}

// Sources other than the ones the index holds are found so whatever the
// moment the difference shows: a source not found unchanged (at once), a
// key the index does not hold, a document more or less (at Done, by the
// digest and the count). The sync then does what it does on a decoded
// table, and the index answers as a cold build of the sources.
func TestLazyDocsChanged(t *testing.T) {
	docs := storeDocs(40)
	changed := func() []Doc {
		d := append([]Doc(nil), docs...)
		d[7].Content += " a revision"
		return d
	}
	for _, tc := range []struct {
		name string
		docs []Doc
		srcs func(d []Doc, built *[]string) []Source
		want api.IndexStats
	}{
		{"a source read anew", changed(), func(d []Doc, built *[]string) []Source {
			srcs := keptSources(d, nil, built)
			srcs[7].Kept = false
			return srcs
		}, api.IndexStats{Reused: 40, Indexed: 1}},
		{"a kept source of another key", changed(), func(d []Doc, built *[]string) []Source {
			return keptSources(d, nil, built)
		}, api.IndexStats{Reused: 40, Indexed: 1}},
		{"a key changed, the same document", docs, func(d []Doc, built *[]string) []Source {
			return keptSources(d, map[string]string{d[3].Path: "another key"}, built)
		}, api.IndexStats{Reused: 41}},
		{"a document fewer", docs[1:], func(d []Doc, built *[]string) []Source {
			return keptSources(d, nil, built)
		}, api.IndexStats{Reused: 40, Removed: 1}},
		{"a document more", append(append([]Doc(nil), docs...), Doc{Path: "domain9/new.md", Title: "new note", Content: "lisbon harbour"}), func(d []Doc, built *[]string) []Source {
			return keptSources(d, nil, built)
		}, api.IndexStats{Reused: 41, Indexed: 1}},
		{"a path twice", docs, func(d []Doc, built *[]string) []Source {
			srcs := keptSources(d, nil, built)
			return append(srcs, srcs[5])
		}, api.IndexStats{Reused: 42}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := storedKeyed(t, docs)
			x := openLazy(t, fs, nil)
			var built []string
			if st := syncAll(t, x, tc.srcs(tc.docs, &built)); st != tc.want {
				t.Fatalf("%+v, want %+v (built %v)", st, tc.want, built)
			}
			if x.pending.Load() != nil {
				t.Fatal("the table is still pending after a sync that changed it or had to compare")
			}
			if n := x.Count(); n != len(tc.docs) {
				t.Fatalf("Count %d, want %d", n, len(tc.docs))
			}
			sameAnswers(t, "after the sync", answers(t, x), coldAnswers(t, tc.docs))
			closeIndex(t, x)
			// What the save wrote opens lazily, and holds the sources.
			y := openLazy(t, fs, nil)
			built = nil
			srcs := keptSources(tc.docs, nil, &built)
			if tc.name == "a key changed, the same document" {
				srcs = keptSources(tc.docs, map[string]string{tc.docs[3].Path: "another key"}, &built)
			}
			if st := syncAll(t, y, srcs); st != (api.IndexStats{Reused: len(tc.docs)}) || y.pending.Load() == nil {
				t.Fatalf("reopened: %+v, pending %v, built %v", st, y.pending.Load() != nil, built)
			}
			sameAnswers(t, "reopened", answers(t, y), coldAnswers(t, tc.docs))
		})
	}
}

// Whatever needs the table decodes it once, under concurrent queries:
// filters by path, writes, and a save after them; a manifest without a
// summary (an earlier version's) is decoded at open.
func TestLazyDocsDecodedWhenNeeded(t *testing.T) {
	docs := storeDocs(50)
	fs := storedKeyed(t, docs)
	x := openLazy(t, fs, nil)
	keep := map[string]bool{}
	for _, d := range docs[:10] {
		keep[d.Path] = true
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range storeQueries {
				if _, err := x.SearchIn(q, 20, Scope{Filter: Filter{Keep: keep}}); err != nil {
					t.Error(err)
				}
				if n := x.Count(); n != len(docs) {
					t.Errorf("Count %d", n)
				}
			}
		}()
	}
	wg.Wait()
	if x.pending.Load() != nil {
		t.Fatal("a filter by paths left the table pending")
	}
	res, err := x.SearchIn("invoice retry", 20, Scope{Filter: Filter{Keep: keep}})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("filtered: %+v, %v", res, err)
	}
	for _, h := range res.Hits {
		if !keep[h.Path] {
			t.Fatalf("a hit the filter leaves out: %s", h.Path)
		}
	}
	closeIndex(t, x)

	// A write on a pending table.
	y := openLazy(t, fs, nil)
	extra := Doc{Path: "domain9/extra.md", Title: "extra", Content: "kubernetes deploy"}
	if err := y.Put(extra); err != nil {
		t.Fatal(err)
	}
	if err := y.Delete(docs[0].Path); err != nil {
		t.Fatal(err)
	}
	want := append(append([]Doc(nil), docs[1:]...), extra)
	sameAnswers(t, "after writes", answers(t, y), coldAnswers(t, want))
	closeIndex(t, y)
	raw, err := fs.ReadFile(testStoreDir + "/" + manifestName)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(testStoreDir + "/" + summaryName)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeSummary(b, raw, len(want))
	var sum docSummary
	for _, d := range storedManifest(t, fs).Docs {
		countLens(&sum.stats, d.Lens, 1)
		sum.digest += docDigest(d.Path, d.Key)
	}
	if got == nil || *got != sum {
		t.Fatalf("the saved summary %+v, its documents' %+v", got, sum)
	}
	if decodeSummary(b, append(raw, 0), len(want)) != nil {
		t.Fatal("a summary describes a manifest other than its own")
	}

	// An earlier version's store, without a summary.
	if err := fs.Remove(testStoreDir + "/" + summaryName); err != nil {
		t.Fatal(err)
	}
	z, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIndex(t, z)
	if z.pending.Load() != nil {
		t.Fatal("a manifest without a summary left its table pending")
	}
	sameAnswers(t, "a manifest without a summary", answers(t, z), coldAnswers(t, want))
}
