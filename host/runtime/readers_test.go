package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// readersEngine is an open watching engine on a small tree with n readers.
func readersEngine(t *testing.T, n int) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates weekly on Mondays.")
	writeEntry(t, root, "ops/deploys/freeze.md", "Deploy freeze", "No deploys on Fridays after noon.")
	e := newEngine(t, root, WithWatch(0))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if err := e.AddReaders(ctx, n); err != nil {
		t.Fatal(err)
	}
	if e.Readers() != n {
		t.Fatalf("Readers() = %d, want %d", e.Readers(), n)
	}
	return e, root
}

// found reports whether a search for word finds path.
func found(t *testing.T, e *Engine, word, path string) bool {
	t.Helper()
	res, err := e.Search(context.Background(), api.SearchParams{Query: word})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Results {
		if h.Path == path {
			return true
		}
	}
	return false
}

// Every write through the writer is seen by the next read, whichever
// reader answers it: readers are taken in turn, so n reads in a row ask
// every one of them, each time.
func TestReadersSeeEveryWrite(t *testing.T) {
	const readers = 3
	e, _ := readersEngine(t, readers)
	ctx := context.Background()
	for i := range 20 {
		word := fmt.Sprintf("zebra%dquux", i)
		res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpUpsert, Path: "ops/notes", Title: "Note " + word,
			Content: api.Content{Narrative: &api.Narrative{Text: "The marker " + word + " is here."}}, Reason: "test"}}})
		if err != nil || res.Summary.Failed > 0 {
			t.Fatalf("curate %d: %+v, %v", i, res, err)
		}
		path := res.Applied[0].Path
		for k := range readers {
			if !found(t, e, word, path) {
				t.Fatalf("write %d: read %d of %d does not find %s", i, k+1, readers, path)
			}
		}
		if i%4 == 3 {
			if _, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpDelete, Path: path, Reason: "test"}}}); err != nil {
				t.Fatal(err)
			}
			for k := range readers {
				if found(t, e, word, path) {
					t.Fatalf("delete %d: read %d of %d still finds %s", i, k+1, readers, path)
				}
			}
		}
	}
}

// A person's edit, heard by the writer's watcher, reaches every reader:
// once one read sees it, so does every other.
func TestReadersFollowTheWatcher(t *testing.T) {
	const readers = 3
	e, root := readersEngine(t, readers)
	writeEntry(t, root, "ops/oncall/handover.md", "Handover", "Write the handover note in the walrusledger.")
	path := "ops/oncall/handover.md"
	atOnce(t, "a person's new entry", func() bool { return found(t, e, "walrusledger", path) })
	for k := range readers {
		if !found(t, e, "walrusledger", path) {
			t.Fatalf("read %d of %d after the edit was seen does not find it", k+1, readers)
		}
	}
}

// The accesses readers count reach the writer, which persists them, and
// the writer's signals reach every reader, which ranks with them.
func TestReadersHandAccessesToTheWriter(t *testing.T) {
	const readers, queries = 3, 5
	e, root := readersEngine(t, readers)
	ctx := context.Background()
	const path = "ops/pager/rotation.md"
	for range queries {
		res, err := e.Query(ctx, api.SearchParams{Query: "when does the pager rotate"})
		if err != nil || len(res.Results) == 0 || res.Results[0].Path != path || res.NeedsLLM {
			t.Fatalf("query: %+v, %v; want a direct answer from %s", res, err, path)
		}
	}
	if _, err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, ".arbor", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Entries map[string]api.Signal `json:"entries"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if got := st.Entries[path].Accesses; got != queries {
		t.Fatalf("state.json counts %d accesses of %s, want the readers' %d", got, path, queries)
	}
	want := st.Entries[path].Importance
	for k := range readers {
		res, err := e.Query(ctx, api.SearchParams{Query: "pager rotate", Filters: api.Filters{Sort: api.SortImportance}})
		if err != nil || len(res.Results) == 0 || res.Results[0].Lifecycle == nil {
			t.Fatalf("sorted query: %+v, %v", res, err)
		}
		if got := res.Results[0].Lifecycle.Importance; got != want {
			t.Fatalf("reader %d of %d ranks %s at importance %v, want the writer's %v", k+1, readers, path, got, want)
		}
	}
}

// holdingEmbedder embeds as host.HashEmbedder does; once armed, each
// call waits until want calls are inside it at once (or a minute has
// passed, when they cannot be), counting the most it saw.
type holdingEmbedder struct {
	host.HashEmbedder
	want         int
	mu           sync.Mutex
	armed        bool
	inside, most int
	all          chan struct{}
}

func (h *holdingEmbedder) EmbedContext(ctx context.Context, texts []string) ([][]float64, error) {
	h.mu.Lock()
	if h.armed {
		h.inside++
		h.most = max(h.most, h.inside)
		if h.inside == h.want {
			close(h.all)
			h.armed = false
		}
		all := h.all
		h.mu.Unlock()
		select {
		case <-all:
		case <-time.After(time.Minute):
		}
	} else {
		h.mu.Unlock()
	}
	return h.Embed(texts)
}

// Reads run at the same time on the readers: a query's embedding
// (a call the engine makes from inside its own call) is held until every
// reader is inside one, which one instance at a time could never reach.
func TestReadersOverlap(t *testing.T) {
	const readers = 3
	em := &holdingEmbedder{HashEmbedder: host.HashEmbedder{Model: "hash", Dims: 32}, want: readers, all: make(chan struct{})}
	root := t.TempDir()
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates weekly on Mondays.")
	e := newEngine(t, root, WithEmbedder(em))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if err := e.AddReaders(ctx, readers); err != nil {
		t.Fatal(err)
	}
	em.mu.Lock()
	em.armed = true
	em.mu.Unlock()
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			if _, err := e.Query(ctx, api.SearchParams{Query: fmt.Sprintf("pager rotation %d", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if em.most != readers {
		t.Fatalf("%d reads inside the engine at once at most, want %d", em.most, readers)
	}
}

// stoppingEmbedder embeds as host.HashEmbedder does; once armed, its next
// call runs stop (which stops the instance making it) before answering.
type stoppingEmbedder struct {
	host.HashEmbedder
	mu   sync.Mutex
	stop func()
}

func (s *stoppingEmbedder) EmbedContext(ctx context.Context, texts []string) ([][]float64, error) {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	return s.Embed(texts)
}

// A reader that stops during a call (a trap, its deadline) answers that
// call with an error, and its next call starts a new instance, which
// opens the root as it is then: it finds what the writer wrote while it
// was down, and goes on following the writer's writes.
func TestReaderRestartsAfterItStopped(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates weekly on Mondays.")
	em := &stoppingEmbedder{HashEmbedder: host.HashEmbedder{Model: "hash", Dims: 32}}
	// A call timeout makes a cancelled call stop the instance it runs in.
	e := newEngine(t, root, WithCallTimeout(time.Hour), WithEmbedder(em))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if err := e.AddReaders(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r := e.fam.readers[0]
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	em.mu.Lock()
	em.stop = func() {
		cancel()
		for !r.mod.IsClosed() {
			runtime.Gosched()
		}
	}
	em.mu.Unlock()
	_, err := e.Query(qctx, api.SearchParams{Query: "pager rotation"})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "restarts at the next call") {
		t.Fatalf("the query whose reader stopped: %v", err)
	}
	if r.stopped == nil || r.MemoryBytes() != 0 {
		t.Fatal("the reader did not stop")
	}
	add := func(word string) string {
		t.Helper()
		res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "ops/notes", Title: "Note " + word,
			Content: api.Content{Narrative: &api.Narrative{Text: "The marker " + word + " is here."}}, Reason: "test"}}})
		if err != nil || res.Summary.Failed > 0 {
			t.Fatalf("curate %s: %+v, %v", word, res, err)
		}
		return res.Applied[0].Path
	}
	down := add("zebradownquux")
	if !found(t, e, "zebradownquux", down) {
		t.Fatal("the restarted reader does not find the entry written while it was down")
	}
	if r.stopped != nil || r.MemoryBytes() == 0 {
		t.Fatal("the read was not answered by a restarted reader")
	}
	if after := add("zebraafterquux"); !found(t, e, "zebraafterquux", after) {
		t.Fatal("the restarted reader does not follow the writer's next write")
	}
	if res, err := e.Query(ctx, api.SearchParams{Query: "pager rotation"}); err != nil || len(res.Results) == 0 || res.Results[0].Path != "ops/pager/rotation.md" {
		t.Fatalf("a query with an embedding after the restart: %+v, %v", res, err)
	}
}

// A writer that stops halfway through a write still hands its readers
// the paths it wrote: the entries of an ingest stopped after writing
// them are found by the next read, on a reader.
func TestReadersSeeWhatAStoppedWriterWrote(t *testing.T) {
	_, ctx, e := stoppingIngest(t)
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if err := e.AddReaders(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Ingest(ctx, deploySteps("Step %d of the deploy checklist in the walrusledger.")); !errors.Is(err, context.Canceled) {
		t.Fatalf("ingest: %v, want it stopped by the cancel", err)
	}
	res, err := e.Search(context.Background(), api.SearchParams{Query: "walrusledger", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 12 {
		t.Fatalf("the reader finds %d of the 12 entries the stopped ingest wrote: %v", len(res.Results), res.Results)
	}
}
