package runtime

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

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
