package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// Reads start together up to the number of readers; a write starts once
// the calls before it have ended, and the reads after it once it has.
func TestQueueReadsTogetherWritesAlone(t *testing.T) {
	q := newQueue(2)
	served := make(chan struct{})
	go func() { q.serve(); close(served) }()
	var mu sync.Mutex
	var events []string
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	started := make(chan string, 4)
	release := map[string]chan struct{}{"r1": make(chan struct{}), "r2": make(chan struct{}), "w3": make(chan struct{}), "r4": make(chan struct{})}
	job := func(name string) func(context.Context) {
		return func(context.Context) {
			note(name + " starts")
			started <- name
			<-release[name]
			note(name + " ends")
		}
	}
	results := make(chan error, 4)
	go func() { results <- q.do(context.Background(), true, true, job("r1")) }()
	go func() { results <- q.do(context.Background(), true, true, job("r2")) }()
	// Two reads run at once.
	got := map[string]bool{<-started: true, <-started: true}
	if !got["r1"] || !got["r2"] {
		t.Fatalf("started %v, want r1 and r2 together", got)
	}
	go func() { results <- q.do(context.Background(), true, false, job("w3")) }()
	waitQueued(q, 1)
	go func() { results <- q.do(context.Background(), true, true, job("r4")) }()
	waitQueued(q, 2)
	close(release["r1"])
	close(release["r2"])
	if s := <-started; s != "w3" {
		t.Fatalf("%s started after the reads, want the write", s)
	}
	close(release["w3"])
	if s := <-started; s != "r4" {
		t.Fatalf("%s started after the write, want r4", s)
	}
	close(release["r4"])
	for range 4 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	q.close()
	<-served
	mu.Lock()
	defer mu.Unlock()
	w3 := strings.Join(events, ", ")
	for _, before := range []string{"r1 ends", "r2 ends"} {
		if strings.Index(w3, before) > strings.Index(w3, "w3 starts") {
			t.Fatalf("events %s: the write started before %s", w3, before)
		}
	}
	if strings.Index(w3, "w3 ends") > strings.Index(w3, "r4 starts") {
		t.Fatalf("events %s: r4 started before the write ended", w3)
	}
	if q.mostReads != 2 {
		t.Fatalf("most reads at once %d, want 2", q.mostReads)
	}
}

// Two agents on one server with readers: every write of one is in the
// very next read of the other, whichever reader answers it, every time.
func TestHTTPReadersSeeEveryWrite(t *testing.T) {
	const readers = 3
	url := serveHTTPReaders(t, t.TempDir(), HTTPOptions{Token: testToken}, readers, nil, runtime.WithWatch(0))
	a := connectHTTP(t, url, nil)
	b := connectHTTP(t, url, nil)
	for i := range 15 {
		word := fmt.Sprintf("okapi%dmarker", i)
		res := call(t, a, ToolCurate, map[string]any{"operations": []map[string]any{{
			"type": "UPSERT", "path": "notes/shared", "title": "Shared note", "content": map[string]any{"narrative": "Today's word is " + word + "."}, "reason": "test"}}})
		if res.IsError {
			t.Fatalf("curate %d: %+v", i, res.Content)
		}
		// As many reads as readers: each reader answers one.
		for k := range readers {
			var found api.SearchResult
			decode(t, call(t, b, ToolSearch, map[string]any{"query": word}), &found)
			if len(found.Results) == 0 || found.Results[0].Path != "notes/shared/shared_note.md" {
				t.Fatalf("write %d, read %d: b does not find a's write: %+v", i, k+1, found)
			}
		}
		var read api.ReadResult
		decode(t, call(t, b, ToolRead, map[string]any{"path": "notes/shared/shared_note.md"}), &read)
		if !strings.Contains(read.Markdown, word) {
			t.Fatalf("write %d: b reads the old entry:\n%s", i, read.Markdown)
		}
	}
}

// Reads of several agents run at the same time: each read's turn is held
// until as many reads as readers are in theirs, which one engine call at a
// time could never reach.
func TestHTTPReadsOverlap(t *testing.T) {
	const readers = 3
	var mu sync.Mutex
	inside, most := 0, 0
	all := make(chan struct{})
	// Once they all were in, hold lets every read pass.
	hold := func() {
		mu.Lock()
		inside++
		most = max(most, inside)
		if inside == readers {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(time.Minute): // they do not overlap: the test fails below
		}
	}
	url := serveHTTPReaders(t, t.TempDir(), HTTPOptions{Token: testToken}, readers, func(s *Server) { s.readHook = hold })
	var wg sync.WaitGroup
	for i := range readers {
		cs := connectHTTP(t, url, nil)
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": fmt.Sprintf("anything %d", i)}})
			if err != nil || res.IsError {
				t.Errorf("search %d: %v %+v", i, err, res)
			}
		})
	}
	wg.Wait()
	if most != readers {
		t.Fatalf("%d reads in their turn at once at most, want %d", most, readers)
	}
}

// notes collects notifications/resources/updated.
func notes() (chan string, *sdk.ClientOptions) {
	updated := make(chan string, 64)
	return updated, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}}
}

// until returns the URIs announced before want, waiting for it.
func until(t *testing.T, updated chan string, want string) []string {
	t.Helper()
	var before []string
	for {
		select {
		case got := <-updated:
			if got == want {
				return before
			}
			before = append(before, got)
		case <-time.After(30 * time.Second):
			t.Fatalf("no notifications/resources/updated for %s (got %v)", want, before)
		}
	}
}

// A curate's write is announced once: as the curate answers, and not
// again when the watch of the root hears of the same file.
func TestCurateAnnouncedOnce(t *testing.T) {
	root := t.TempDir()
	url := serveHTTPReaders(t, root, HTTPOptions{Token: testToken}, 2, nil, runtime.WithWatch(0))
	updated, opts := notes()
	a := connectHTTP(t, url, nil)
	b := connectHTTP(t, url, opts)
	const entry, later = "notes/shared/a_decision.md", "notes/shared/b_later.md"
	for _, p := range []string{entry, later} {
		if err := b.Subscribe(context.Background(), &sdk.SubscribeParams{URI: EntryURI(p)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		res := call(t, a, ToolCurate, map[string]any{"operations": []map[string]any{{"type": "UPSERT", "path": "notes/shared", "title": "A decision",
			"content": map[string]any{"narrative": fmt.Sprintf("Decision number %d.", i)}, "reason": "test"}}})
		if res.IsError {
			t.Fatalf("curate: %+v", res.Content)
		}
		// A person's edit after the curate: the watch hears of it after
		// the curate's file, so its announcement comes after any the
		// watch makes of the curate's.
		writeNote(t, root, later, fmt.Sprintf("Later note %d.", i))
		got := until(t, updated, EntryURI(later))
		n := 0
		for _, u := range got {
			if u == EntryURI(entry) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: the curated entry announced %d times before the later note (%v), want once", i, n, got)
		}
	}
}

// writeNote writes an entry as an editor saves one: whole, by a rename
// (a write in place is two changes, the file emptied then filled, each
// of which may be announced).
func writeNote(t *testing.T, root, rel, text string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(root), filepath.Base(root)+"-save.tmp")
	if err := os.WriteFile(tmp, []byte("---\ntitle: "+strings.TrimSuffix(filepath.Base(rel), ".md")+"\n---\n\n## Narrative\n"+text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, full); err != nil {
		t.Fatal(err)
	}
}

// lossyWatcher hears nothing, and reports lost events when told.
type lossyWatcher struct {
	mu     sync.Mutex
	lost   bool
	signal chan struct{}
}

func (w *lossyWatcher) Changed() <-chan struct{} { return w.signal }
func (w *lossyWatcher) Close() error             { close(w.signal); return nil }
func (w *lossyWatcher) Take() ([]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lost := w.lost
	w.lost = false
	return nil, lost
}
func (w *lossyWatcher) lose() {
	w.mu.Lock()
	w.lost = true
	w.mu.Unlock()
	w.signal <- struct{}{}
}

// A change the watch missed (its events were lost) is still announced:
// the server has the engine scan the tree, and announces what the scan
// found changed; every reader reads the change.
func TestMissedChangeAnnounced(t *testing.T) {
	w := &lossyWatcher{signal: make(chan struct{}, 1)}
	defer func(old func(string) (rootWatcher, error)) { newRootWatcher = old }(newRootWatcher)
	newRootWatcher = func(string) (rootWatcher, error) { return w, nil }
	root := t.TempDir()
	const entry = "notes/shared/handbook.md"
	writeNote(t, root, entry, "The first version.")
	// No runtime.WithWatch: the engine sees the disk only through the
	// server's scan.
	url := serveHTTPReaders(t, root, HTTPOptions{Token: testToken}, 2, nil)
	updated, opts := notes()
	b := connectHTTP(t, url, opts)
	if err := b.Subscribe(context.Background(), &sdk.SubscribeParams{URI: EntryURI(entry)}); err != nil {
		t.Fatal(err)
	}
	writeNote(t, root, entry, "The second version, edited by a person.")
	w.lose()
	until(t, updated, EntryURI(entry))
	for k := range 2 {
		var read api.ReadResult
		decode(t, call(t, b, ToolRead, map[string]any{"path": entry}), &read)
		if !strings.Contains(read.Markdown, "second version") {
			t.Fatalf("read %d after the announcement: %s", k+1, read.Markdown)
		}
	}
}
