package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	eventually(t, "a person's new entry", func() bool { return found(t, e, "walrusledger", path) })
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
