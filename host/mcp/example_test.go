package mcp_test

import (
	"context"
	"fmt"
	"log"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/mcp"
	"github.com/arbormem/arbor/host/runtime"
)

// Serve a memory to an MCP client. `arbor mcp` does this over stdio
// (StdioTransport); here client and server talk over in-memory pipes.
// The agent curates with structured operations and queries: no LLM key is
// needed, since the agent is the model.
func ExampleServer_Run() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "arbor-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	eng, err := runtime.New(ctx, root)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(ctx)
	if _, err := eng.Open(ctx, api.OpenParams{FixedTime: "2026-03-01T09:00:00Z"}); err != nil {
		log.Fatal(err)
	}

	serverSide, clientSide := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcp.New(eng).Run(ctx, serverSide) }()
	client, err := sdk.NewClient(&sdk.Implementation{Name: "example-agent", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}

	calls := []sdk.CallToolParams{
		{Name: mcp.ToolCurate, Arguments: map[string]any{"operations": []map[string]any{{
			"type": "ADD", "path": "personal/preferences", "title": "Coffee",
			"content": map[string]any{"narrative": "Oat milk flat white, no sugar."}, "reason": "the user said so twice",
		}}}},
		{Name: mcp.ToolQuery, Arguments: map[string]any{"query": "which coffee, with oat milk?"}},
	}
	for _, c := range calls {
		res, err := client.CallTool(ctx, &c)
		if err != nil {
			log.Fatal(err)
		}
		out := res.StructuredContent.(map[string]any) // the tool's result, as JSON
		switch c.Name {
		case mcp.ToolCurate:
			fmt.Println(c.Name, out["summary"])
		case mcp.ToolQuery:
			first := out["results"].([]any)[0].(map[string]any)
			fmt.Println(c.Name, out["tierName"], first["path"])
		}
	}
	client.Close()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// arbor-curate map[added:1 deleted:0 failed:0 merged:0 moved:0 updated:0]
	// arbor-query direct personal/preferences/coffee.md
}
