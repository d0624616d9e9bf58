package engine

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// Twins (names that differ only in case or Unicode form) are reported by
// open with their own kind, beside files that cannot be used, over the
// JSON contract every host shares; stats repeats them.
func TestOpenReportsTwins(t *testing.T) {
	s, _ := newSession(t, map[string]string{
		"Projects/Plan.md":    "# Plan\n",
		"projects/roadmap.md": "# Roadmap\n",
		"notes/café.md":       "# Café\n",
		"notes/cafe\u0301.md": "# Cafe\n",
		"notes/bad.md":        "---\ntitle: [unclosed\n---\n",
	})
	res := mustOpen(t, s)
	type warning struct {
		kind, path string
		paths      []any
	}
	var got []warning
	for _, w := range res["warnings"].([]any) {
		m := w.(map[string]any)
		kind, _ := m["kind"].(string)
		path, _ := m["path"].(string)
		ps, _ := m["paths"].([]any)
		got = append(got, warning{kind, path, ps})
		if m["message"] == "" {
			t.Errorf("warning without a message: %v", m)
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i].path < got[j].path })
	want := []warning{
		{api.WarnTwins, "Projects", []any{"Projects", "projects"}},
		{api.WarnFile, "notes/bad.md", nil},
		{api.WarnTwins, "notes/cafe\u0301.md", []any{"notes/cafe\u0301.md", "notes/café.md"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
	st, errObj := call(t, s, "stats", nil)
	if errObj != nil || len(st["warnings"].([]any)) != 3 {
		t.Errorf("stats warnings %v %v", st["warnings"], errObj)
	}
}

// read finds an entry given in another case or Unicode form, as curate
// does, and refuses to guess between twins.
func TestReadOtherSpelling(t *testing.T) {
	s, _ := newSession(t, map[string]string{
		"Projects/Plan.md":         "# Plan\n\nShip it.\n",
		"Archive/2025/Notes.md":    "# a\n",
		"ARCHIVE/2025/Notes.md":    "# b\n",
		"recettes/Cafe\u0301.md":   "# Café\n",
		"engineering/billing/x.md": "# x\n",
	})
	mustOpen(t, s)
	for given, want := range map[string]string{
		"Projects/Plan.md":      "Projects/Plan.md",
		"projects/plan.md":      "Projects/Plan.md",
		"recettes/café.md":      "recettes/Cafe\u0301.md",
		"Archive/2025/Notes.md": "Archive/2025/Notes.md",
	} {
		res, errObj := call(t, s, "read", map[string]any{"path": given})
		if errObj != nil || res["path"] != want {
			t.Errorf("read %s: %v %v, want %s", given, res["path"], errObj, want)
		}
	}
	_, errObj := call(t, s, "read", map[string]any{"path": "archive/2025/notes.md"})
	if errObj == nil || errObj["code"] != api.CodeNotFound || !strings.Contains(errObj["message"].(string), "could be any of ARCHIVE/2025/Notes.md, Archive/2025/Notes.md") {
		t.Errorf("ambiguous read: %v", errObj)
	}
}

// Ingest writes into the tree's existing spelling of its folders, records
// where it wrote, and finds its entries there again; a piece named as a
// Windows device takes a suffix.
func TestIngestPathsAsTheTreeSpellsThem(t *testing.T) {
	mem := host.NewMemFS()
	if err := mem.WriteFile("Documents/Guide/Intro.md", []byte("# Intro\n\nwritten by hand\n")); err != nil {
		t.Fatal(err)
	}
	clock := &clockVar{t1}
	eng := openIngest(t, mem, clock)
	files := []api.SourceFile{
		{Name: "guide.md", Content: "# Setup\n\nInstall it.\n"},
		{Name: "Guide/Con.md", Content: "The cons.\n"},
		{Name: "Guide/usage.md", Content: "Run it.\n"},
	}
	res := mustIngest(t, eng, api.IngestParams{Files: files, IngestOptions: api.IngestOptions{Domain: "Documents"}})
	var paths []string
	for _, f := range res.Files {
		for _, a := range f.Applied {
			if a.Status != api.StatusSuccess {
				t.Errorf("%+v", a)
			}
			paths = append(paths, a.Path)
		}
	}
	// The domain, then the note's folders: guide.md has none and takes
	// its name as its topic; Guide/Con.md is documents/guide/con.md.
	want := []string{"Documents/Guide/guide.md", "Documents/Guide/con_2.md", "Documents/Guide/usage.md"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	for p := range mem.Files() {
		if strings.HasPrefix(p, "documents/") {
			t.Errorf("a twin folder was created: %s", p)
		}
	}
	man := readManifest(t, mem)
	for i, p := range want {
		if _, ok := man.Sources[files[i].Name].Entries[p]; !ok {
			t.Errorf("manifest lacks %s: %v", p, man.Sources[files[i].Name])
		}
	}
	// Again, after reopening: nothing changed, nothing written.
	eng.Close()
	w := &watchFS{FS: mem}
	eng = openIngest(t, w, clock)
	w.writes = nil
	opts := api.IngestOptions{Domain: "Documents"}
	res = mustIngest(t, eng, api.IngestParams{Files: files, IngestOptions: opts})
	if res.Summary != (api.IngestSummary{Files: 3, Unchanged: 3}) || len(w.writes) != 0 {
		t.Errorf("second ingest %+v, wrote %v", res.Summary, w.writes)
	}
	// Changed: updated in place.
	files[2].Content = "Run it daily.\n"
	res = mustIngest(t, eng, api.IngestParams{Files: files, IngestOptions: opts})
	if res.Summary != (api.IngestSummary{Files: 3, Updated: 1, Unchanged: 2}) {
		t.Errorf("changed ingest %+v", res.Files[2])
	}
	if en, ok := eng.catalog.Get("Documents/Guide/usage.md"); !ok || !strings.Contains(en.Narrative.Text, "daily") {
		t.Errorf("usage: %+v", en)
	}
}
