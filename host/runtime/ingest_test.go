package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// TestIngest runs "ingest" through the wasm module: entries land on disk
// with their provenance, the manifest is written, a second ingest of the
// same files writes nothing, and bad input fails its file alone.
func TestIngest(t *testing.T) {
	dir := t.TempDir()
	e := newEngine(t, dir)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	var files []api.SourceFile
	for _, name := range []string{"guide.md", "invoice.eml", "team.ics", "retry.ts", "locomo_sample.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "core", "internal", "ingest", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, api.SourceFile{Name: "inbox/" + name, Content: string(b)})
	}
	bad := api.SourceFile{Name: "inbox/broken.json", Content: `{"a": }`}
	res, err := e.Ingest(ctx, api.IngestParams{Files: append(files, bad)})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Files != 6 || s.FailedFiles != 1 || s.Added != 1+1+3+6+6 || s.Failed != 0 {
		t.Fatalf("summary %+v", s)
	}
	if f := res.Files[5]; f.Status != "failed" || !strings.Contains(f.Message, "malformed JSON at line 1") {
		t.Errorf("bad file: %+v", f)
	}
	entry, err := os.ReadFile(filepath.Join(dir, "mail", "2026_01", "invoice_run_failed_retry_tonight.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Files:** inbox/invoice.eml", "**Author:** Ana Costa", "**Timestamp:** 2026-01-13T09:14:00Z", "connection pool was exhausted"} {
		if !strings.Contains(string(entry), want) {
			t.Errorf("mail entry lacks %q:\n%s", want, entry)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor", "ingest.json")); err != nil {
		t.Errorf("manifest: %v", err)
	}
	stamp := func() map[string]string {
		out := map[string]string{}
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.Contains(p, filepath.Join(".arbor", "index")) {
				out[p] = fi.ModTime().String() + "/" + fi.Name()
			}
			return nil
		})
		return out
	}
	before := stamp()
	res, err = e.Ingest(ctx, api.IngestParams{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Unchanged != 17 || s.Added+s.Updated+s.Deleted != 0 {
		t.Errorf("second ingest: %+v", s)
	}
	after := stamp()
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s was rewritten", p)
		}
	}
	q, err := e.Query(ctx, api.SearchParams{Query: "when is the sprint retrospective"})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Results) == 0 || q.Results[0].Path != "calendar/inbox_team/sprint_retrospective.md" {
		t.Errorf("query: %+v", q.Results)
	}
}
