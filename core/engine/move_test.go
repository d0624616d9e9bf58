package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// TestMoveKeepsSignalsAndIndex: an entry that moves keeps what its use
// earned, is found at its new path and no longer at its old one, and a
// reopened tree agrees.
func TestMoveKeepsSignalsAndIndex(t *testing.T) {
	const moved = "finance/billing/invoice_retry_policy.md"
	fs := newFS(t, map[string]string{
		retryPath:                               billingEntry,
		"engineering/billing/dunning_emails.md": linkingEntry,
	})
	c := &clock{now: day0}
	e, _ := openEngine(t, fs, c, Options{})
	for range 5 {
		if _, err := e.Read(api.ReadParams{Path: retryPath}); err != nil {
			t.Fatal(err)
		}
	}
	earned := e.signals.Of(retryPath)
	curateOps(t, e, map[string]any{"type": "MOVE", "path": "engineering/billing", "to": "finance/billing", "reason": "billing belongs to finance"})
	if s := e.signals.Of(moved); s != earned {
		t.Errorf("moved signal = %+v, want %+v", s, earned)
	}
	hits, err := e.Search(api.SearchParams{Query: "invoice retry"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range hits.Results {
		paths = append(paths, h.Path)
	}
	if !slices.Contains(paths, moved) || slices.Contains(paths, retryPath) {
		t.Errorf("search finds %v", paths)
	}
	read, err := e.Read(api.ReadParams{Path: moved})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read.Backlinks, []string{"finance/billing/dunning_emails.md"}) {
		t.Errorf("backlinks = %v", read.Backlinks)
	}
	earned = e.signals.Of(moved) // the read counted
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := readState(t, fs).Entries[retryPath]; ok {
		t.Error("the old path kept its signal in state.json")
	}
	e, _ = openEngine(t, fs, c, Options{})
	defer e.Close()
	if s := e.signals.Of(moved); s != earned {
		t.Errorf("reopened: moved signal = %+v, want %+v", s, earned)
	}
	if _, err := e.Read(api.ReadParams{Path: retryPath}); err == nil {
		t.Error("the old path still reads")
	}
}

// A person saves an entry with a link to what a MOVE or a MERGE then moves
// or merges away, after the engine read the tree (an editor between the
// open and the curate, with no watcher to tell), and writes a new one with
// such a link: the operation rewrites those links too, as the files on
// disk now say, not as the open read them.
func TestMoveAndMergeRewriteLinksSavedSinceTheOpen(t *testing.T) {
	const (
		note    = "ops/notes/weekly.md"
		fresh   = "ops/notes/fresh.md"
		dunning = "engineering/billing/dunning_emails.md"
	)
	saved := "---\ntitle: Weekly\nrelated: [" + retryPath + "]\n---\n\nSaved after the open.\n"
	for _, tc := range []struct {
		op   map[string]any
		want string
	}{
		{map[string]any{"type": "MOVE", "path": "engineering/billing", "to": "finance/billing", "reason": "billing belongs to finance"}, "finance/billing/invoice_retry_policy.md"},
		{map[string]any{"type": "MERGE", "path": retryPath, "mergeTarget": dunning, "reason": "one entry"}, dunning},
	} {
		fs := newFS(t, map[string]string{retryPath: billingEntry, dunning: linkingEntry, note: "---\ntitle: Weekly\n---\n\nNo links yet.\n"})
		e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
		for _, p := range []string{note, fresh} {
			if err := fs.WriteFile(p, []byte(saved)); err != nil {
				t.Fatal(err)
			}
		}
		curateOps(t, e, tc.op)
		for _, p := range []string{note, fresh} {
			if b, _ := fs.ReadFile(p); string(b) != strings.ReplaceAll(saved, retryPath, tc.want) {
				t.Errorf("%s: %s, saved since the open, is\n%s", tc.op["type"], p, b)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
