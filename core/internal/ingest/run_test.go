package ingest

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/curate"
)

// runFS counts the writes that reach a MemFS and can fail reads.
type runFS struct {
	*host.MemFS
	writes  []string
	readErr error
}

func (f *runFS) WriteFile(p string, data []byte) error {
	f.writes = append(f.writes, p)
	return f.MemFS.WriteFile(p, data)
}

func (f *runFS) ReadFile(p string) ([]byte, error) {
	if f.readErr != nil {
		return nil, f.readErr
	}
	return f.MemFS.ReadFile(p)
}

type logLines []string

func (l *logLines) Log(level, msg string) { *l = append(*l, level+": "+msg) }

// run calls Run on m's catalog, applying operations through m (failing
// those whose path is in fail), and reads the manifest back from fsys.
func (m *memory) run(fsys *runFS, log host.Logger, p api.IngestParams, fail ...string) api.IngestResult {
	m.t.Helper()
	apply := func(ops []api.Operation) curate.Result {
		var idx []int
		for i, op := range ops {
			for _, f := range fail {
				if op.Path == f {
					idx = append(idx, i)
				}
			}
		}
		return curate.Result{Applied: m.apply(ops, idx...)}
	}
	res, err := Run(fsys, log, m.cat, apply, p)
	if err != nil {
		m.t.Fatalf("Run: %v", err)
	}
	return res
}

func TestRunInvalidParams(t *testing.T) {
	tests := []struct {
		name string
		p    api.IngestParams
		msg  string
	}{
		{"negative context turns", api.IngestParams{IngestOptions: api.IngestOptions{ContextTurns: intp(-1)}}, "contextTurns -1: want 0 or more"},
		{"negative size limit", api.IngestParams{IngestOptions: api.IngestOptions{MaxSourceBytes: -5}}, "maxSourceBytes -5"},
		{"bad prune prefix", api.IngestParams{Prune: []string{"notes/../x"}}, "prune: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := &runFS{MemFS: host.NewMemFS()}
			_, err := Run(fsys, host.NopLogger{}, newMemory(t).cat, func([]api.Operation) curate.Result {
				t.Fatal("apply called")
				return curate.Result{}
			}, tc.p)
			var ae *api.Error
			if !errors.As(err, &ae) || ae.Code != api.CodeInvalidParams || !strings.Contains(ae.Message, tc.msg) {
				t.Errorf("err = %v, want %s holding %q", err, api.CodeInvalidParams, tc.msg)
			}
			if len(fsys.writes) != 0 {
				t.Errorf("wrote %q", fsys.writes)
			}
		})
	}
}

func TestRun(t *testing.T) {
	m := newMemory(t)
	fsys := &runFS{MemFS: host.NewMemFS()}
	files := []api.SourceFile{md("notes.jsonl", notesV1), md("bad.json", "{"), md("notes.jsonl", "dup"), md("list.csv", "name\nx\ny\n")}
	res := m.run(fsys, host.NopLogger{}, api.IngestParams{Files: files})
	type file struct {
		name, format, status string
		entries, added       int
	}
	var got []file
	for _, f := range res.Files {
		got = append(got, file{f.Name, f.Format, f.Status, f.Entries, f.Added})
	}
	want := []file{
		{"notes.jsonl", "jsonl", api.IngestAdded, 3, 3},
		{"bad.json", "json", api.IngestFailed, 0, 0},
		{"notes.jsonl", "jsonl", api.IngestFailed, 0, 0},
		{"list.csv", "csv", api.IngestAdded, 2, 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("files\n got %v\nwant %v", got, want)
	}
	if msg := res.Files[1].Message; !strings.Contains(msg, "malformed JSON") {
		t.Errorf("bad.json message %q", msg)
	}
	if msg := res.Files[2].Message; msg != "listed twice in one call" {
		t.Errorf("duplicate message %q", msg)
	}
	if want := (api.IngestSummary{Files: 4, FailedFiles: 2, Added: 5}); res.Summary != want {
		t.Errorf("summary %+v, want %+v", res.Summary, want)
	}
	data, err := fsys.MemFS.ReadFile(ManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	man, err := ParseManifest(data)
	if err != nil || len(man.Sources) != 2 || man.Sources["notes.jsonl"] == nil || man.Sources["list.csv"] == nil {
		t.Fatalf("manifest %s, %v", data, err)
	}

	// The same files again: nothing applied, nothing written.
	fsys.writes = nil
	res = m.run(fsys, host.NopLogger{}, api.IngestParams{Files: []api.SourceFile{files[0], files[3]}})
	if want := (api.IngestSummary{Files: 2, Unchanged: 5}); res.Summary != want {
		t.Errorf("second run: %+v, want %+v", res.Summary, want)
	}
	if len(fsys.writes) != 0 {
		t.Errorf("an unchanged run wrote %q", fsys.writes)
	}

	// A change with a failed operation: the file fails, the rest is kept.
	res = m.run(fsys, host.NopLogger{}, api.IngestParams{Files: []api.SourceFile{md("notes.jsonl", notesV2)}}, "data/notes/delta.md")
	f := res.Files[0]
	if f.Status != api.IngestFailed || f.Updated != 1 || f.Deleted != 1 || f.Failed != 1 || f.Unchanged != 1 ||
		f.Message != "1 of 3 operations failed; the entries written are recorded and the next ingest retries the rest" {
		t.Errorf("failed op: %+v", f)
	}
	if want := (api.IngestSummary{Files: 1, FailedFiles: 1, Updated: 1, Deleted: 1, Unchanged: 1, Failed: 1}); res.Summary != want {
		t.Errorf("failed op summary %+v, want %+v", res.Summary, want)
	}
	res = m.run(fsys, host.NopLogger{}, api.IngestParams{Files: []api.SourceFile{md("notes.jsonl", notesV2)}})
	if f := res.Files[0]; f.Status != api.IngestUpdated || f.Added != 1 || f.Unchanged != 2 {
		t.Errorf("retry: %+v", f)
	}

	// Prune: list.csv is neither sent nor kept.
	res = m.run(fsys, host.NopLogger{}, api.IngestParams{Files: []api.SourceFile{md("notes.jsonl", notesV2)}, Prune: []string{""}})
	if len(res.Files) != 2 || res.Files[1].Name != "list.csv" || res.Files[1].Status != api.IngestRemoved || res.Files[1].Deleted != 2 {
		t.Fatalf("prune: %+v", res.Files)
	}
	if want := (api.IngestSummary{Files: 2, Removed: 1, Deleted: 2, Unchanged: 3}); res.Summary != want {
		t.Errorf("prune summary %+v, want %+v", res.Summary, want)
	}
	data, _ = fsys.MemFS.ReadFile(ManifestPath)
	if man, _ := ParseManifest(data); len(man.Sources) != 1 || man.Sources["notes.jsonl"] == nil {
		t.Errorf("manifest after the prune: %s", data)
	}
}

// An unreadable manifest is kept aside and replaced; the entries are found
// by their provenance.
func TestRunCorruptManifest(t *testing.T) {
	m := newMemory(t)
	fsys := &runFS{MemFS: host.NewMemFS()}
	m.run(fsys, host.NopLogger{}, api.IngestParams{Files: []api.SourceFile{md("notes.jsonl", notesV1)}})
	if err := fsys.MemFS.WriteFile(ManifestPath, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	var log logLines
	res := m.run(fsys, &log, api.IngestParams{Files: []api.SourceFile{md("notes.jsonl", notesV1)}})
	if f := res.Files[0]; f.Status != api.IngestUpdated || f.Updated != 3 {
		t.Errorf("after a corrupt manifest: %+v, want the 3 entries rewritten", f)
	}
	if kept, err := fsys.MemFS.ReadFile(".arbor/ingest.corrupt.json"); err != nil || string(kept) != "{not json" {
		t.Errorf("backup %q, %v", kept, err)
	}
	if len(log) != 1 || !strings.HasPrefix(log[0], "warn: ingest: ingest manifest: ") || !strings.Contains(log[0], "kept as .arbor/ingest.corrupt.json") {
		t.Errorf("log %q", log)
	}
	data, _ := fsys.MemFS.ReadFile(ManifestPath)
	if _, err := ParseManifest(data); err != nil {
		t.Errorf("manifest not replaced: %v", err)
	}

	// A manifest that cannot be read at all stops the call.
	fsys.readErr = host.ErrIO
	_, err := Run(fsys, host.NopLogger{}, m.cat, func([]api.Operation) curate.Result { return curate.Result{} }, api.IngestParams{})
	if !errors.Is(err, host.ErrIO) {
		t.Errorf("read error: %v, want host.ErrIO", err)
	}
}
