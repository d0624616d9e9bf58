package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/ingest"
	"github.com/arbormem/arbor/core/internal/tree"
)

// watchFS records the writes and removals that reach the memory root, and
// fails writes and removals of the paths in fail.
type watchFS struct {
	host.FS
	writes []string
	fail   map[string]bool
}

func (w *watchFS) WriteFile(p string, data []byte) error {
	if w.fail[p] {
		return host.ErrIO
	}
	w.writes = append(w.writes, p)
	return w.FS.WriteFile(p, data)
}

func (w *watchFS) Remove(p string) error {
	if w.fail[p] {
		return host.ErrIO
	}
	w.writes = append(w.writes, "rm "+p)
	return w.FS.Remove(p)
}

func testFile(t *testing.T, name string) api.SourceFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "ingest", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return api.SourceFile{Name: name, Content: string(b)}
}

type clockVar struct{ t time.Time }

func (c *clockVar) Now() time.Time { return c.t }

func openIngest(t *testing.T, fs host.FS, clock host.Clock) *Engine {
	t.Helper()
	eng, _, err := Open(Options{FS: fs, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func mustIngest(t *testing.T, eng *Engine, p api.IngestParams) api.IngestResult {
	t.Helper()
	res, err := eng.Ingest(p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var (
	t1 = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	t2 = time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
)

func TestIngestUnchangedWritesNothing(t *testing.T) {
	mem := host.NewMemFS()
	clock := &clockVar{t1}
	eng := openIngest(t, mem, clock)
	files := []api.SourceFile{testFile(t, "guide.md"), testFile(t, "contacts.csv"), testFile(t, "locomo_sample.json"), testFile(t, "store.go")}
	res := mustIngest(t, eng, api.IngestParams{Files: files})
	want := api.IngestSummary{Files: 4, Added: 1 + 3 + 6 + 7}
	if res.Summary != want {
		t.Fatalf("first ingest: %+v, want %+v", res.Summary, want)
	}
	for _, f := range res.Files {
		if f.Status != api.IngestAdded || f.Failed != 0 || len(f.Applied) != f.Entries {
			t.Errorf("%s: %+v", f.Name, f)
		}
	}
	if _, ok := eng.catalog.Get("documents/guide/guide.md"); !ok {
		t.Fatal("no guide entry")
	}
	before := mem.Files()

	// The same files again, a month later, even after reopening: no write,
	// no timestamp churn.
	eng.Close()
	clock.t = t2
	w := &watchFS{FS: mem}
	eng = openIngest(t, w, clock)
	w.writes = nil
	res = mustIngest(t, eng, api.IngestParams{Files: files})
	if res.Summary != (api.IngestSummary{Files: 4, Unchanged: 17}) {
		t.Errorf("second ingest: %+v", res.Summary)
	}
	for _, f := range res.Files {
		if f.Status != api.IngestUnchanged || len(f.Applied) != 0 {
			t.Errorf("%s: %+v", f.Name, f)
		}
	}
	if len(w.writes) != 0 {
		t.Errorf("an unchanged ingest wrote %v", w.writes)
	}
	after := mem.Files()
	for p, b := range before {
		// The index and the catalog are caches, persisted at close.
		if !strings.HasPrefix(p, ".arbor/index") && p != api.CatalogFile && string(after[p]) != string(b) {
			t.Errorf("%s changed", p)
		}
	}
}

func TestIngestChangedFile(t *testing.T) {
	mem := host.NewMemFS()
	clock := &clockVar{t1}
	eng := openIngest(t, mem, clock)
	guide := testFile(t, "guide.md")
	mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{guide, testFile(t, "contacts.csv")}})

	// Secrets reworded, Examples removed, a section appended: the note's
	// entry is updated, the other source's left alone.
	changed := strings.Replace(guide.Content, "Secrets live in the vault; never in environment files.", "Secrets live in the vault and rotate every 90 days.", 1)
	changed = strings.Replace(changed, "Examples\n--------\n\nSee the `examples/` folder of each service.\n\n", "", 1)
	changed += "\n## Contacts\n\nThe platform team answers in #platform.\n"
	clock.t = t2
	res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{{Name: "guide.md", Content: changed}, testFile(t, "contacts.csv")}})
	f := res.Files[0]
	if f.Status != api.IngestUpdated || f.Added != 0 || f.Updated != 1 || f.Deleted != 0 || f.Unchanged != 0 || f.Failed != 0 ||
		len(f.Applied) != 1 || f.Applied[0].Type+" "+f.Applied[0].Path != "UPDATE documents/guide/guide.md" {
		t.Fatalf("changed file: %+v", f)
	}
	if c := res.Files[1]; c.Status != api.IngestUnchanged || len(c.Applied) != 0 {
		t.Errorf("unchanged file: %+v", c)
	}
	e, _ := eng.catalog.Get("documents/guide/guide.md")
	if !strings.Contains(e.Narrative.Text, "rotate every 90 days") || strings.Contains(e.Narrative.Text, "environment files") ||
		strings.Contains(e.Narrative.Text, "examples/") || !strings.Contains(e.Narrative.Text, "#### Contacts\n\nThe platform team") ||
		!e.CreatedAt.Equal(t1) || !e.UpdatedAt.Equal(t2) || e.RawConcept.Task != "Note (lines 7-44)" {
		t.Errorf("guide: %+v", e)
	}
	man := readManifest(t, mem)
	rec := man.Sources["guide.md"]
	if rec == nil || rec.Hash != ingest.SourceHash(api.SourceFile{Name: "guide.md", Content: changed}, api.IngestOptions{}) || len(rec.Entries) != 1 {
		t.Fatalf("manifest: %+v", rec)
	}
}

func readManifest(t *testing.T, fs host.FS) *ingest.Manifest {
	t.Helper()
	b, err := fs.ReadFile(ingest.ManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ingest.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIngestBadFileWritesNothingOfIt(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{
		{Name: "people.csv", Content: "name,role\nAna,lead\nBruno\n"},
		testFile(t, "contacts.csv"),
		{Name: "notes.txt", Content: "caf\xe9"},
		{Name: "contacts.csv", Content: "name\nx\n"},
	}})
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Name+" "+f.Status] = f.Message
	}
	for key, msg := range map[string]string{
		"people.csv failed":   "malformed CSV: record on line 3: wrong number of fields",
		"contacts.csv added":  "",
		"notes.txt failed":    "not valid UTF-8",
		"contacts.csv failed": "listed twice",
	} {
		if m, ok := got[key]; !ok || !strings.Contains(m, msg) {
			t.Errorf("%s: got %v, want message %q", key, got, msg)
		}
	}
	if res.Summary.FailedFiles != 3 || res.Summary.Added != 3 {
		t.Errorf("summary %+v", res.Summary)
	}
	for p := range mem.Files() {
		if strings.Contains(p, "people") || strings.Contains(p, "notes") {
			t.Errorf("bad input wrote %s", p)
		}
	}
	man := readManifest(t, mem)
	if len(man.Sources) != 1 || man.Sources["contacts.csv"] == nil {
		t.Errorf("manifest sources: %v", man.Sources)
	}
}

func TestIngestRecoversWithoutManifest(t *testing.T) {
	mem := host.NewMemFS()
	clock := &clockVar{t1}
	eng := openIngest(t, mem, clock)
	files := []api.SourceFile{testFile(t, "guide.md"), testFile(t, "team.ics")}
	mustIngest(t, eng, api.IngestParams{Files: files})
	entries := len(eng.catalog.Paths())
	before := map[string]string{}
	for _, p := range eng.catalog.Paths() {
		b, _ := mem.ReadFile(p)
		before[p] = string(b)
	}
	for _, damage := range []string{"lost", "corrupt"} {
		if damage == "lost" {
			mem.Remove(ingest.ManifestPath)
		} else {
			mem.WriteFile(ingest.ManifestPath, []byte("{not json"))
		}
		clock.t = clock.t.Add(time.Hour)
		res := mustIngest(t, eng, api.IngestParams{Files: files})
		// The entries are found by their provenance, and their stamps say
		// which piece each holds: none is written again (before the
		// stamps, each was rewritten once, a change in every teammate's
		// clone), none duplicated.
		if res.Summary.Added != 0 || res.Summary.Updated != 0 || res.Summary.Unchanged != 4 || res.Summary.Failed != 0 || len(eng.catalog.Paths()) != entries {
			t.Errorf("%s manifest: %+v, %d entries (had %d)", damage, res.Summary, len(eng.catalog.Paths()), entries)
		}
		for p, was := range before {
			if b, _ := mem.ReadFile(p); string(b) != was {
				t.Errorf("%s manifest: %s written again:\n%s", damage, p, b)
			}
		}
		for _, f := range res.Files {
			if f.Status != api.IngestUnchanged {
				t.Errorf("%s manifest: %s %s, though nothing was written", damage, f.Name, f.Status)
			}
		}
		res = mustIngest(t, eng, api.IngestParams{Files: files})
		if res.Summary.Unchanged != 4 || res.Summary.Updated != 0 {
			t.Errorf("%s manifest, third ingest: %+v", damage, res.Summary)
		}
	}
	if b, err := mem.ReadFile(".arbor/ingest.corrupt.json"); err != nil || string(b) != "{not json" {
		t.Errorf("corrupt manifest not kept: %q %v", b, err)
	}
}

// A manifest older than the tree (its last write was lost, or a backup
// was restored): the entries written since are the source's by their
// provenance and are rewritten; before, curate refused to ADD them again
// on every ingest.
func TestIngestRecoversFromAStaleManifest(t *testing.T) {
	mem := host.NewMemFS()
	clock := &clockVar{t1}
	eng := openIngest(t, mem, clock)
	v1 := api.SourceFile{Name: "notes.jsonl", Content: `{"title":"Alpha","text":"a"}` + "\n"}
	v2 := api.SourceFile{Name: "notes.jsonl", Content: v1.Content + `{"title":"Beta","text":"b"}` + "\n"}
	mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{v1}})
	stale, err := mem.ReadFile(ingest.ManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{v2}})
	mem.WriteFile(ingest.ManifestPath, stale)
	for i := range 2 {
		clock.t = clock.t.Add(time.Hour)
		res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{v2}})
		if f := res.Files[0]; f.Status == api.IngestFailed || f.Failed != 0 {
			t.Fatalf("ingest %d after the stale manifest: %+v", i+1, f)
		}
	}
	if rec := readManifest(t, mem).Sources["notes.jsonl"]; len(rec.Entries) != 2 {
		t.Errorf("manifest: %+v", rec)
	}
}

func TestIngestLeavesUserEntriesAlone(t *testing.T) {
	mem := host.NewMemFS()
	const mine = "---\ntitle: Guide\n---\n\n## Narrative\nMy own note about the guide.\n"
	mem.WriteFile("documents/guide/guide.md", []byte(mine))
	eng := openIngest(t, mem, &clockVar{t1})
	res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{testFile(t, "guide.md")}})
	if res.Summary.Added != 1 || res.Summary.Failed != 0 {
		t.Fatalf("%+v", res.Summary)
	}
	if b, _ := mem.ReadFile("documents/guide/guide.md"); string(b) != mine {
		t.Errorf("the user's entry was changed:\n%s", b)
	}
	e, ok := eng.catalog.Get("documents/guide/guide_2.md")
	if !ok || !strings.Contains(e.Narrative.Text, "vault") {
		t.Errorf("ingested note not at guide_2.md: %+v", e)
	}
	// Re-ingesting finds its own entry at guide_2.md again.
	mem.Remove(ingest.ManifestPath)
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{testFile(t, "guide.md")}})
	if res.Summary.Added != 0 || res.Summary.Unchanged != 1 {
		t.Errorf("re-ingest without manifest: %+v", res.Summary)
	}
}

func TestIngestFailedWriteIsRetried(t *testing.T) {
	mem := host.NewMemFS()
	w := &watchFS{FS: mem, fail: map[string]bool{"data/contacts/bruno_lima.md": true}}
	eng := openIngest(t, w, &clockVar{t1})
	contacts := testFile(t, "contacts.csv")
	res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{contacts}})
	f := res.Files[0]
	if f.Status != api.IngestFailed || f.Failed != 1 || f.Added != 2 || !strings.Contains(f.Message, "1 of 3 operations failed") {
		t.Fatalf("%+v", f)
	}
	if rec := readManifest(t, mem).Sources["contacts.csv"]; rec.Hash != "" || len(rec.Entries) != 2 {
		t.Errorf("manifest after a failed write: %+v", rec)
	}
	w.fail = nil
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{contacts}})
	f = res.Files[0]
	if f.Status != api.IngestUpdated || f.Added != 1 || f.Unchanged != 2 || len(f.Applied) != 1 || f.Applied[0].Path != "data/contacts/bruno_lima.md" {
		t.Errorf("retry: %+v", f)
	}
}

func TestIngestOverABI(t *testing.T) {
	s, fs := newSession(t, nil)
	if _, e := call(t, s, "open", map[string]any{"fixedTime": "2026-01-01T00:00:00Z"}); e != nil {
		t.Fatal(e)
	}
	res, e := call(t, s, "ingest", map[string]any{"files": []map[string]any{{"name": "notes/plan.md", "content": "# Plan\n\nShip in May.\n"}}, "domain": "Work"})
	if e != nil {
		t.Fatal(e)
	}
	files := res["files"].([]any)
	f := files[0].(map[string]any)
	applied := f["applied"].([]any)[0].(map[string]any)
	if f["status"] != "added" || f["format"] != "markdown" || applied["path"] != "work/notes/plan.md" {
		t.Errorf("result: %v", res)
	}
	b, _ := fs.ReadFile("work/notes/plan.md")
	for _, want := range []string{"**Files:** notes/plan.md", "**Task:** Note (line 3)", "Ship in May.", "## Reason\ningest notes/plan.md"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("entry lacks %q:\n%s", want, b)
		}
	}
	for _, bad := range []any{map[string]any{"files": "x"}, map[string]any{"files": []any{}, "contextTurns": -1}} {
		if _, e := call(t, s, "ingest", bad); e == nil || e["code"] != api.CodeInvalidParams {
			t.Errorf("%v: error %v", bad, e)
		}
	}
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), `"summary":{"added":1,"deleted":0,"failed":0,"failedFiles":0,"files":1`) {
		t.Errorf("summary: %s", raw)
	}
}

// pruneFolder is a folder of three sources, and one source outside it.
var pruneFolder = []api.SourceFile{
	{Name: "notes/a.md", Content: "# Alpha\n\nThe alpha plan ships in May.\n"},
	{Name: "notes/b.jsonl", Content: `{"title":"One","text":"First thing."}` + "\n" + `{"title":"Two","text":"Second thing."}` + "\n" + `{"title":"Three","text":"Third thing."}` + "\n"},
	{Name: "notes/c.csv", Content: "name,role\nAna,lead\nBruno,ops\n"},
	{Name: "other/d.md", Content: "# Delta\n\nOutside the folder.\n"},
}

// dropSource returns files minus the one named name.
func dropSource(files []api.SourceFile, name string) []api.SourceFile {
	var out []api.SourceFile
	for _, f := range files {
		if f.Name != name {
			out = append(out, f)
		}
	}
	return out
}

// entryPaths returns the entry paths of the catalog, sorted.
func entryPaths(eng *Engine) string { return strings.Join(eng.catalog.Paths(), "\n") }

func TestIngestPrune(t *testing.T) {
	mem := host.NewMemFS()
	clock := &clockVar{t1}
	eng := openIngest(t, mem, clock)
	mustIngest(t, eng, api.IngestParams{Files: pruneFolder})
	// The user writes a note beside b's entries and takes one of them over
	// (its reason is no longer "ingest notes/b.jsonl"): both are theirs now.
	res := eng.Curate(api.CurateParams{Operations: []api.Operation{
		{Type: api.OpAdd, Path: "data/notes_b/mine.md", Title: "Mine", Content: api.Content{Narrative: &api.Narrative{Text: "My own note."}}, Reason: "a note of mine"},
		{Type: api.OpUpdate, Path: "data/notes_b/two.md", Title: "Two", Content: api.Content{Narrative: &api.Narrative{Text: "Second thing, rewritten by hand."}}, Reason: "kept by hand"},
	}})
	if res.Summary.Failed != 0 {
		t.Fatalf("user writes: %+v", res.Applied)
	}
	before := entryPaths(eng)

	// notes/b.md is gone from the folder.
	clock.t = t2
	res2 := mustIngest(t, eng, api.IngestParams{Files: dropSource(pruneFolder, "notes/b.jsonl")[:2], Prune: []string{"notes/"}})
	if res2.Summary != (api.IngestSummary{Files: 3, Removed: 1, Deleted: 2, Unchanged: 3}) {
		t.Errorf("summary %+v", res2.Summary)
	}
	removed := res2.Files[2]
	var ops []string
	for _, a := range removed.Applied {
		ops = append(ops, a.Type+" "+a.Path+" "+a.Status)
	}
	if removed.Name != "notes/b.jsonl" || removed.Status != api.IngestRemoved || removed.Format != "jsonl" || removed.Deleted != 2 || removed.Entries != 0 ||
		strings.Join(ops, ", ") != "DELETE data/notes_b/one.md success, DELETE data/notes_b/three.md success" {
		t.Errorf("removed item: %+v", removed)
	}
	want := strings.NewReplacer("data/notes_b/one.md\n", "", "data/notes_b/three.md\n", "").Replace(before)
	if got := entryPaths(eng); got != want {
		t.Errorf("entries after the prune:\n%s\nwant\n%s", got, want)
	}
	if e, ok := eng.catalog.Get("data/notes_b/two.md"); !ok || !strings.Contains(e.Narrative.Text, "by hand") {
		t.Errorf("the entry the user took over: %+v", e)
	}
	man := readManifest(t, mem)
	if _, ok := man.Sources["notes/b.jsonl"]; ok || len(man.Sources) != 3 {
		t.Errorf("manifest sources after the prune: %v", man.Sources)
	}

	// Again: nothing to remove, nothing written.
	w := &watchFS{FS: mem}
	eng.Close()
	eng = openIngest(t, w, clock)
	w.writes = nil
	res2 = mustIngest(t, eng, api.IngestParams{Files: dropSource(pruneFolder, "notes/b.jsonl")[:2], Prune: []string{"notes/"}})
	if res2.Summary != (api.IngestSummary{Files: 2, Unchanged: 3}) || len(w.writes) != 0 {
		t.Errorf("second prune: %+v, wrote %v", res2.Summary, w.writes)
	}

	// Keep spares a source the call does not send; the "" prefix reaches
	// every other one.
	res2 = mustIngest(t, eng, api.IngestParams{Prune: []string{""}, Keep: []string{"notes/a.md"}})
	var names []string
	for _, f := range res2.Files {
		names = append(names, f.Name+" "+f.Status)
	}
	if strings.Join(names, ", ") != "notes/c.csv removed, other/d.md removed" || res2.Summary != (api.IngestSummary{Files: 2, Removed: 2, Deleted: 3}) {
		t.Errorf("prune everything but notes/a.md: %v %+v", names, res2.Summary)
	}
	if got := entryPaths(eng); got != "data/notes_b/mine.md\ndata/notes_b/two.md\nnotes/a/a.md" {
		t.Errorf("entries left:\n%s", got)
	}
}

func TestIngestPruneWithoutManifest(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: pruneFolder})
	// Without a record, the entries are b's by their provenance; one the
	// user took over keeps the source in its Raw Concept but is theirs.
	res0 := eng.Curate(api.CurateParams{Operations: []api.Operation{
		{Type: api.OpUpdate, Path: "data/notes_b/two.md", Title: "Two", Content: api.Content{Narrative: &api.Narrative{Text: "Second thing, by hand."}}, Reason: "kept by hand"},
	}})
	if e, _ := eng.catalog.Get("data/notes_b/two.md"); res0.Summary.Failed != 0 || !slices.Contains(e.RawConcept.Files, "notes/b.jsonl") {
		t.Fatalf("take-over: %+v", res0.Applied)
	}
	mem.Remove(ingest.ManifestPath)
	res := mustIngest(t, eng, api.IngestParams{Files: dropSource(pruneFolder, "notes/b.jsonl"), Prune: []string{"notes/"}})
	if res.Summary != (api.IngestSummary{Files: 4, Removed: 1, Unchanged: 4, Deleted: 2}) {
		t.Errorf("summary %+v", res.Summary)
	}
	if f := res.Files[3]; f.Name != "notes/b.jsonl" || f.Status != api.IngestRemoved || f.Deleted != 2 {
		t.Errorf("removed item: %+v", f)
	}
	want := "data/notes_b/two.md\ndata/notes_c/ana.md\ndata/notes_c/bruno.md\nnotes/a/a.md\nother/d/d.md"
	if got := entryPaths(eng); got != want {
		t.Errorf("entries:\n%s\nwant\n%s", got, want)
	}
	if man := readManifest(t, mem); len(man.Sources) != 3 || man.Sources["notes/b.jsonl"] != nil {
		t.Errorf("manifest sources: %v", man.Sources)
	}
}

func TestIngestPruneRefusesBadPrefixes(t *testing.T) {
	mem := host.NewMemFS()
	w := &watchFS{FS: mem}
	eng := openIngest(t, w, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: pruneFolder})
	w.writes = nil
	for _, bad := range []string{"/notes/", "../notes/", "notes/../other/", "C:/notes", "notes/\xff/", ".arbor/"} {
		_, err := eng.Ingest(api.IngestParams{Files: pruneFolder[:1], Prune: []string{"notes/", bad}})
		var e *api.Error
		if !errors.As(err, &e) || e.Code != api.CodeInvalidParams || !strings.Contains(e.Message, "prune: ") {
			t.Errorf("prefix %q: error %v", bad, err)
		}
	}
	if len(w.writes) != 0 || len(eng.catalog.Paths()) != 7 {
		t.Errorf("refused calls wrote %v; %d entries", w.writes, len(eng.catalog.Paths()))
	}
}

func TestIngestPruneFailedDeleteIsRetried(t *testing.T) {
	mem := host.NewMemFS()
	w := &watchFS{FS: mem}
	eng := openIngest(t, w, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: pruneFolder})
	w.fail = map[string]bool{"data/notes_b/two.md": true}
	rest := dropSource(pruneFolder, "notes/b.jsonl")
	res := mustIngest(t, eng, api.IngestParams{Files: rest, Prune: []string{"notes/"}})
	f := res.Files[3]
	if f.Status != api.IngestFailed || f.Deleted != 2 || f.Failed != 1 || !strings.Contains(f.Message, "1 of 3 deletions failed") ||
		res.Summary != (api.IngestSummary{Files: 4, FailedFiles: 1, Deleted: 2, Unchanged: 4, Failed: 1}) {
		t.Fatalf("failed delete: %+v\n%+v", f, res.Summary)
	}
	rec := readManifest(t, mem).Sources["notes/b.jsonl"]
	if rec == nil || rec.Hash != "" || len(rec.Entries) != 1 || rec.Entries["data/notes_b/two.md"] == "" {
		t.Errorf("record after the failed delete: %+v", rec)
	}
	w.fail = nil
	res = mustIngest(t, eng, api.IngestParams{Files: rest, Prune: []string{"notes/"}})
	if f := res.Files[3]; f.Status != api.IngestRemoved || len(f.Applied) != 1 || f.Applied[0].Path != "data/notes_b/two.md" || res.Summary.Removed != 1 {
		t.Errorf("retry: %+v", f)
	}
	if _, ok := readManifest(t, mem).Sources["notes/b.jsonl"]; ok {
		t.Error("the record survives a successful retry")
	}
	if strings.Contains(entryPaths(eng), "notes_b") {
		t.Errorf("entries:\n%s", entryPaths(eng))
	}
}

func TestIngestPruneOverABI(t *testing.T) {
	s, _ := newSession(t, nil)
	if _, e := call(t, s, "open", map[string]any{"fixedTime": "2026-01-01T00:00:00Z"}); e != nil {
		t.Fatal(e)
	}
	files := []map[string]any{{"name": "notes/plan.md", "content": "# Plan\n\nShip in May.\n"}, {"name": "notes/old.md", "content": "# Old\n\nGone soon.\n"}}
	if _, e := call(t, s, "ingest", map[string]any{"files": files}); e != nil {
		t.Fatal(e)
	}
	res, e := call(t, s, "ingest", map[string]any{"files": files[:1], "prune": []string{"notes/"}})
	if e != nil {
		t.Fatal(e)
	}
	raw, _ := json.Marshal(res)
	for _, want := range []string{
		`{"added":0,"applied":[{"message":"deleted notes/old/old.md","path":"notes/old/old.md","status":"success","type":"DELETE"}],"deleted":1,"entries":0,"failed":0,"format":"markdown","name":"notes/old.md","status":"removed","unchanged":0,"updated":0}`,
		`"summary":{"added":0,"deleted":1,"failed":0,"failedFiles":0,"files":2,"removed":1,"unchanged":1,"updated":0}`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("result lacks %s:\n%s", want, raw)
		}
	}
	if _, e := call(t, s, "ingest", map[string]any{"files": files[:1], "prune": []string{"../"}}); e == nil || e["code"] != api.CodeInvalidParams {
		t.Errorf("prune ../: error %v", e)
	}
}

// TestIngestAnyHeading ingests a note whose headings are named like the
// folder's context file, the sections of an entry and the parts of its
// narrative: they stay headings of the entry's narrative, their levels 2, 3
// and 4 renested as 4, 5 and 6 below its own, and read back from disk as
// nothing but narrative.
func TestIngestAnyHeading(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	bodies := []struct{ heading, body, want string }{
		{"Context", "Why we moved the queue to Lisbon.", ""},
		{"Reason", "The old broker lost messages.", ""},
		{"Raw Concept", "**Task:** not a field of this entry", ""},
		{"Narrative", "A story.\n\n#### Narrative\n\nA deeper heading stays.", "A story.\n\n###### Narrative\n\nA deeper heading stays."},
		{"Facts", "- broker: RabbitMQ", ""},
		{"Snippets", "```\n## Reason\ninside a fence\n```", ""},
		{"Relations", "@ops/queue/lisbon.md", ""},
		{"Rules", "### Highlights\n\nNot a part of the narrative.", "##### Highlights\n\nNot a part of the narrative."},
	}
	var doc, want strings.Builder
	doc.WriteString("# Queue\n")
	for i, b := range bodies {
		doc.WriteString("\n## " + b.heading + "\n\n" + b.body + "\n")
		if i > 0 {
			want.WriteString("\n\n")
		}
		want.WriteString("#### " + b.heading + "\n\n" + cmp.Or(b.want, b.body))
	}
	files := []api.SourceFile{{Name: "queue.md", Content: doc.String()}}
	res := mustIngest(t, eng, api.IngestParams{Files: files})
	if f := res.Files[0]; f.Status != api.IngestAdded || f.Added != 1 || f.Failed != 0 {
		t.Fatalf("ingest: %+v", f)
	}
	const p = "documents/queue/queue.md"
	data, err := mem.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	en, err := tree.ParseEntry(p, data)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if en.Title != "Queue" || en.Narrative.Text != want.String() || en.Reason != "ingest queue.md" || en.RawConcept.Task != "Note (lines 3-42)" ||
		en.Narrative.Rules != "" || en.Narrative.Highlights != "" ||
		len(en.Related) != 0 || len(en.Facts) != 0 || len(en.Snippets) != 0 || len(en.Other) != 0 || len(en.LegacyRelations) != 0 {
		t.Errorf("%s: title %q, narrative %q, task %q, related %v, facts %v, snippets %v, other %v", p, en.Title, en.Narrative.Text, en.RawConcept.Task, en.Related, en.Facts, en.Snippets, en.Other)
	}
}

// TestIngestDetectsEncodings sends files as bytes over the ABI (base64
// "data"): Windows-1252 and UTF-16 are decoded, the same text sent as
// UTF-8 content afterwards is unchanged, and a file that is no text fails
// alone, with the reason.
func TestIngestDetectsEncodings(t *testing.T) {
	s, fs := newSession(t, nil)
	if _, e := call(t, s, "open", map[string]any{"fixedTime": "2026-01-01T00:00:00Z"}); e != nil {
		t.Fatal(e)
	}
	utf16le := []byte{0xFF, 0xFE}
	for _, r := range "Tea\r\n\r\nThé à la menthe.\r\n" {
		utf16le = append(utf16le, byte(r), 0) // every rune is in the BMP below U+0100
	}
	res, e := call(t, s, "ingest", map[string]any{"files": []map[string]any{
		{"name": "prices.txt", "data": []byte("Prices\n\n\x93Caf\xe9\x94 costs \x805.\n")},
		{"name": "tea.txt", "data": utf16le},
		{"name": "blob.txt", "data": []byte("GIF89a\x81\x8d")},
	}})
	if e != nil {
		t.Fatal(e)
	}
	var got []string
	for _, f := range res["files"].([]any) {
		f := f.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %v", f["name"], f["status"], f["message"]))
	}
	want := []string{"prices.txt added <nil>", "tea.txt added <nil>", "blob.txt failed bad input: neither UTF-8 nor Windows-1252 text: byte 0x81 at byte 6 (line 1); convert the file to UTF-8"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for p, text := range map[string]string{"documents/prices/prices.md": "Prices\n\n“Café” costs €5.", "documents/tea/tea.md": "Tea\n\nThé à la menthe."} {
		data, err := fs.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if en, err := tree.ParseEntry(p, data); err != nil || en.Narrative.Text != text {
			t.Errorf("%s: %q, %v", p, en.Narrative.Text, err)
		}
	}
	// The same texts as UTF-8 content: the sources are unchanged.
	res, e = call(t, s, "ingest", map[string]any{"files": []map[string]any{
		{"name": "prices.txt", "content": "Prices\n\n“Café” costs €5.\n"},
		{"name": "tea.txt", "content": "Tea\r\n\r\nThé à la menthe.\r\n"},
	}})
	if e != nil {
		t.Fatal(e)
	}
	for _, f := range res["files"].([]any) {
		if f := f.(map[string]any); f["status"] != "unchanged" {
			t.Errorf("as UTF-8: %v", f)
		}
	}
}

// TestIngestKeepsNoteShape ingests a small folder of notes: each note is
// one entry in the folder its file sits in, with its front matter's title,
// summary, tags, aliases, dates and other keys, its headings, and its links
// to the other notes as relations (with backlinks); a note moved away is
// updated where it now lives when it is ingested again.
func TestIngestKeepsNoteShape(t *testing.T) {
	mem := host.NewMemFS()
	clock := &clockVar{t2}
	eng := openIngest(t, mem, clock)
	files := []api.SourceFile{
		{Name: "notes/billing/stripe/webhooks.md", Content: "---\ntitle: Stripe webhooks\ndescription: How Stripe's events reach us.\n" +
			"tags: [billing, stripe]\naliases: [hooks]\ncreated: 2025-06-01\nupdated: 2025-07-15T08:00:00Z\nimportance: 80\nowner: ana\n---\n" +
			"# Stripe webhooks\n\nEvents are retried, see [retries](../retries.md).\n\n## Signing\n\nEvery event is signed.\n\n### Rotation\n\nKeys rotate yearly.\n"},
		{Name: "notes/billing/retries.md", Content: "# Retries\n\nFailed invoices are retried three times; the [[hooks]] say when.\n"},
		{Name: "notes/todo.md", Content: "Check [[webhooks]] and [[nowhere]].\n"},
	}
	res := mustIngest(t, eng, api.IngestParams{Files: files})
	if res.Summary != (api.IngestSummary{Files: 3, Added: 3}) {
		t.Fatalf("ingest: %+v", res.Summary)
	}
	const hooks = "notes/billing/stripe/webhooks.md"
	e, ok := eng.catalog.Get(hooks)
	if !ok {
		t.Fatalf("no %s: %s", hooks, entryPaths(eng))
	}
	day := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	if e.Title != "Stripe webhooks" || e.Summary != "How Stripe's events reach us." || !slices.Equal(e.Tags, []string{"billing", "stripe"}) ||
		!slices.Equal(e.Keywords, []string{"hooks"}) || !e.CreatedAt.Equal(day("2025-06-01T00:00:00Z")) || !e.UpdatedAt.Equal(day("2025-07-15T08:00:00Z")) ||
		!slices.Equal(e.Related, []string{"notes/billing/retries.md"}) {
		t.Errorf("entry: %+v", e)
	}
	// The note's own keys, then the ingest's stamp.
	if want := []tree.KeyValue{{Key: "importance", Value: "80"}, {Key: "owner", Value: "ana"}}; len(e.Extra) != 3 || !slices.Equal(e.Extra[:2], want) || e.Extra[2].Key != tree.StampKey {
		t.Errorf("extra %v, want %v and the stamp", e.Extra, want)
	}
	if !strings.Contains(e.Narrative.Text, "#### Signing\n\nEvery event is signed.\n\n##### Rotation") || strings.Contains(e.Narrative.Text, "# Stripe webhooks") {
		t.Errorf("narrative:\n%s", e.Narrative.Text)
	}
	if s := eng.signals.Of(hooks); s.Importance != 80 {
		t.Errorf("importance %v, want the note's 80", s.Importance)
	}
	rd, err := eng.Read(api.ReadParams{Path: hooks})
	if err != nil || !slices.Equal(rd.Backlinks, []string{"notes/billing/retries.md", "notes/todo/todo.md"}) {
		t.Errorf("backlinks %v %v", rd.Backlinks, err)
	}
	todo, _ := eng.catalog.Get("notes/todo/todo.md")
	if !slices.Equal(todo.Related, []string{hooks}) || !strings.Contains(todo.Narrative.Text, "[[nowhere]]") {
		t.Errorf("todo: %+v", todo)
	}

	// The note moved by a MOVE is updated where it lives.
	mv := eng.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpMove, Path: hooks, To: "finance/stripe", Reason: "finance owns it"}}})
	if mv.Summary.Failed != 0 {
		t.Fatalf("move: %+v", mv.Applied)
	}
	// A note ingested later links to it where it now is.
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{{Name: "notes/later.md", Content: "See [[webhooks]].\n"}}})
	if later, _ := eng.catalog.Get("notes/later/later.md"); res.Summary.Added != 1 || !slices.Equal(later.Related, []string{"finance/stripe/webhooks.md"}) {
		t.Errorf("a link to the moved note: %+v %+v", res.Summary, later)
	}
	files[0].Content = strings.Replace(files[0].Content, "Keys rotate yearly.", "Keys rotate every six months.", 1)
	res = mustIngest(t, eng, api.IngestParams{Files: files})
	if f := res.Files[0]; f.Status != api.IngestUpdated || len(f.Applied) != 1 || f.Applied[0].Type+" "+f.Applied[0].Path != "UPDATE finance/stripe/webhooks.md" {
		t.Errorf("re-ingest after the move: %+v", f)
	}
	if _, ok := eng.catalog.Get(hooks); ok {
		t.Errorf("written again at its old path")
	}
	if e, _ := eng.catalog.Get("finance/stripe/webhooks.md"); !strings.Contains(e.Narrative.Text, "six months") {
		t.Errorf("moved entry not updated: %+v", e)
	}
	if rec := readManifest(t, mem).Sources[files[0].Name]; len(rec.Entries) != 1 || rec.Entries["finance/stripe/webhooks.md"] == "" {
		t.Errorf("manifest: %+v", rec)
	}
}

// A person who edits an ingested entry in their editor keeps the edit: a
// later change of the source does not overwrite it, nor a prune of the
// source delete it; each says so in the file's warnings. The entry's own
// stamp tells, so the same holds when the machine-local manifest is lost
// before each ingest (deleted, or a teammate's fresh clone of the tree):
// before the stamp, the edit was overwritten and the prune deleted it.
func TestIngestKeepsAPersonsEdit(t *testing.T) {
	for _, lose := range []bool{false, true} {
		t.Run(fmt.Sprintf("manifest lost %v", lose), func(t *testing.T) {
			mem := host.NewMemFS()
			eng := openIngest(t, mem, &clockVar{t1})
			const p = "documents/guide/guide.md"
			other := api.SourceFile{Name: "other.md", Content: "# Other\n\nElse.\n"}
			guide := func(s string) []api.SourceFile {
				return []api.SourceFile{{Name: "guide.md", Content: "# Guide\n\n## Setup\n\n" + s + "\n\n## Usage\n\nRun it.\n"}, other}
			}
			ingestAgain := func(p api.IngestParams) api.IngestResult {
				if lose {
					if err := mem.Remove(ingest.ManifestPath); err != nil {
						t.Fatal(err)
					}
				}
				return mustIngest(t, eng, p)
			}
			mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool.")})
			b, err := mem.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edited := string(b) + "\nA line of my own.\n"
			mem.WriteFile(p, []byte(edited))

			res := ingestAgain(api.IngestParams{Files: guide("Install the tool twice.")})
			if f := res.Files[0]; f.Updated != 0 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], p+" was edited since it was ingested") {
				t.Errorf("changed source: %+v", f)
			}
			if b, _ := mem.ReadFile(p); string(b) != edited {
				t.Errorf("the person's edit was overwritten:\n%s", b)
			}
			// Still theirs at the next change.
			res = ingestAgain(api.IngestParams{Files: guide("Install the tool three times.")})
			if b, _ := mem.ReadFile(p); string(b) != edited || res.Files[0].Updated != 0 {
				t.Errorf("second change: %+v\n%s", res.Files[0], b)
			}
			res = ingestAgain(api.IngestParams{Files: []api.SourceFile{other}, Prune: []string{""}})
			// A recorded source says why it keeps the entry; one known only
			// by the entry's provenance has nothing left to remove.
			if res.Summary.Deleted != 0 || !lose && (len(res.Files) != 2 || res.Files[1].Name != "guide.md" || len(res.Files[1].Warnings) != 1) {
				t.Errorf("prune: %+v", res.Files)
			}
			if b, _ := mem.ReadFile(p); string(b) != edited {
				t.Errorf("the prune removed the person's entry: %q", b)
			}
		})
	}
}

// An ingested entry a person moved by hand and edited stays theirs where
// it went, as one edited in place does; one moved with MOVE (its bytes
// kept) still follows its source there.
func TestIngestKeepsAPersonsEditOfAMovedEntry(t *testing.T) {
	guide := func(s string) []api.SourceFile {
		return []api.SourceFile{{Name: "guide.md", Content: "# Guide\n\n## Setup\n\n" + s + "\n\n## Usage\n\nRun it.\n"}}
	}
	const from, to = "documents/guide/guide.md", "work/q3/guide.md"

	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool.")})
	b, err := mem.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(b) + "\nA line of my own.\n"
	if err := mem.WriteFile(to, []byte(edited)); err != nil {
		t.Fatal(err)
	}
	if err := mem.Remove(from); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Refresh(api.RefreshParams{}); err != nil {
		t.Fatal(err)
	}
	res := mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool twice.")})
	if f := res.Files[0]; f.Updated != 0 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], to+" was edited since it was ingested") {
		t.Errorf("changed source: %+v", f)
	}
	if b, _ := mem.ReadFile(to); string(b) != edited {
		t.Errorf("the person's edit was overwritten:\n%s", b)
	}
	// Still theirs at the next change.
	mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool three times.")})
	if b, _ := mem.ReadFile(to); string(b) != edited {
		t.Errorf("second change: the person's edit was overwritten:\n%s", b)
	}
	if _, err := mem.Stat(from); err == nil {
		t.Errorf("written again at %s", from)
	}

	// A MOVE keeps the entry's bytes: it is the source's still.
	mem = host.NewMemFS()
	eng = openIngest(t, mem, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool.")})
	mv := api.Operation{Type: api.OpMove, Path: from, To: to, Reason: "reorganised"}
	if r := eng.Curate(api.CurateParams{Operations: []api.Operation{mv}}); r.Summary.Failed != 0 {
		t.Fatalf("MOVE: %+v", r)
	}
	res = mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool twice.")})
	if f := res.Files[0]; f.Updated != 1 || len(f.Warnings) != 0 {
		t.Errorf("after a MOVE: %+v", f)
	}
	if b, _ := mem.ReadFile(to); !strings.Contains(string(b), "Install the tool twice.") {
		t.Errorf("not updated where it went:\n%s", b)
	}
	// And there it stays at every later change: not added back where the
	// ingest first put it, the moved one deleted.
	res = mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool three times.")})
	if f := res.Files[0]; f.Updated != 1 || f.Added != 0 || f.Deleted != 0 {
		t.Errorf("second change after a MOVE: %+v", f)
	}
	if b, _ := mem.ReadFile(to); !strings.Contains(string(b), "Install the tool three times.") {
		t.Errorf("not updated where it went at the second change:\n%s", b)
	}
	if _, err := mem.Stat(from); err == nil {
		t.Errorf("written again at %s", from)
	}
}

// An ingested entry nobody edited follows its source.
func TestIngestUpdatesWhatNobodyEdited(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	src := func(s string) []api.SourceFile {
		return []api.SourceFile{{Name: "guide.md", Content: "# Guide\n\n" + s + "\n"}}
	}
	mustIngest(t, eng, api.IngestParams{Files: src("one")})
	res := mustIngest(t, eng, api.IngestParams{Files: src("two")})
	if f := res.Files[0]; f.Updated != 1 || len(f.Warnings) != 0 {
		t.Errorf("%+v", f)
	}
	// The file says it is as the ingest wrote it.
	for path := range readManifest(t, mem).Sources["guide.md"].Entries {
		b, err := mem.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if stamped, intact, piece := tree.Ingested(b); !stamped || !intact || piece != readManifest(t, mem).Sources["guide.md"].Entries[path] {
			t.Errorf("%s: stamped %v, intact %v:\n%s", path, stamped, intact, b)
		}
	}
}

// saveFS writes a person's edit of one file right after the next read of
// it: a save that lands between an ingest's plan and its writes.
type saveFS struct {
	host.FS
	path string
	edit func([]byte) []byte
}

func (s *saveFS) ReadFile(p string) ([]byte, error) {
	data, err := s.FS.ReadFile(p)
	if err == nil && p == s.path && s.edit != nil {
		edit := s.edit
		s.edit = nil
		if werr := s.FS.WriteFile(p, edit(data)); werr != nil {
			return nil, werr
		}
	}
	return data, err
}

// A person's save after the ingest read the entry (and found it as the
// ingest wrote it) is a conflict of the entry's UPDATE or DELETE, not
// overwritten; the next ingest then finds the edit and keeps it.
func TestIngestKeepsASaveAfterItsPlan(t *testing.T) {
	const p = "documents/guide/guide.md"
	guide := func(s string) []api.SourceFile {
		return []api.SourceFile{{Name: "guide.md", Content: "# Guide\n\n" + s + "\n"}}
	}
	mine := func(b []byte) []byte { return append(b, "\nA line of my own.\n"...) }
	for _, prune := range []bool{false, true} {
		t.Run(fmt.Sprintf("prune %v", prune), func(t *testing.T) {
			fs := &saveFS{FS: host.NewMemFS(), path: p}
			eng := openIngest(t, fs, &clockVar{t1})
			mustIngest(t, eng, api.IngestParams{Files: guide("one")})
			next := api.IngestParams{Files: guide("two")}
			if prune {
				next = api.IngestParams{Files: []api.SourceFile{{Name: "other.md", Content: "# Other\n"}}, Prune: []string{""}}
			}
			fs.edit = mine
			res := mustIngest(t, eng, next)
			b, err := fs.ReadFile(p)
			if err != nil || !strings.Contains(string(b), "A line of my own.") {
				t.Fatalf("the save was lost (%v):\n%s\n%+v", err, b, res.Files)
			}
			if res.Summary.Failed != 1 || res.Summary.Updated+res.Summary.Deleted != 0 {
				t.Errorf("%+v", res.Summary)
			}
			res = mustIngest(t, eng, next)
			if b2, _ := fs.ReadFile(p); string(b2) != string(b) || res.Summary.Failed != 0 {
				t.Errorf("next ingest: %+v\n%s", res.Summary, b2)
			}
		})
	}
}

// An ingested note whose link a MOVE of its target rewrites is still the
// ingest's: the engine's link upkeep renews its stamp, so the note's next
// change reaches it. Before, the rewrite made it "edited", and ingest
// left it behind its source for good, with a warning at every change.
func TestIngestFollowsANoteWhoseLinkAMoveRewrote(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	notes := func(s string) []api.SourceFile {
		return []api.SourceFile{
			{Name: "guide.md", Content: "# Guide\n\n" + s + " See [[setup]].\n"},
			{Name: "setup.md", Content: "# Setup\n\nInstall the tool.\n"},
		}
	}
	mustIngest(t, eng, api.IngestParams{Files: notes("Run it.")})
	const guide, from, to = "documents/guide/guide.md", "documents/setup/setup.md", "work/q3/setup.md"
	if e, ok := eng.catalog.Get(guide); !ok || !slices.Contains(e.Related, from) {
		t.Fatalf("guide: %+v (entries %s)", e, entryPaths(eng))
	}
	mv := api.Operation{Type: api.OpMove, Path: from, To: to, Reason: "reorganised"}
	if r := eng.Curate(api.CurateParams{Operations: []api.Operation{mv}}); r.Summary.Failed != 0 {
		t.Fatalf("MOVE: %+v", r)
	}
	b, _ := mem.ReadFile(guide)
	if _, intact, _ := tree.Ingested(b); !intact || !strings.Contains(string(b), to) {
		t.Fatalf("the MOVE's rewrite of the guide: intact %v\n%s", intact, b)
	}
	res := mustIngest(t, eng, api.IngestParams{Files: notes("Run it twice.")})
	if f := res.Files[0]; f.Updated != 1 || len(f.Warnings) != 0 {
		t.Errorf("changed guide: %+v", f)
	}
	if b, _ := mem.ReadFile(guide); !strings.Contains(string(b), "Run it twice.") || !strings.Contains(string(b), to) {
		t.Errorf("guide after its change:\n%s", b)
	}
}

// An entry a person edited, left as it is while its source changed, is
// the source's again once the person gives it back: deleted (as the
// warning says to) or reverted to the ingest's bytes, the next ingest
// writes the source's text, though the source has not changed since.
func TestIngestWritesAgainWhatAPersonGaveBack(t *testing.T) {
	const p = "documents/guide/guide.md"
	guide := func(s string) []api.SourceFile {
		return []api.SourceFile{{Name: "guide.md", Content: "# Guide\n\n" + s + "\n"}}
	}
	for _, giveBack := range []string{"delete", "revert"} {
		t.Run(giveBack, func(t *testing.T) {
			mem := host.NewMemFS()
			eng := openIngest(t, mem, &clockVar{t1})
			mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool.")})
			ingested, err := mem.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			mem.WriteFile(p, append(slices.Clone(ingested), "\nA line of my own.\n"...))
			res := mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool twice.")})
			if f := res.Files[0]; f.Updated != 0 || len(f.Warnings) != 1 {
				t.Fatalf("changed source: %+v", f)
			}
			if giveBack == "delete" {
				mem.Remove(p)
			} else {
				mem.WriteFile(p, ingested)
			}
			if _, err := eng.Refresh(api.RefreshParams{}); err != nil {
				t.Fatal(err)
			}
			res = mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool twice.")})
			b, err := mem.ReadFile(p)
			if err != nil || !strings.Contains(string(b), "Install the tool twice.") {
				t.Errorf("%s: the source's text is not in the tree (%v): %+v\n%s", giveBack, err, res.Files[0], b)
			}
			if _, intact, _ := tree.Ingested(b); !intact {
				t.Errorf("%s: not stamped as the ingest wrote it:\n%s", giveBack, b)
			}
			// Written, it is skipped again.
			res = mustIngest(t, eng, api.IngestParams{Files: guide("Install the tool twice.")})
			if f := res.Files[0]; f.Status != api.IngestUnchanged || f.Added+f.Updated != 0 || len(f.Warnings) != 0 {
				t.Errorf("%s: again: %+v", giveBack, f)
			}
		})
	}
}

// A person's copy of an ingested entry (a snapshot kept elsewhere, a file
// manager's duplicate) names the source in its provenance and carries an
// intact stamp, since a stamp names bytes, not a path. It is not the
// ingest's to delete: a prune of a recorded source deletes the entries
// its record lists, and without a record a copy of another file of the
// source is kept.
func TestIngestKeepsAPersonsCopyOfAnEntry(t *testing.T) {
	const p = "documents/guide/guide.md"
	const snapshot, duplicate = "archive/old/guide_2025.md", "documents/guide/guide copy.md"
	guide := func(s string) api.SourceFile {
		return api.SourceFile{Name: "guide.md", Content: "# Guide\n\n" + s + "\n"}
	}
	other := api.SourceFile{Name: "other.md", Content: "# Other\n\nElse.\n"}
	copyEntry := func(t *testing.T, eng *Engine, mem host.FS, to string) []byte {
		t.Helper()
		b, err := mem.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.WriteFile(to, b); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Refresh(api.RefreshParams{}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("recorded source pruned", func(t *testing.T) {
		mem := host.NewMemFS()
		eng := openIngest(t, mem, &clockVar{t1})
		mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{guide("Install the tool."), other}})
		old := copyEntry(t, eng, mem, snapshot)
		mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{guide("Install the tool twice."), other}})
		res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{other}, Prune: []string{""}})
		if b, err := mem.ReadFile(snapshot); err != nil || string(b) != string(old) {
			t.Errorf("the person's snapshot was removed (%v): %+v", err, res.Files)
		}
		if _, err := mem.ReadFile(p); err == nil || res.Summary.Deleted != 1 {
			t.Errorf("the source's own entry: %v, %+v", err, res.Summary)
		}
	})
	t.Run("recorded source moved, then pruned", func(t *testing.T) {
		// An entry moved since the last ingest is still the source's.
		mem := host.NewMemFS()
		eng := openIngest(t, mem, &clockVar{t1})
		mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{guide("Install the tool."), other}})
		old := copyEntry(t, eng, mem, snapshot)
		const moved = "work/q3/guide.md"
		if res := eng.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpMove, Path: p, To: moved, Reason: "file it"}}}); res.Summary.Failed != 0 {
			t.Fatalf("move: %+v", res.Applied)
		}
		res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{other}, Prune: []string{""}})
		if _, err := mem.ReadFile(moved); err == nil || res.Summary.Deleted != 1 {
			t.Errorf("the moved entry of the pruned source: %v, %+v", err, res.Files)
		}
		if b, err := mem.ReadFile(snapshot); err != nil || string(b) != string(old) {
			t.Errorf("the person's snapshot was removed (%v): %+v", err, res.Files)
		}
	})
	t.Run("no record", func(t *testing.T) {
		mem := host.NewMemFS()
		eng := openIngest(t, mem, &clockVar{t1})
		mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{guide("Install the tool."), other}})
		dup := copyEntry(t, eng, mem, duplicate)
		if err := mem.Remove(ingest.ManifestPath); err != nil {
			t.Fatal(err)
		}
		res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{guide("Install the tool."), other}})
		if b, err := mem.ReadFile(duplicate); err != nil || string(b) != string(dup) {
			t.Errorf("the person's duplicate was removed (%v): %+v", err, res.Files[0])
		}
		if f := res.Files[0]; f.Deleted != 0 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "is a copy") {
			t.Errorf("%+v", f)
		}
		// Both are kept by a prune without a record: either may be the copy.
		mem.Remove(ingest.ManifestPath)
		res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{other}, Prune: []string{""}})
		for _, path := range []string{p, duplicate} {
			if _, err := mem.ReadFile(path); err != nil {
				t.Errorf("prune without a record removed %s: %+v", path, res.Files)
			}
		}
	})
}

// An ingested entry whose line endings a checkout turned to CRLF (git's
// autocrlf on Windows) still follows its source: line endings are form.
func TestIngestFollowsAnEntryCheckedOutWithCRLF(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	guide := func(s string) []api.SourceFile {
		return []api.SourceFile{{Name: "guide.md", Content: "# Guide\n\n" + s + "\n"}}
	}
	mustIngest(t, eng, api.IngestParams{Files: guide("Run it.")})
	const p = "documents/guide/guide.md"
	b, err := mem.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(p, []byte(strings.ReplaceAll(string(b), "\n", "\r\n"))); err != nil {
		t.Fatal(err)
	}
	res := mustIngest(t, eng, api.IngestParams{Files: guide("Run it twice.")})
	if f := res.Files[0]; f.Updated != 1 || len(f.Warnings) != 0 {
		t.Errorf("changed source after a CRLF checkout: %+v", f)
	}
	if b, _ := mem.ReadFile(p); !strings.Contains(string(b), "Run it twice.") {
		t.Errorf("not updated:\n%s", b)
	}
}
