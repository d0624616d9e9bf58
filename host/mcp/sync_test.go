package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/gitsync"
	"github.com/arbormem/arbor/host/runtime"
	"github.com/arbormem/arbor/internal/testroot"
)

// gitSync syncs root with remote as arbor sync does, with an engine of its
// own for the merge.
func gitSync(t *testing.T, root, remote string) gitsync.Report {
	t.Helper()
	ctx := context.Background()
	eng, err := runtime.New(ctx, root, runtime.WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	rep, err := gitsync.Sync(ctx, root, eng, gitsync.Options{Remote: remote})
	if err != nil {
		t.Fatalf("sync %s: %v", root, err)
	}
	return rep
}

// arbor-sync syncs the served root with its remote while another root
// (a teammate) works on the same memory: it merges their edit, their new
// entry and a conflict with the agent's own curate, pushes, reports what
// it did with progress, and the very next call sees the merged files
// (the engine here has no watch: only the sync's own refresh can show
// them). A root without a remote is a tool error that says what to do.
func TestSyncTool(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	remote := filepath.Join(dir, "team.git")
	if _, err := git.PlainInit(remote, true); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "agent"), filepath.Join(dir, "teammate")
	entry := func(title, summary, narrative string) string {
		return "---\ntitle: " + title + "\nsummary: " + summary + "\n---\n\n## Narrative\n" + narrative + "\n"
	}
	testroot.Write(t, a, "ops/pager/rotation.md", entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday."))
	testroot.Write(t, a, "ops/billing/refunds.md", entry("Refunds", "Refunds up to 100 EUR.", "Support approves refunds."))

	var mu sync.Mutex
	var progress []float64
	var messages []string
	cs := serveWith(t, a, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Progress)
		messages = append(messages, r.Params.Message)
		mu.Unlock()
	}}, nil)

	// No remote yet: an error that says how to set one, and nothing made.
	if res := call(t, cs, ToolSync, map[string]any{}); !res.IsError || !strings.Contains(text(res), "arbor sync --remote") {
		t.Fatalf("a sync without a remote: %s", text(res))
	}
	if _, err := os.Stat(filepath.Join(a, ".git")); !os.IsNotExist(err) {
		t.Fatalf("a failed sync made a repository: %v", err)
	}

	// The user sets the remote once (arbor sync --remote); the teammate
	// starts from it.
	gitSync(t, a, remote)
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	gitSync(t, b, remote)

	// The teammate edits the rotation, adds an entry and changes the
	// refund limit; the agent changes the limit too, differently.
	testroot.Write(t, b, "ops/pager/rotation.md", strings.Replace(testroot.Read(t, b, "ops/pager/rotation.md"), "every Monday.", "every Monday at the zeppelin hangar.", 1))
	testroot.Write(t, b, "ops/pager/escalation.md", entry("Escalation", "Pages escalate.", "Page the quartermaster after fifteen minutes."))
	testroot.Write(t, b, "ops/billing/refunds.md", strings.Replace(testroot.Read(t, b, "ops/billing/refunds.md"), "100 EUR", "120 EUR", 1))
	if rep := gitSync(t, b, remote); rep.Committed == "" {
		t.Fatalf("the teammate's sync committed nothing: %+v", rep)
	}
	var cr api.CurateResult
	decode(t, call(t, cs, ToolCurate, map[string]any{"operations": []any{map[string]any{
		"type": "UPDATE", "path": "ops/billing/refunds.md", "summary": "Refunds up to 150 EUR.", "reason": "limit raised"}}}), &cr)
	if cr.Summary.Failed != 0 {
		t.Fatalf("curate: %+v", cr)
	}

	p := &sdk.CallToolParams{Name: ToolSync, Arguments: map[string]any{}}
	p.SetProgressToken("sync-1")
	res, err := cs.CallTool(ctx, p)
	if err != nil || res.IsError {
		t.Fatalf("arbor-sync: %v %s", err, text(res))
	}
	var out SyncResult
	decode(t, res, &out)
	wantChanged := []string{"ops/billing/refunds.md", "ops/pager/escalation.md", "ops/pager/rotation.md"}
	if out.Merge != "merge" || !out.Pushed || out.Behind != 1 || out.Ahead != 2 || out.Operations != 1 || !slices.Equal(out.Changed, wantChanged) {
		t.Fatalf("the sync: %+v", out)
	}
	statuses := map[string]string{}
	for _, f := range out.Files {
		statuses[f.Path] = f.Status
	}
	if !slices.Equal(out.Conflicts, []string{"ops/billing/refunds.md"}) || statuses["ops/billing/refunds.md"] != api.MergeConflict || statuses["ops/pager/rotation.md"] != api.MergeTheirs {
		t.Errorf("the merge: conflicts %v, files %+v", out.Conflicts, out.Files)
	}
	// The engine read the three files again, and nothing else.
	if out.Index.Checked != 3 || out.Index.Added != 1 || out.Index.Updated != 2 || out.Index.Scanned {
		t.Errorf("what the engine read again: %+v", out.Index)
	}
	mu.Lock()
	gotProgress, gotMessages := slices.Clone(progress), strings.Join(messages, "\n")
	mu.Unlock()
	for _, step := range []string{"committing", "fetching origin/main", "merging", "pushing main", "reading the 3 files"} {
		if !strings.Contains(gotMessages, step) {
			t.Errorf("no progress says %q:\n%s", step, gotMessages)
		}
	}
	for i := 1; i < len(gotProgress); i++ {
		if gotProgress[i] <= gotProgress[i-1] {
			t.Fatalf("progress does not increase: %v", gotProgress)
		}
	}

	// The next calls see the teammate's work and the conflict.
	var q api.SearchResult
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "zeppelin hangar"}), &q)
	if len(q.Results) == 0 || q.Results[0].Path != "ops/pager/rotation.md" {
		t.Errorf("the teammate's edit is not searched: %+v", q.Results)
	}
	if r := call(t, cs, ToolRead, map[string]any{"path": "ops/pager/escalation.md"}); r.IsError || !strings.Contains(text(r), "quartermaster") {
		t.Errorf("the teammate's new entry: %s", text(r))
	}
	if r := call(t, cs, ToolRead, map[string]any{"path": "ops/billing/refunds.md"}); !strings.Contains(text(r), "120 EUR") || !strings.Contains(text(r), "150 EUR") {
		t.Errorf("the conflicted entry lacks a side: %s", text(r))
	}

	// The teammate gets the agent's side; a second sync has nothing to do.
	if rep := gitSync(t, b, remote); rep.Merge != "fast-forward" || !strings.Contains(testroot.Read(t, b, "ops/billing/refunds.md"), "150 EUR") {
		t.Errorf("the teammate's second sync: %+v", rep)
	}
	out = SyncResult{}
	decode(t, call(t, cs, ToolSync, map[string]any{}), &out)
	if out.Merge != "none" || out.Committed != "" || out.Ahead != 0 || out.Behind != 0 || len(out.Changed) != 0 {
		t.Errorf("a sync with nothing new: %+v", out)
	}
	if testroot.Read(t, a, "ops/billing/refunds.md") != testroot.Read(t, b, "ops/billing/refunds.md") {
		t.Error("the two roots differ after syncing both ways")
	}
}
