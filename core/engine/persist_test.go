package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// warnLog records warn lines.
type warnLog struct {
	mu    sync.Mutex
	warns []string
}

func (l *warnLog) Log(level, msg string) {
	if level == "warn" {
		l.mu.Lock()
		l.warns = append(l.warns, msg)
		l.mu.Unlock()
	}
}

func indexStats(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	ix, ok := res["index"].(map[string]any)
	if !ok {
		t.Fatalf("open result has no index stats: %v", res)
	}
	return ix
}

func wantIndex(t *testing.T, label string, res map[string]any, reused, indexed, removed float64) {
	t.Helper()
	ix := indexStats(t, res)
	if ix["reused"] != reused || ix["indexed"] != indexed || ix["removed"] != removed {
		t.Errorf("%s: index %v, want reused %v, indexed %v, removed %v", label, ix, reused, indexed, removed)
	}
}

func searchPaths(t *testing.T, s *Session, q string) []string {
	t.Helper()
	res, errObj := call(t, s, "search", map[string]any{"query": q, "limit": 20})
	if errObj != nil {
		t.Fatalf("search %q: %v", q, errObj)
	}
	var out []string
	for _, h := range res["results"].([]any) {
		out = append(out, h.(map[string]any)["path"].(string))
	}
	return out
}

func closeSession(t *testing.T, s *Session) {
	t.Helper()
	if _, errObj := call(t, s, "close", nil); errObj != nil {
		t.Fatalf("close: %v", errObj)
	}
}

const contextFile = "---\ntitle: Billing\n---\n\nEverything about invoices and payments.\n"

func TestOpenUsesPersistedIndex(t *testing.T) {
	files := map[string]string{
		"engineering/billing/invoice_retry_policy.md": billingEntry,
		"engineering/billing/dunning_emails.md":       linkingEntry,
		"engineering/billing/context.md":              contextFile,
	}
	s, fs := newSession(t, files)
	wantIndex(t, "first open", mustOpen(t, s), 0, 3, 0)
	closeSession(t, s)
	if _, err := fs.ReadFile(IndexDir + "/manifest.bin"); err != nil {
		t.Fatalf("close did not persist the index: %v", err)
	}

	log := &warnLog{}
	s = NewSession(fs, log)
	wantIndex(t, "reopen", mustOpen(t, s), 3, 0, 0)
	if got := searchPaths(t, s, "invoice retried"); len(got) == 0 || got[0] != "engineering/billing/invoice_retry_policy.md" {
		t.Errorf("reopened search: %v", got)
	}
	closeSession(t, s)

	// Edited on disk between opens: an entry and a context.md; one deleted.
	edited := strings.Replace(billingEntry, "escalated to the billing lead", "escalated to the walrus desk", 1)
	if err := fs.WriteFile("engineering/billing/invoice_retry_policy.md", []byte(edited)); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("engineering/billing/context.md", []byte(strings.Replace(contextFile, "payments", "walrus refunds", 1))); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove("engineering/billing/dunning_emails.md"); err != nil {
		t.Fatal(err)
	}
	s = NewSession(fs, log)
	wantIndex(t, "after edits", mustOpen(t, s), 0, 2, 1)
	got := searchPaths(t, s, "walrus")
	if strings.Join(got, " ") != "engineering/billing/context.md engineering/billing/invoice_retry_policy.md" &&
		strings.Join(got, " ") != "engineering/billing/invoice_retry_policy.md engineering/billing/context.md" {
		t.Errorf("walrus: %v, want the edited entry and context.md", got)
	}
	if got := searchPaths(t, s, "dunning"); len(got) != 0 {
		t.Errorf("dunning: %v, want nothing after the file was deleted", got)
	}
	if got := searchPaths(t, s, "lead"); len(got) != 0 {
		t.Errorf("the replaced text is still found: %v", got)
	}

	// Curate, then flush: the next open reuses the curated entry.
	res, errObj := call(t, s, "curate", map[string]any{"operations": []map[string]any{{
		"type": "ADD", "path": "engineering/billing", "title": "Walrus Pricing",
		"content": map[string]any{"narrative": "walrus tier costs more"}, "reason": "test",
	}}})
	if errObj != nil || res["summary"].(map[string]any)["added"] != 1.0 {
		t.Fatalf("curate: %v %v", res, errObj)
	}
	if _, errObj := call(t, s, "flush", nil); errObj != nil {
		t.Fatalf("flush: %v", errObj)
	}
	// No close: as if the process ended right after the flush.
	s = NewSession(fs, log)
	res = mustOpen(t, s)
	wantIndex(t, "after flush", res, res["entries"].(float64)+res["contexts"].(float64), 0, 0)
	if len(log.warns) != 0 {
		t.Errorf("warnings: %v", log.warns)
	}
}

func TestOpenRebuildsCorruptIndex(t *testing.T) {
	s, fs := newSession(t, map[string]string{"engineering/billing/invoice_retry_policy.md": billingEntry})
	mustOpen(t, s)
	want := searchPaths(t, s, "invoice retry")
	closeSession(t, s)
	if err := fs.WriteFile(IndexDir+"/manifest.bin", []byte("not a manifest")); err != nil {
		t.Fatal(err)
	}
	log := &warnLog{}
	s = NewSession(fs, log)
	res := mustOpen(t, s)
	wantIndex(t, "corrupt manifest", res, 0, 1, 0)
	if len(log.warns) != 1 || !strings.Contains(log.warns[0], "rebuilding") {
		t.Errorf("warnings %v, want one about the rebuild", log.warns)
	}
	if ws := res["warnings"].([]any); len(ws) != 0 {
		t.Errorf("open warnings %v: the index is not a file of the tree", ws)
	}
	if got := searchPaths(t, s, "invoice retry"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after the rebuild: %v, want %v", got, want)
	}
}

func TestIndexIsNotPartOfTheTree(t *testing.T) {
	s, fs := newSession(t, map[string]string{"engineering/billing/invoice_retry_policy.md": billingEntry})
	mustOpen(t, s)
	closeSession(t, s)
	s = NewSession(fs, host.NopLogger{})
	res := mustOpen(t, s)
	if res["entries"] != 1.0 || len(res["warnings"].([]any)) != 0 {
		t.Errorf("reopen: %v: .arbor/index must not be read as entries", res)
	}
}

func TestBulkCuratePersistsTheIndex(t *testing.T) {
	s, fs := newSession(t, nil)
	mustOpen(t, s)
	var ops []map[string]any
	for i := range FlushAfter {
		ops = append(ops, map[string]any{"type": "ADD", "path": "research/bulk", "title": fmt.Sprintf("Bulk note %d", i),
			"content": map[string]any{"narrative": "imported"}, "reason": "bulk import"})
	}
	small := ops[:1]
	ops = ops[1:]
	if _, errObj := call(t, s, "curate", map[string]any{"operations": small}); errObj != nil {
		t.Fatal(errObj)
	}
	if _, err := fs.ReadFile(IndexDir + "/manifest.bin"); err == nil {
		t.Fatal("a one-entry curate persisted the index")
	}
	if _, errObj := call(t, s, "curate", map[string]any{"operations": ops}); errObj != nil {
		t.Fatal(errObj)
	}
	// No flush, no close: as if the process ended here.
	s = NewSession(fs, nil)
	res := mustOpen(t, s)
	wantIndex(t, "after a bulk curate", res, res["entries"].(float64)+res["contexts"].(float64), 0, 0)
}
