package runtime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
)

// TestReopenUsesPersistedIndex: the module persists its index through the
// host imports at close, a new instance reuses it, an edit on disk is
// re-indexed alone, and the native engine reads what the module wrote.
func TestReopenUsesPersistedIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/notes")); err != nil {
		t.Fatal(err)
	}
	open := func() (*Engine, api.OpenResult) {
		t.Helper()
		e := newEngine(t, dir)
		res, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime})
		if err != nil {
			t.Fatal(err)
		}
		return e, res
	}
	find := func(e *Engine, q string) []api.Hit {
		t.Helper()
		r, err := e.Search(ctx, api.SearchParams{Query: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r.Results
	}
	queries := []string{"invoice retry", "korean tokenizer", "가치관", "lisbon"}

	e, res := open()
	total := res.Entries + res.Contexts
	if want := (api.IndexStats{Indexed: total}); res.Index != want {
		t.Fatalf("first open: %+v, want %+v", res.Index, want)
	}
	want := map[string][]api.Hit{}
	for _, q := range queries {
		want[q] = find(e, q)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor/index/manifest.bin")); err != nil {
		t.Fatalf("close did not persist the index: %v", err)
	}

	e, res = open()
	if want := (api.IndexStats{Reused: total}); res.Index != want {
		t.Fatalf("reopen: %+v, want %+v", res.Index, want)
	}
	for _, q := range queries {
		if got := find(e, q); !reflect.DeepEqual(got, want[q]) {
			t.Errorf("%q after reopen:\n got %+v\nwant %+v", q, got, want[q])
		}
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}

	entry := filepath.Join(dir, "engineering/billing/invoice_retry_policy.md")
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, append(b, "\nThe axolotl ledger is reconciled weekly.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	e, res = open()
	if want := (api.IndexStats{Reused: total - 1, Indexed: 1}); res.Index != want {
		t.Fatalf("after an edit: %+v, want %+v", res.Index, want)
	}
	if hits := find(e, "axolotl"); len(hits) != 1 || hits[0].Path != "engineering/billing/invoice_retry_policy.md" {
		t.Errorf("axolotl: %+v", hits)
	}
	if _, err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// The native engine reads the index the module wrote.
	root, err := arborhost.NewRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	native, nres, err := engine.Open(engine.Options{FS: root})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	if want := (api.IndexStats{Reused: total}); nres.Index != want {
		t.Errorf("native open of the module's index: %+v, want %+v", nres.Index, want)
	}
}

// readCount counts the reads of the tree's entries by a native engine.
type readCount struct {
	*arborhost.RootFS
	reads map[string]int
}

func (r *readCount) ReadFile(p string) ([]byte, error) {
	if strings.HasSuffix(p, ".md") && !strings.HasPrefix(p, ".arbor/") {
		r.reads[p]++
	}
	return r.RootFS.ReadFile(p)
}

// A tool that writes a file and sets its modification time back (cp -p,
// rsync -a, tar x, unzip, touch -r) leaves the size and time the catalog
// noted: a new process, the module's or the native engine's, answered the
// old text until the file changed again. Its change time is new, and no
// tool sets that one.
func TestReopenReadsAFileWhoseTimeAToolSetBack(t *testing.T) {
	ctx := context.Background()
	const rel = "engineering/billing/invoice_retry_policy.md"
	var dirs [2]string
	for i := range dirs {
		dirs[i] = t.TempDir()
		if err := os.CopyFS(dirs[i], os.DirFS("../../examples/notes")); err != nil {
			t.Fatal(err)
		}
	}
	// The catalog trusts only times clearly older than the open.
	time.Sleep(2100 * time.Millisecond)
	// edit replaces "retry" by "redos", which keeps the size, and sets the
	// time back.
	edit := func(dir string) {
		t.Helper()
		full := filepath.Join(dir, rel)
		before, err := os.Stat(full)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, bytes.ReplaceAll(b, []byte("retry"), []byte("redos")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.Stat(full); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("the edit shows: %v %v, was %v %v", after.Size(), after.ModTime(), before.Size(), before.ModTime())
		}
	}

	t.Run("module", func(t *testing.T) {
		open := func() *Engine {
			e := newEngine(t, dirs[0])
			if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
				t.Fatal(err)
			}
			return e
		}
		e := open()
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		edit(dirs[0])
		e = open()
		r, err := e.Search(ctx, api.SearchParams{Query: "redos", Limit: 5})
		if err != nil || len(r.Results) == 0 || r.Results[0].Path != rel {
			t.Errorf("the edit is not found: %+v, %v", r.Results, err)
		}
	})

	t.Run("native", func(t *testing.T) {
		root, err := arborhost.NewRootFS(dirs[1])
		if err != nil {
			t.Fatal(err)
		}
		fsys := &readCount{RootFS: root, reads: map[string]int{}}
		open := func() *engine.Engine {
			clear(fsys.reads)
			e, _, err := engine.Open(engine.Options{FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		for range 2 {
			if err := open().Close(); err != nil {
				t.Fatal(err)
			}
		}
		if len(fsys.reads) != 0 {
			t.Fatalf("an open of an unchanged tree read %v: the catalog noted nothing", fsys.reads)
		}
		edit(dirs[1])
		e := open()
		defer e.Close()
		if want := map[string]int{rel: 1}; !reflect.DeepEqual(fsys.reads, want) {
			t.Errorf("the open read %v, want %v", fsys.reads, want)
		}
		r, err := e.Search(api.SearchParams{Query: "redos", Limit: 5})
		if err != nil || len(r.Results) == 0 || r.Results[0].Path != rel {
			t.Errorf("the edit is not found: %+v, %v", r.Results, err)
		}
	})
}
