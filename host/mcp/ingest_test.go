package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
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

// An agent's documents and a folder the CLI ingests under the same name
// are two origins: the folder's prune does not delete the entries of an
// agent's document (often the only copy of its text), and the agent's
// document does not overwrite the folder's entries. The agent's call
// fails its files under the folder's name and says why.
func TestIngestToolKeepsAgentsDocumentsApartFromAFolder(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	cli := func(p api.IngestParams) api.IngestResult {
		t.Helper()
		eng, err := runtime.New(ctx, root, runtime.WithCacheDir(""))
		if errors.Is(err, runtime.ErrNoModule) {
			t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
		}
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close(ctx)
		if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
			t.Fatal(err)
		}
		res, err := eng.Ingest(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	todo := api.SourceFile{Name: "notes/todo.md", Content: "# Todo\n\nBuy milk.\n"}
	cli(api.IngestParams{Files: []api.SourceFile{todo}, Origins: map[string]string{"notes/": "/home/ana/notes"}})

	cs := serveWith(t, root, nil, nil)
	minutes := map[string]any{"name": "minutes/may.md", "content": "# Minutes\n\nShip on Friday.\n"}
	res := call(t, cs, ToolIngest, map[string]any{"files": []map[string]any{
		{"name": "notes/todo.md", "content": "# Todo\n\nSell the car.\n"}, minutes}})
	var out api.IngestResult
	decode(t, res, &out)
	if !res.IsError || out.Files[0].Status != api.IngestFailed || !strings.Contains(out.Files[0].Message, "/home/ana/notes") ||
		out.Files[1].Status != api.IngestAdded {
		t.Fatalf("an agent's notes/todo.md: %+v", out.Files)
	}
	if b, err := os.ReadFile(filepath.Join(root, "notes/todo/todo.md")); err != nil || !strings.Contains(string(b), "Buy milk.") {
		t.Errorf("the folder's entry (%v):\n%s", err, b)
	}

	// The CLI's folder of the agent's name, pruned, keeps the agent's entry.
	got := cli(api.IngestParams{Files: []api.SourceFile{{Name: "minutes/june.md", Content: "# June\n\nNothing.\n"}},
		Origins: map[string]string{"minutes/": "/home/ana/minutes"}, Prune: []string{"minutes/"}})
	if len(got.Warnings) != 1 || got.Warnings[0].Code != api.IngestOtherOrigin || got.Warnings[0].Origin != api.AgentOrigin {
		t.Errorf("the folder's call: %+v %+v", got.Files, got.Warnings)
	}
	if b, err := os.ReadFile(filepath.Join(root, "minutes/may/may.md")); err != nil || !strings.Contains(string(b), "Ship on Friday.") {
		t.Errorf("the agent's document was removed by the folder's prune (%v): %+v", err, got.Files)
	}
}
