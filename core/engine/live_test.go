package engine

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// A long-lived session (an MCP server, a JS memory) and a person editing
// the same files: the session's writes apply to what is on disk, its index
// follows what it read again, and what the person deleted stays deleted.
func TestLongSessionAndAnEditor(t *testing.T) {
	fs := host.NewMemFS()
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	defer e.Close()
	const p = "ops/pager/pager_rotation.md"
	add := api.Operation{Type: api.OpAdd, Path: "ops/pager", Title: "Pager rotation", Reason: "r",
		Content: api.Content{Narrative: &api.Narrative{Text: "The pager rotates weekly on Mondays."}}}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{add}}); res.Summary.Added != 1 {
		t.Fatalf("%+v", res)
	}
	// A person adds a sentence in an editor.
	b, _ := fs.ReadFile(p)
	edited := strings.Replace(string(b), "weekly on Mondays.", "weekly on Mondays. Bea covers the holidays.", 1)
	if err := fs.WriteFile(p, []byte(edited)); err != nil {
		t.Fatal(err)
	}
	// The session adds a fact: the person's sentence stays.
	upd := api.Operation{Type: api.OpUpdate, Path: p, Reason: "r", Content: api.Content{Facts: []api.Fact{{Statement: "handover at 9:00"}}}}
	if res := e.Curate(api.CurateParams{Operations: []api.Operation{upd}}); res.Applied[0].Status != api.StatusSuccess {
		t.Fatalf("%+v", res.Applied[0])
	}
	b, _ = fs.ReadFile(p)
	if !strings.Contains(string(b), "Bea covers the holidays.") || !strings.Contains(string(b), "handover at 9:00") {
		t.Fatalf("after the update:\n%s", b)
	}
	if r, err := e.Search(api.SearchParams{Query: "Bea holidays"}); err != nil || len(r.Results) != 1 || r.Results[0].Path != p {
		t.Errorf("search for the person's words: %+v, %v", r, err)
	}
	// The person deletes the file; the session's next update is refused
	// and brings nothing back, and the index lets the entry go.
	if err := fs.Remove(p); err != nil {
		t.Fatal(err)
	}
	res := e.Curate(api.CurateParams{Operations: []api.Operation{upd}})
	if a := res.Applied[0]; a.Status != api.StatusConflict || res.Summary.Failed != 1 {
		t.Fatalf("update after the delete: %+v", res)
	}
	if _, err := fs.ReadFile(p); err == nil {
		t.Error("the deleted entry came back")
	}
	if r, _ := e.Search(api.SearchParams{Query: "Bea holidays"}); len(r.Results) != 0 {
		t.Errorf("search still finds the deleted entry: %+v", r.Results)
	}
	if _, err := e.Read(api.ReadParams{Path: p}); err == nil {
		t.Error("read still finds the deleted entry")
	}
}
