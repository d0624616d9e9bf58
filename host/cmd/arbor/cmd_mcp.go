package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/arbormem/arbor/host/mcp"
	"github.com/arbormem/arbor/host/runtime"
)

var mcpCommand = &command{
	name:    "mcp",
	summary: "serve the memory to an AI agent over MCP (stdio)",
	help: "Runs a Model Context Protocol server on stdin/stdout for an agent client (Claude\n" +
		"Desktop, Claude Code, Cursor, …) with the tools arbor-query, arbor-search,\n" +
		"arbor-read, arbor-tree and arbor-curate. No LLM key is needed: the agent is the\n" +
		"curator. Calls are served one at a time in the order they arrive; each sees the\n" +
		"files as they are on disk (the root is watched). Diagnostics go\n" +
		"to stderr. The server stops when stdin closes or on SIGINT/SIGTERM, after writing\n" +
		"the lifecycle signals and the index.",
	example: "arbor mcp --root ~/notes",
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		every := fs.Duration("flush-every", 5*time.Minute, "while idle, write lifecycle signals this often `DURATION` (0: only at exit)")
		return func(a *app, _ []string) error {
			ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.withEngine(func(eng *runtime.Engine) error {
				// One line for the client's MCP log, and for a person who
				// started it by hand and sees nothing else.
				fmt.Fprintf(a.stderr, "arbor mcp: serving %s on stdin/stdout; end of input or SIGINT/SIGTERM stops it\n", eng.Root())
				srv := mcp.New(eng, mcp.WithFlushInterval(*every))
				return srv.Run(ctx, mcp.StdioTransport(readCloser(a.stdin), a.stdout))
			}, runtime.WithWatch(0)) // a long session: see what editors and other processes change
		}
	},
}

// readCloser keeps a stream's own Close (os.Stdin's unblocks a pending
// read at shutdown) or adds one that does nothing.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}
