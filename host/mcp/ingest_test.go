package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
)

// arbor-ingest splits a document the agent sends into entries, reports
// its progress to a request with a progress token, always forward, and a
// second ingest of the same text changes nothing.
func TestIngestTool(t *testing.T) {
	var mu sync.Mutex
	var progress []float64
	var messages []string
	cs := serveWith(t, t.TempDir(), &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Progress)
		messages = append(messages, r.Params.Message)
		mu.Unlock()
	}}, nil)
	const rows = 300
	var csv strings.Builder
	csv.WriteString("title,owner,notes\n")
	for i := range rows {
		fmt.Fprintf(&csv, "Ticket %d,team %d,the ticket number %d is about widget%d\n", i, i%7, i, i)
	}
	p := &sdk.CallToolParams{Name: ToolIngest, Arguments: map[string]any{"files": []map[string]any{{"name": "exports/tickets.csv", "content": csv.String()}}}}
	p.SetProgressToken("ingest-1")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("ingest: %v %s", err, text(res))
	}
	var out api.IngestResult
	decode(t, res, &out)
	if out.Summary.Files != 1 || out.Summary.Added != rows || out.Files[0].Status != api.IngestAdded {
		t.Fatalf("ingest result: %+v", out.Summary)
	}
	mu.Lock()
	got, said := slices.Clone(progress), slices.Clone(messages)
	mu.Unlock()
	if len(got) < 3 || got[len(got)-1] < rows {
		t.Fatalf("progress of a %d-row ingest: %v %q", rows, got, said)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress does not increase: %v", got)
		}
	}
	if !strings.HasPrefix(said[0], "write: 0 of 300") {
		t.Errorf("first progress message %q", said[0])
	}
	var found api.SearchResult
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "widget123"}), &found)
	if len(found.Results) == 0 || !strings.Contains(found.Results[0].Path, "ticket_123") {
		t.Fatalf("search for an ingested row: %+v", found.Results)
	}
	decode(t, call(t, cs, ToolIngest, map[string]any{"files": []map[string]any{{"name": "exports/tickets.csv", "content": csv.String()}}}), &out)
	if out.Files[0].Status != api.IngestUnchanged {
		t.Fatalf("the same text again: %+v", out.Files[0])
	}
	// A document that cannot be read is a failed file, flagged as an error.
	res = call(t, cs, ToolIngest, map[string]any{"files": []map[string]any{{"name": "bad.json", "content": "{not json"}}})
	if !res.IsError || !strings.Contains(text(res), "failed") {
		t.Fatalf("bad JSON: %v %s", res.IsError, text(res))
	}
}
