package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/ingest"
)

// A prune of a prefix the call sends nothing under (an empty folder: a
// share not mounted, a sync not done) removes nothing unless it is asked
// for with pruneEmpty, and says so; a folder sent in several calls, the
// last listing the others in keep, still prunes.
func TestIngestPruneOfAnEmptyPrefixIsAskedFor(t *testing.T) {
	mem := host.NewMemFS()
	w := &watchFS{FS: mem}
	eng := openIngest(t, w, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: pruneFolder})
	before := entryPaths(eng)
	w.writes = nil

	res := mustIngest(t, eng, api.IngestParams{Files: pruneFolder[3:], Prune: []string{"notes/", "other/"}})
	if len(res.Files) != 1 || res.Summary != (api.IngestSummary{Files: 1, Unchanged: 1}) || len(w.writes) != 0 || entryPaths(eng) != before {
		t.Errorf("empty prefix pruned: %+v %+v, wrote %v\n%s", res.Files, res.Summary, w.writes, entryPaths(eng))
	}
	if len(res.Warnings) != 1 {
		t.Fatalf("warnings: %+v", res.Warnings)
	}
	if wn := res.Warnings[0]; wn.Code != api.IngestEmptyPrune || wn.Prefix != "notes/" || wn.Sources != 3 || !strings.Contains(wn.Message, "pruneEmpty") {
		t.Errorf("warning: %+v", wn)
	}

	// A prefix with nothing recorded under it has nothing to warn of.
	if res := mustIngest(t, eng, api.IngestParams{Prune: []string{"mail/"}}); len(res.Files) != 0 || res.Warnings != nil {
		t.Errorf("empty prefix without sources: %+v", res)
	}

	// The last call of a folder sent in several: keep names the files of
	// the others, so the prefix is not empty and prunes as before.
	res = mustIngest(t, eng, api.IngestParams{Keep: []string{"notes/a.md"}, Prune: []string{"notes/"}})
	if res.Summary != (api.IngestSummary{Files: 2, Removed: 2, Deleted: 5}) || res.Warnings != nil {
		t.Errorf("prune with keep: %+v %+v", res.Summary, res.Warnings)
	}

	// Asked for: every source under it goes, and its record.
	res = mustIngest(t, eng, api.IngestParams{Prune: []string{"notes/"}, PruneEmpty: true})
	if res.Summary != (api.IngestSummary{Files: 1, Removed: 1, Deleted: 1}) || res.Files[0].Name != "notes/a.md" || res.Warnings != nil {
		t.Errorf("pruneEmpty: %+v %+v", res.Files, res.Warnings)
	}
	if got := entryPaths(eng); got != "other/d/d.md" {
		t.Errorf("entries left:\n%s", got)
	}
	if man := readManifest(t, mem); len(man.Sources) != 1 || man.Sources["other/d.md"] == nil {
		t.Errorf("manifest sources: %v", man.Sources)
	}
}

// Two folders of one name are two origins of one prefix: the second is
// refused before anything is written (its files fail, its prune too), so
// that it neither overwrites nor prunes the first one's entries.
func TestIngestRefusesASecondOriginOfAPrefix(t *testing.T) {
	const work, home = "/home/ana/work/notes", "/home/ana/home/notes"
	todo := func(text string) api.SourceFile {
		return api.SourceFile{Name: "notes/todo.md", Content: "# Todo\n\n" + text + "\n"}
	}
	plan := api.SourceFile{Name: "notes/plan.md", Content: "# Plan\n\nShip in May.\n"}
	const entry = "notes/todo/todo.md"
	text := func(eng *Engine) string {
		e, ok := eng.catalog.Get(entry)
		if !ok {
			return "(gone)"
		}
		return e.Narrative.Text
	}

	mem := host.NewMemFS()
	w := &watchFS{FS: mem}
	eng := openIngest(t, w, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{todo("Renew the work laptop."), plan}, Origins: map[string]string{"notes/": work}})
	if got := readManifest(t, mem).Origins; len(got) != 1 || got["notes/"] != work {
		t.Fatalf("origins recorded: %v", got)
	}
	w.writes = nil

	res := mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{todo("Water the plants.")}, Prune: []string{"notes/"}, Origins: map[string]string{"notes/": home}})
	if len(res.Files) != 1 || res.Summary != (api.IngestSummary{Files: 1, FailedFiles: 1}) {
		t.Fatalf("second origin: %+v %+v", res.Files, res.Summary)
	}
	f := res.Files[0]
	for _, want := range []string{work, home, "send them again as relocated"} {
		if f.Status != api.IngestFailed || !strings.Contains(f.Message, want) {
			t.Errorf("file: %+v, want a message holding %q", f, want)
		}
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Code != api.IngestOtherOrigin || res.Warnings[0].Prefix != "notes/" || res.Warnings[0].Origin != work || res.Warnings[0].Sources != 2 ||
		!strings.Contains(res.Warnings[0].Message, "1 file failed, the prune was refused") {
		t.Errorf("warnings: %+v", res.Warnings)
	}
	if len(w.writes) != 0 || text(eng) != "Renew the work laptop." || !strings.Contains(entryPaths(eng), "notes/plan/plan.md") {
		t.Errorf("the refused call wrote %v; todo: %q\n%s", w.writes, text(eng), entryPaths(eng))
	}

	// A prune alone of that prefix, and of a prefix holding it ("" is
	// every source), is refused as well.
	for _, pre := range []string{"notes/", ""} {
		res = mustIngest(t, eng, api.IngestParams{Prune: []string{pre}, PruneEmpty: true, Origins: map[string]string{"notes/": home}})
		if len(res.Files) != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "the prune was refused") || len(w.writes) != 0 {
			t.Errorf("prune %q from the second origin: %+v %+v, wrote %v", pre, res.Files, res.Warnings, w.writes)
		}
	}

	// Under a name of its own, the second folder is a source of its own.
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{{Name: "home-notes/todo.md", Content: "# Todo\n\nWater the plants.\n"}}, Origins: map[string]string{"home-notes/": home}})
	if res.Summary.Added != 1 || res.Warnings != nil {
		t.Errorf("home-notes: %+v %+v", res.Files, res.Warnings)
	}
	if got := readManifest(t, mem).Origins; len(got) != 2 || got["notes/"] != work || got["home-notes/"] != home {
		t.Errorf("origins: %v", got)
	}

	// The first origin goes on as before; a call giving no origin (an
	// agent's documents) is not checked.
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{todo("Renew the work laptop by June."), plan}, Origins: map[string]string{"notes/": work}})
	if res.Summary.Updated != 1 || text(eng) != "Renew the work laptop by June." {
		t.Errorf("first origin again: %+v, todo %q", res.Summary, text(eng))
	}
	if res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{plan}}); res.Summary.FailedFiles != 0 {
		t.Errorf("no origin: %+v", res.Files)
	}

	// A prefix nested in one recorded, of another origin, would be pruned
	// with it: refused too.
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{{Name: "notes/sub/x.md", Content: "# X\n\nx\n"}}, Origins: map[string]string{"notes/sub/": "/elsewhere/sub"}})
	if res.Summary.FailedFiles != 1 || !strings.Contains(res.Files[0].Message, work) {
		t.Errorf("nested prefix: %+v", res.Files)
	}

	// A manifest that records no origin (lost, a fresh clone, a tree
	// ingested before origins) takes the call's.
	mem.Remove(ingest.ManifestPath)
	res = mustIngest(t, eng, api.IngestParams{Files: []api.SourceFile{todo("Water the plants."), plan}, Origins: map[string]string{"notes/": home}})
	if res.Summary.FailedFiles != 0 || readManifest(t, mem).Origins["notes/"] != home {
		t.Errorf("without a manifest: %+v, origins %v", res.Files, readManifest(t, mem).Origins)
	}

	// A prefix whose sources are all pruned forgets its origin (home-notes/
	// went with the manifest removed).
	res = mustIngest(t, eng, api.IngestParams{Prune: []string{"notes/"}, PruneEmpty: true, Origins: map[string]string{"notes/": home}})
	if res.Summary.Removed != 2 {
		t.Errorf("prune of the whole prefix: %+v", res.Files)
	}
	if got := readManifest(t, mem).Origins; got != nil {
		t.Errorf("origins after the prefix emptied: %v", got)
	}
}

func TestIngestRefusesBadOrigins(t *testing.T) {
	mem := host.NewMemFS()
	w := &watchFS{FS: mem}
	eng := openIngest(t, w, &clockVar{t1})
	w.writes = nil
	for _, origins := range []map[string]string{{"": "/a"}, {"../notes/": "/a"}, {"/notes/": "/a"}, {"notes/": ""}} {
		_, err := eng.Ingest(api.IngestParams{Files: pruneFolder[:1], Origins: origins})
		var e *api.Error
		if !errors.As(err, &e) || e.Code != api.CodeInvalidParams || !strings.Contains(e.Message, "origins: ") {
			t.Errorf("origins %v: error %v", origins, err)
		}
	}
	if len(w.writes) != 0 {
		t.Errorf("refused calls wrote %v", w.writes)
	}
}

func TestIngestOriginsAndPruneEmptyOverABI(t *testing.T) {
	s, _ := newSession(t, nil)
	if _, e := call(t, s, "open", map[string]any{"fixedTime": "2026-01-01T00:00:00Z"}); e != nil {
		t.Fatal(e)
	}
	files := []map[string]any{{"name": "notes/plan.md", "content": "# Plan\n\nShip in May.\n"}}
	if _, e := call(t, s, "ingest", map[string]any{"files": files, "origins": map[string]string{"notes/": "/w/notes"}}); e != nil {
		t.Fatal(e)
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"prune": []string{"notes/"}},
			`"warnings":[{"code":"empty_prune","message":"prune \"notes/\": the call sends and keeps no source under it, so its 1 source stayed`},
		{map[string]any{"files": files, "origins": map[string]string{"notes/": "/h/notes"}},
			`"warnings":[{"code":"other_origin","message":"1 file failed: \"notes/\" holds the files of /w/notes, and this call's \"notes/\" come from /h/notes`},
		{map[string]any{"prune": []string{"notes/"}, "pruneEmpty": true},
			`"summary":{"added":0,"deleted":1,"failed":0,"failedFiles":0,"files":1,"removed":1,"unchanged":0,"updated":0}`},
	} {
		res, e := call(t, s, "ingest", tc.params)
		if e != nil {
			t.Fatal(e)
		}
		// The result comes back as a map: its keys encode sorted.
		if raw, _ := json.Marshal(res); !strings.Contains(string(raw), tc.want) {
			t.Errorf("%v: result lacks %s:\n%s", tc.params, tc.want, raw)
		}
	}
}

// A folder moved on disk keeps its entries: sent as relocated, its new
// origin replaces the recorded one, and from then on the old place is the
// other origin.
func TestIngestRelocatedFolderTakesItsPlace(t *testing.T) {
	const old, moved = "/home/ana/notes", "/home/ana/Documents/notes"
	files := []api.SourceFile{
		{Name: "notes/todo.md", Content: "# Todo\n\nRenew the laptop.\n"},
		{Name: "notes/sub/x.md", Content: "# X\n\nx\n"},
	}
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	mustIngest(t, eng, api.IngestParams{Files: files, Origins: map[string]string{"notes/": old}})
	before := entryPaths(eng)

	moves := api.IngestParams{Files: files, Prune: []string{"notes/"}, Origins: map[string]string{"notes/": moved}}
	if res := mustIngest(t, eng, moves); res.Summary.FailedFiles != 2 {
		t.Fatalf("moved folder without relocated: %+v", res.Files)
	}
	moves.Relocated = true
	res := mustIngest(t, eng, moves)
	if res.Summary != (api.IngestSummary{Files: 2, Unchanged: 2}) || res.Warnings != nil || entryPaths(eng) != before {
		t.Errorf("relocated: %+v %+v\n%s", res.Files, res.Warnings, entryPaths(eng))
	}
	if got := readManifest(t, mem).Origins; len(got) != 1 || got["notes/"] != moved {
		t.Errorf("origins: %v", got)
	}
	if res := mustIngest(t, eng, api.IngestParams{Files: files[:1], Origins: map[string]string{"notes/": old}}); res.Summary.FailedFiles != 1 {
		t.Errorf("the old place after the move: %+v", res.Files)
	}
}

// An agent's documents moved from no folder: a call saying its folder
// moved (relocated) does not take their prefix over, which would hand them
// to the folder whose prune then deletes them, and the refusal does not
// suggest it.
func TestIngestRelocatedLeavesAnAgentsDocuments(t *testing.T) {
	mem := host.NewMemFS()
	eng := openIngest(t, mem, &clockVar{t1})
	agents := []api.SourceFile{{Name: "notes/minutes.md", Content: "# Minutes\n\nThe launch moved to May.\n"}}
	mustIngest(t, eng, api.IngestParams{Files: agents, Origins: map[string]string{"notes/": api.AgentOrigin}})
	before := entryPaths(eng)

	folder := api.IngestParams{
		Files:     []api.SourceFile{{Name: "notes/todo.md", Content: "# Todo\n\nRenew the laptop.\n"}},
		Prune:     []string{"notes/"},
		Origins:   map[string]string{"notes/": "/home/ana/notes"},
		Relocated: true,
	}
	res := mustIngest(t, eng, folder)
	if res.Summary.FailedFiles != 1 || len(res.Warnings) != 1 || res.Warnings[0].Code != api.IngestOtherOrigin || res.Warnings[0].Origin != api.AgentOrigin {
		t.Fatalf("a folder relocated onto an agent's documents: %+v %+v", res.Files, res.Warnings)
	}
	if msg := res.Files[0].Message; strings.Contains(msg, "relocated") || !strings.Contains(msg, "another name") {
		t.Errorf("refusal %q: want another name, and no relocating", msg)
	}
	if got := entryPaths(eng); got != before {
		t.Errorf("entries changed:\n%s\nwant\n%s", got, before)
	}
	if got := readManifest(t, mem).Origins; got["notes/"] != api.AgentOrigin {
		t.Errorf("origins: %v", got)
	}
}
