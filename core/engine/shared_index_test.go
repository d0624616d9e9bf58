package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/search"
)

// Several engines on one root, as the CLI, arbor mcp and a Node program
// share a folder: each reads the persisted index's segments from their
// files while the others replace the index (core/internal/search/store.go).

// noteFiles is a tree of n entries about one of a few topics each.
func noteFiles(n int) map[string]string {
	topics := []string{"invoice retry", "kubernetes deploy", "lisbon restaurants", "card expiry", "tokenizer"}
	files := map[string]string{}
	for i := range n {
		t := topics[i%len(topics)]
		files[fmt.Sprintf("notes/topic%d/note_%03d.md", i%len(topics), i)] = fmt.Sprintf(
			"---\ntitle: %s note %d\n---\n\n## Narrative\n%s details, decision %d, and the unique%d marker. %s\n",
			t, i, strings.Repeat(t+" notes and more. ", 1+i%5), i, i, strings.Repeat("filler words for a longer segment. ", 20))
	}
	return files
}

var sharedQueries = []string{"invoice retry", "kubernetes", "lisbon restaurants", "unique7", "card expiry decision", "tokenizer notes"}

func allSearches(t *testing.T, s *Session) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, q := range sharedQueries {
		out[q] = searchPaths(t, s, q)
	}
	return out
}

func sameSearches(t *testing.T, label string, got, want map[string][]string) {
	t.Helper()
	for _, q := range sharedQueries {
		if !slices.Equal(got[q], want[q]) {
			t.Errorf("%s: %q: %v, want %v", label, q, got[q], want[q])
		}
	}
}

func storedSegments(t *testing.T, fs host.FS) search.Stored {
	t.Helper()
	st, err := search.ReadStored(fs, IndexDir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func addOps(prefix string, n int) []map[string]any {
	var ops []map[string]any
	for i := range n {
		ops = append(ops, map[string]any{"type": "ADD", "path": "imported/" + prefix, "title": fmt.Sprintf("%s import %d", prefix, i),
			"content": map[string]any{"narrative": fmt.Sprintf("imported %s text %d about kubernetes and invoices", prefix, i)}, "reason": "bulk import"})
	}
	return ops
}

// fresh answers the searches from the files of fs alone, without .arbor.
func fresh(t *testing.T, fs *host.MemFS) map[string][]string {
	t.Helper()
	copied := host.NewMemFS()
	for p, b := range fs.Files() {
		if !strings.HasPrefix(p, ".arbor/") {
			if err := copied.WriteFile(p, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := NewSession(copied, nil)
	mustOpen(t, s)
	defer closeSession(t, s)
	return allSearches(t, s)
}

// One engine answers through the index it opened while another imports
// in bulk and flushes, again and again; then the files it read are removed
// (as another process's save does once they have been unused for the
// grace period): its close reloads the current index, brings it in step
// with its own view of the tree, and saves a complete index.
func TestEnginesShareOneIndex(t *testing.T) {
	s, fs := newSession(t, noteFiles(150))
	mustOpen(t, s)
	closeSession(t, s)
	// The reader does not refresh: it answers from what it read.
	readerLog := &warnLog{}
	reader := NewSession(fs, readerLog)
	mustOpen(t, reader)
	before := allSearches(t, reader)
	read := storedSegments(t, fs).Segments

	writer := NewSession(fs, nil)
	mustOpen(t, writer)
	files := noteFiles(150)
	for round := range 3 {
		if _, errObj := call(t, writer, "curate", map[string]any{"operations": addOps(fmt.Sprintf("round%d", round), FlushAfter+10)}); errObj != nil {
			t.Fatal(errObj)
		}
		// Every entry edited and read again: the segments the reader
		// reads hold no live document of the writer's any more.
		var edited []string
		for p, text := range files {
			if err := fs.WriteFile(p, []byte(text+fmt.Sprintf("\nEdited in round %d.\n", round))); err != nil {
				t.Fatal(err)
			}
			edited = append(edited, p)
		}
		if _, errObj := call(t, writer, "refresh", map[string]any{"paths": edited}); errObj != nil {
			t.Fatal(errObj)
		}
		if _, errObj := call(t, writer, "flush", nil); errObj != nil {
			t.Fatal(errObj)
		}
		sameSearches(t, fmt.Sprintf("reader after the writer's save %d", round), allSearches(t, reader), before)
	}
	closeSession(t, writer)
	if len(readerLog.warns) != 0 {
		t.Fatalf("reader warnings: %v", readerLog.warns)
	}

	// The reader's own entry, not flushed, then the files it read that
	// the current manifest no longer names removed.
	if _, errObj := call(t, reader, "curate", map[string]any{"operations": []map[string]any{{"type": "ADD", "path": "reader/own",
		"title": "Reader's own", "content": map[string]any{"narrative": "the wombat ledger"}, "reason": "test"}}}); errObj != nil {
		t.Fatal(errObj)
	}
	current := storedSegments(t, fs).Segments
	removed := 0
	for _, name := range read {
		if !slices.Contains(current, name) {
			if err := fs.Remove(IndexDir + "/" + name); err != nil {
				t.Fatal(err)
			}
			removed++
		}
	}
	if removed == 0 {
		t.Fatal("the writer's saves replaced none of the reader's segments")
	}
	if got := searchPaths(t, reader, "wombat ledger"); len(got) != 1 {
		t.Errorf("wombat: %v", got)
	}
	closeSession(t, reader)
	if len(readerLog.warns) != 1 || !strings.Contains(readerLog.warns[0], "reloaded the current index") {
		t.Errorf("reader warnings %v, want one about the reload", readerLog.warns)
	}

	// The reader's index, saved last, holds the tree as the reader read
	// it: the next open indexes the writer's imports and edits again (the
	// tree is the truth), and reuses the rest.
	imported := 0
	for p := range fs.Files() {
		if strings.HasPrefix(p, "imported/") {
			imported++
		}
	}
	log := &warnLog{}
	last := NewSession(fs, log)
	res := mustOpen(t, last)
	if ix := indexStats(t, res); ix["indexed"].(float64) != float64(imported+len(files)) || len(log.warns) != 0 {
		t.Errorf("reopen: %v, warnings %v; want the writer's %d files indexed again, no warning", ix, log.warns, imported+len(files))
	}
	sameSearches(t, "reopened", allSearches(t, last), fresh(t, fs))
}

// blockReads records which blocks of the segment files are read.
type blockReads struct {
	*host.MemFS
	read map[string]map[int64]bool
}

func (f *blockReads) ReadAt(p string, buf []byte, off int64) (int, error) {
	if f.read[p] == nil {
		f.read[p] = map[int64]bool{}
	}
	f.read[p][off] = true
	return f.MemFS.ReadAt(p, buf, off)
}

// A segment damaged where an open does not look (it reads sizes, footers
// and the fields' tables, not posting lists): the first read that meets
// the damage, an open's update of a changed entry or a query, makes the
// engine build the index again from the tree; the answers are the tree's,
// and the next open reuses the index it saved.
func TestDamagedSegmentMetLater(t *testing.T) {
	for _, c := range []struct {
		name string
		edit bool // an entry changed on disk: the open updates it
	}{{"by the open's update", true}, {"by a query", false}} {
		t.Run(c.name, func(t *testing.T) {
			files := noteFiles(600)
			s, fs := newSession(t, files)
			mustOpen(t, s)
			closeSession(t, s)
			rec := &blockReads{MemFS: fs, read: map[string]map[int64]bool{}}
			s = NewSession(rec, nil)
			mustOpen(t, s)
			closeSession(t, s)
			damaged := 0
			for p, b := range fs.Files() {
				if !strings.HasSuffix(p, ".seg") {
					continue
				}
				for off := 0; off < len(b); off += 32 << 10 {
					if !rec.read[p][int64(off)] {
						b[off] ^= 0x55
						damaged++
					}
				}
				if err := fs.WriteFile(p, b); err != nil {
					t.Fatal(err)
				}
			}
			if damaged == 0 {
				t.Fatal("an open reads every block: nothing left to damage")
			}
			const edited = "notes/topic0/note_005.md"
			if c.edit {
				if err := fs.WriteFile(edited, []byte(files[edited]+"\nAn edit about the narwhal.\n")); err != nil {
					t.Fatal(err)
				}
			}
			log := &warnLog{}
			s = NewSession(fs, log)
			if c.edit {
				wantIndex(t, "open", mustOpen(t, s), 0, 600, 0)
				if got := searchPaths(t, s, "narwhal"); !slices.Equal(got, []string{edited}) {
					t.Errorf("narwhal: %v", got)
				}
			} else {
				wantIndex(t, "open", mustOpen(t, s), 600, 0, 0)
			}
			sameSearches(t, "damaged", allSearches(t, s), fresh(t, fs))
			if len(log.warns) != 1 || !strings.Contains(log.warns[0], "rebuilding it from the tree") {
				t.Errorf("warnings %v, want one about the rebuild", log.warns)
			}
			closeSession(t, s)
			log = &warnLog{}
			s = NewSession(fs, log)
			wantIndex(t, "reopen", mustOpen(t, s), 600, 0, 0)
			if len(log.warns) != 0 {
				t.Errorf("reopen warnings: %v", log.warns)
			}
		})
	}
}
