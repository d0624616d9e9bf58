package mcp

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/internal/testroot"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// arbor-tidy plans without writing, and applies with apply: two entries
// that hold the same knowledge become one.
func TestTidyTool(t *testing.T) {
	cs := serve(t, t.TempDir())
	narrative := "Failed invoices are retried three times, two days apart, then the account goes to the collections team."
	call(t, cs, ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Invoice retries", "content": map[string]any{"narrative": narrative}, "reason": "from the billing sync"},
		map[string]any{"type": "ADD", "path": "finance/billing", "title": "Invoice retries", "content": map[string]any{"narrative": narrative}, "reason": "saved twice"},
	}})
	var plan api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"merge"}}), &plan)
	if len(plan.Suggestions) != 1 || plan.Applied != nil || len(plan.Suggestions[0].Operations) != 1 {
		t.Fatalf("plan: %+v", plan)
	}
	var search api.SearchResult
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "invoices retried collections"}), &search)
	if search.Total != 2 {
		t.Fatalf("the plan wrote: %+v", search)
	}
	var applied api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"merge"}, "apply": true}), &applied)
	if applied.Applied == nil || applied.Applied.Summary.Merged != 1 {
		t.Fatalf("apply: %+v", applied)
	}
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "invoices retried collections"}), &search)
	if search.Total != 1 {
		t.Errorf("after apply: %+v", search)
	}
}

// arbor-tidy returns the first limit suggestions and says how many it left
// out; apply with limit applies only those.
func TestTidyToolLimit(t *testing.T) {
	root := t.TempDir()
	const n = 5
	for i := range n {
		testroot.Write(t, root, fmt.Sprintf("notes/old/note_%d.md", i), fmt.Sprintf("---\ntitle: Old note %d\ncreatedAt: 2020-01-01T00:00:00Z\n---\n\n## Narrative\nOld note %d.\n", i, i))
	}
	cs := serve(t, root)
	var plan api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"archive"}, "limit": 2}), &plan)
	if len(plan.Suggestions) != 2 || plan.Omitted != n-2 || plan.Counts[api.TidyArchive] != n || plan.Applied != nil {
		t.Fatalf("plan, limit 2: %+v", plan)
	}
	var applied api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"archive"}, "limit": 2, "apply": true}), &applied)
	if applied.Applied == nil || applied.Applied.Summary.Moved != 2 || len(applied.Suggestions) != 2 {
		t.Fatalf("apply, limit 2: %+v", applied)
	}
	var rest api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"archive"}}), &rest)
	if len(rest.Suggestions) != n-2 || rest.Omitted != 0 {
		t.Fatalf("plan after applying 2: %+v", rest)
	}
}

// arbor-tidy reports its pass over the tree to a request with a progress
// token, the value growing.
func TestTidyToolProgress(t *testing.T) {
	root := t.TempDir()
	const n = 250
	for i := range n {
		testroot.Write(t, root, fmt.Sprintf("notes/log/e%04d.md", i), fmt.Sprintf("---\ntitle: Note %d\n---\n\n## Narrative\nText %d about the weekly review.\n", i, i))
	}
	var mu sync.Mutex
	var progress []float64
	cs := serveWith(t, root, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Progress)
		mu.Unlock()
	}}, nil)
	p := &sdk.CallToolParams{Name: ToolTidy, Arguments: map[string]any{"kinds": []string{"merge", "split"}}}
	p.SetProgressToken("tidy-1")
	if res, err := cs.CallTool(context.Background(), p); err != nil || res.IsError {
		t.Fatalf("tidy: %v %s", err, text(res))
	}
	// Notifications are handled apart from the answer: the last may come
	// just after it.
	var got []float64
	for wait := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		got = slices.Clone(progress)
		mu.Unlock()
		if len(got) > 0 && got[len(got)-1] >= n || time.Now().After(wait) {
			break
		}
	}
	if len(got) < 3 || got[len(got)-1] < n {
		t.Fatalf("progress of a tidy of %d entries: %v", n, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress does not increase: %v", got)
		}
	}
}

// arbor-tidy's applied writes are announced as it answers, as a curate's
// are, without waiting for the watch of the root (which hears nothing
// here): the subscribed duplicate merged away is announced.
func TestTidyToolAnnouncesItsWrites(t *testing.T) {
	w := &lossyWatcher{signal: make(chan struct{}, 1)}
	defer func(old func(string) (rootWatcher, error)) { newRootWatcher = old }(newRootWatcher)
	newRootWatcher = func(string) (rootWatcher, error) { return w, nil }
	root := t.TempDir()
	narrative := "Failed invoices are retried three times, two days apart, then the account goes to the collections team."
	testroot.Write(t, root, "engineering/billing/invoice_retries.md", "---\ntitle: Invoice retries\n---\n\n## Narrative\n"+narrative+"\n")
	testroot.Write(t, root, "finance/billing/invoice_retries.md", "---\ntitle: Invoice retries\n---\n\n## Narrative\n"+narrative+"\n")
	updated, opts := notes()
	cs := serveWith(t, root, opts, nil)
	for _, p := range []string{"engineering/billing/invoice_retries.md", "finance/billing/invoice_retries.md"} {
		if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: EntryURI(p)}); err != nil {
			t.Fatal(err)
		}
	}
	var applied api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"merge"}, "apply": true}), &applied)
	if applied.Applied == nil || applied.Applied.Summary.Merged != 1 || len(applied.Suggestions) != 1 {
		t.Fatalf("apply: %+v", applied)
	}
	gone := applied.Suggestions[0].Paths[1]
	until(t, updated, EntryURI(gone))
}
