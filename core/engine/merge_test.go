package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// A merge through the ABI needs no open engine, and what it leaves in
// conflict is reported by open and stats until an UPDATE resolves it, also
// after the catalog was persisted and restored.
func TestMergeConflictReportedUntilUpdated(t *testing.T) {
	base := []byte(entryText("Pager rotation", "The pager rotates weekly."))
	ours := []byte(entryText("Pager rotation", "The pager rotates every Monday."))
	theirs := []byte(entryText("Pager rotation", "The pager rotates every Tuesday."))
	s := NewSession(host.NewMemFS(), nil)
	req, _ := json.Marshal(map[string]any{"id": 1, "method": "merge", "params": api.MergeParams{
		Files: []api.MergeFile{{Path: "ops/pager/rotation.md", Base: &base, Ours: &ours, Theirs: &theirs}}}})
	var resp struct {
		Result api.MergeResult `json:"result"`
		Error  *api.Error      `json:"error"`
	}
	if err := json.Unmarshal(s.Call(req), &resp); err != nil || resp.Error != nil {
		t.Fatalf("merge before open: %v %v", err, resp.Error)
	}
	if resp.Result.Conflicts != 1 || len(resp.Result.Files) != 1 {
		t.Fatalf("merge result %+v", resp.Result)
	}
	merged := *resp.Result.Files[0].Content

	mem := host.NewMemFS()
	mem.WriteFile("ops/pager/rotation.md", merged)
	mem.WriteFile("ops/pager/escalation.md", []byte(entryText("Escalation", "Page the secondary.")))
	conflicts := func(ws []api.Warning) []string {
		var out []string
		for _, w := range ws {
			if w.Kind == api.WarnConflict {
				out = append(out, w.Path)
			}
		}
		return out
	}
	e, res := openEngine(t, mem, host.FixedClock(day0), Options{})
	if got := conflicts(res.Warnings); len(got) != 1 || got[0] != "ops/pager/rotation.md" {
		t.Fatalf("open warnings %+v", res.Warnings)
	}
	if err := e.Close(); err != nil { // persists the catalog
		t.Fatal(err)
	}
	e, res = openEngine(t, mem, host.FixedClock(day0), Options{})
	defer e.Close()
	if res.Index.Indexed != 0 || len(conflicts(res.Warnings)) != 1 {
		t.Fatalf("reopened from the persisted catalog: %+v", res)
	}
	if found, _ := e.Search(api.SearchParams{Query: "Tuesday"}); len(found.Results) == 0 {
		t.Error("the other side's text in the conflict section is not searchable")
	}
	cr := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: "UPDATE", Path: "ops/pager/rotation.md",
		Content: api.Content{Narrative: &api.Narrative{Text: "The pager rotates every Tuesday."}}, Reason: "resolve the sync conflict"}}})
	if a := cr.Applied[0]; a.Status != api.StatusSuccess || !strings.Contains(a.Message, "resolved") {
		t.Fatalf("update: %+v", a)
	}
	if got := conflicts(e.Stats().Warnings); len(got) != 0 {
		t.Errorf("stats still report %v after the update", got)
	}
}
