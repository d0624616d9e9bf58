package mcp

import (
	"context"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// BenchmarkMCPOverhead measures what MCP adds to a call: each iteration
// runs the same search straight on the engine and through the server over
// in-memory pipes (JSON-RPC, schema validation, the queue), alternating so
// that both see the same machine load. It reports both times and their
// ratio:
//
//	go test ./host/mcp -run '^$' -bench MCPOverhead
func BenchmarkMCPOverhead(b *testing.B) {
	dir := b.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/notes")); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	eng, err := runtime.New(ctx, dir)
	if err != nil {
		b.Skip(err)
	}
	defer eng.Close(ctx)
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		b.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- New(eng).Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cs.Close(); <-done }()
	const query = "connection pool sizing"
	args := map[string]any{"query": query}
	var direct, viaMCP time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := eng.Search(ctx, api.SearchParams{Query: query}); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolSearch, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		direct += mid.Sub(start)
		viaMCP += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Microseconds())/n, "engine-µs/call")
	b.ReportMetric(float64(viaMCP.Microseconds())/n, "mcp-µs/call")
	b.ReportMetric(float64(viaMCP)/float64(direct), "mcp/engine")
}
