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
		"the lifecycle signals and the index.\n\n" +
		"Limits for an agent you do not fully trust (docs/sandbox.md): --read-only serves\n" +
		"the tree without arbor-curate and writes nothing at all; --call-timeout stops a\n" +
		"call that runs longer (CPU-bound calls then run 4 to 6 times slower); --max-memory\n" +
		"caps the engine's memory. A call stopped by a limit fails with a message saying\n" +
		"so, and the next call reopens the memory.",
	example:  "arbor mcp --root ~/notes",
	examples: []string{"arbor mcp --root ~/notes --read-only --call-timeout 30s --max-memory 1024"},
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		every := fs.Duration("flush-every", 5*time.Minute, "while idle, write lifecycle signals this often `DURATION` (0: only at exit)")
		readOnly := fs.Bool("read-only", false, "grant the memory read-only: no arbor-curate, nothing written (not even .arbor/)")
		timeout := fs.Duration("call-timeout", 0, "stop an engine call that runs longer than `DURATION` (0: no limit)")
		maxMemory := fs.Int("max-memory", 0, "cap the engine's memory at `MIB` mebibytes (0: no cap; wazero's own is 4096)")
		return func(a *app, _ []string) error {
			if *timeout < 0 || *maxMemory < 0 {
				return usageErr("mcp: --call-timeout and --max-memory must not be negative")
			}
			opts := []runtime.Option{
				runtime.WithWatch(0), // a long session: see what editors and other processes change
				runtime.WithCallTimeout(*timeout), runtime.WithMaxMemory(int64(*maxMemory) << 20),
			}
			if *readOnly {
				opts = append(opts, runtime.WithReadOnly())
			}
			ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.withDirect(func(eng *runtime.Engine) error {
				// One line for the client's MCP log, and for a person who
				// started it by hand and sees nothing else.
				fmt.Fprintf(a.stderr, "arbor mcp: serving %s on stdin/stdout; end of input or SIGINT/SIGTERM stops it\n", eng.Root())
				srv := mcp.New(eng, mcp.WithFlushInterval(*every))
				return srv.Run(ctx, mcp.StdioTransport(readCloser(a.stdin), a.stdout))
			}, opts...)
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
