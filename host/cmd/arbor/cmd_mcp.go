package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/mcp"
	"github.com/arbormem/arbor/host/runtime"
)

var mcpCommand = &command{
	name:    "mcp",
	summary: "serve the memory to AI agents over MCP (stdio, or Streamable HTTP with --http)",
	help: "Runs a Model Context Protocol server for agent clients (Claude Desktop, Claude\n" +
		"Code, Cursor, …) with the tools arbor-query, arbor-search, arbor-read,\n" +
		"arbor-context, arbor-recent, arbor-tree, arbor-curate, arbor-move, arbor-tidy,\n" +
		"arbor-ingest and arbor-sync (with the root's git remote, when the agent is\n" +
		"asked to: see arbor sync), the entries as arbor:// resources (subscribe to hear\n" +
		"of changes), and the prompts arbor-recall, arbor-record and arbor-tidy. No LLM\n" +
		"key is needed: the agent is the curator.\n" +
		"Calls are served in the order they arrive: a write alone, reads at the same time\n" +
		"on --readers engine instances (default 1 on stdio, with --http the number of\n" +
		"CPUs up to 4; each holds its own index in memory); every call sees the writes\n" +
		"before it and the files as they are on disk (the root is watched). Diagnostics\n" +
		"go to stderr. The server stops when stdin closes (stdio) or on SIGINT/SIGTERM,\n" +
		"after writing the lifecycle signals and the index.\n\n" +
		"With --http ADDR it serves any number of clients at http://ADDR/mcp instead, all\n" +
		"on one engine, each seeing the others' writes. ADDR is host:port; a bare port or\n" +
		":port means 127.0.0.1, and port 0 picks a free one (the URL is printed). Every\n" +
		"request needs Authorization: Bearer TOKEN: the token is --token, else\n" +
		"$ARBOR_MCP_TOKEN, else the one in .arbor/mcp-token (written, readable by this\n" +
		"user only, at the first start). --no-token serves without one, on a loopback\n" +
		"address only. Requests naming a Host other than an IP address, localhost or an\n" +
		"--allow-host name, or sent from a browser page whose origin is neither loopback\n" +
		"nor an --allow-origin, are refused (403).\n\n" +
		"Limits for an agent you do not fully trust (docs/sandbox.md): --read-only serves\n" +
		"the tree without arbor-curate and writes nothing at all; --call-timeout stops a\n" +
		"call that runs longer (CPU-bound calls then run 4 to 6 times slower); --max-memory\n" +
		"caps the engine's memory. A call stopped by a limit fails with a message saying\n" +
		"so, and the next call reopens the memory.",
	example: "arbor mcp --root ~/notes",
	examples: []string{
		"arbor mcp --root ~/notes --read-only --call-timeout 30s --max-memory 1024",
		"arbor mcp --root ~/notes --http 127.0.0.1:7331",
	},
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		every := fs.Duration("flush-every", 5*time.Minute, "while idle, write lifecycle signals this often `DURATION` (0: only at exit)")
		readOnly := fs.Bool("read-only", false, "grant the memory read-only: no arbor-curate, nothing written (not even .arbor/)")
		timeout := fs.Duration("call-timeout", 0, "stop an engine call that runs longer than `DURATION` (0: no limit)")
		maxMemory := fs.Int("max-memory", 0, "cap the engine's memory at `MIB` mebibytes (0: no cap; wazero's own is 4096)")
		addr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (host:port; a bare port is on 127.0.0.1) instead of stdio")
		token := fs.String("token", "", "with --http: the bearer `TOKEN` clients must send (default $ARBOR_MCP_TOKEN, else .arbor/mcp-token)")
		readers := fs.Int("readers", 0, "answer reads on `N` engine instances at once, beside the one that writes (default: 1 on stdio, the CPUs up to 4 with --http; 1: one engine answers every call)")
		noToken := fs.Bool("no-token", false, "with --http on a loopback address: require no token (for tests and conformance suites)")
		var origins, hosts listFlag
		fs.Var(&origins, "allow-origin", "with --http: also accept browser requests from `ORIGIN` (scheme://host[:port]; repeatable)")
		fs.Var(&hosts, "allow-host", "with --http: also answer requests for the host `NAME` (repeatable)")
		return func(a *app, _ []string) error {
			if *timeout < 0 || *maxMemory < 0 {
				return usageErr("mcp: --call-timeout and --max-memory must not be negative")
			}
			if *readers < 0 || *readers > maxReaders {
				return usageErr(fmt.Sprintf("mcp: --readers must lie in 1..%d", maxReaders))
			}
			n := *readers
			if n == 0 {
				n = defaultReaders(*addr != "")
			}
			if *addr == "" && (*token != "" || *noToken || len(origins) > 0 || len(hosts) > 0) {
				return usageErr("mcp: --token, --no-token, --allow-origin and --allow-host go with --http")
			}
			if *noToken && *token != "" {
				return usageErr("mcp: --no-token and --token contradict each other")
			}
			relay := mcp.NewRelay(a.stderr)
			opts := append([]runtime.Option{
				runtime.WithWatch(0), // a long session: see what editors and other processes change
				runtime.WithCallTimeout(*timeout), runtime.WithMaxMemory(int64(*maxMemory) << 20),
			}, relay.EngineOptions()...)
			if *readOnly {
				opts = append(opts, runtime.WithReadOnly())
			}
			ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			srvOpts := []mcp.Option{mcp.WithFlushInterval(*every), mcp.WithRelay(relay)}
			if *addr == "" {
				return a.withDirect(func(eng *runtime.Engine) error {
					if err := addReaders(ctx, eng, n); err != nil {
						return err
					}
					// One line for the client's MCP log, and for a person who
					// started it by hand and sees nothing else.
					fmt.Fprintf(a.stderr, "arbor mcp: serving %s on stdin/stdout; end of input or SIGINT/SIGTERM stops it\n", eng.Root())
					return mcp.New(eng, srvOpts...).Run(ctx, mcp.StdioTransport(readCloser(a.stdin), a.stdout))
				}, opts...)
			}
			listen := httpAddr(*addr)
			if *noToken && !mcp.IsLoopback(listen) {
				return usageErr(fmt.Sprintf("mcp: --no-token is refused on %s: only a loopback address (127.0.0.1, ::1, localhost) may serve without a token", listen))
			}
			return a.withDirect(func(eng *runtime.Engine) error {
				if err := addReaders(ctx, eng, n); err != nil {
					return err
				}
				hopts := mcp.HTTPOptions{AllowedOrigins: origins, AllowedHosts: hosts, SessionTimeout: time.Hour}
				from := "--no-token: none"
				if !*noToken {
					var err error
					hopts.Token, from, err = bearerToken(*token, eng.Root(), *readOnly)
					if err != nil {
						return err
					}
					hopts.TokenHint = "the token is in the memory root's " + tokenFile + " unless the server was given one"
				}
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					return fmt.Errorf("mcp: %w", err)
				}
				fmt.Fprintf(a.stderr, "arbor mcp: serving %s on http://%s%s (token: %s); SIGINT/SIGTERM stops it\n", eng.Root(), ln.Addr(), mcp.Endpoint, from)
				return mcp.New(eng, srvOpts...).Serve(ctx, ln, hopts)
			}, opts...)
		}
	},
}

// maxReaders bounds --readers: each reader holds the whole index.
const maxReaders = 64

// defaultReaders is --readers when not given: on stdio one client calls in
// order, so readers would only cost memory; over HTTP, one per CPU the
// process may use, up to 4, beyond which the measured gain is small
// (bench/mcphttp/REPORT.md) and each costs its own index.
func defaultReaders(http bool) int {
	if !http {
		return 1
	}
	return min(goruntime.GOMAXPROCS(0), 4)
}

// addReaders starts n readers beside eng when n > 1 (1: eng answers every
// call itself).
func addReaders(ctx context.Context, eng *runtime.Engine, n int) error {
	if n <= 1 {
		return nil
	}
	if err := eng.AddReaders(ctx, n); err != nil {
		return fmt.Errorf("mcp: --readers %d: %w", n, err)
	}
	return nil
}

// httpAddr completes an --http address: a bare port or ":port" is on
// 127.0.0.1, so that all interfaces are served only when asked
// (0.0.0.0:port, [::]:port).
func httpAddr(addr string) string {
	if !strings.Contains(addr, ":") {
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// tokenFile holds the bearer token of `arbor mcp --http` when none is
// given: .arbor/ is the engine's private folder, kept out of git.
const tokenFile = ".arbor/mcp-token"

// bearerToken returns the token to require and where it comes from: the
// flag, else $ARBOR_MCP_TOKEN, else tokenFile, written with a new random
// token at the first start (unless the memory is granted read-only, which
// writes nothing). A token file others can read is refused, as ssh refuses
// a private key.
func bearerToken(flagToken, root string, readOnly bool) (token, from string, err error) {
	if t := strings.TrimSpace(flagToken); t != "" {
		return t, "--token", nil
	}
	if t := strings.TrimSpace(os.Getenv("ARBOR_MCP_TOKEN")); t != "" {
		return t, "$ARBOR_MCP_TOKEN", nil
	}
	file := filepath.Join(root, filepath.FromSlash(tokenFile))
	f, err := os.Open(file)
	if err == nil {
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return "", "", fmt.Errorf("mcp: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", "", fmt.Errorf("mcp: %s can be read by other users (mode %v): chmod 600 it, or remove it for a new token", file, fi.Mode().Perm())
		}
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		if err != nil {
			return "", "", fmt.Errorf("mcp: %w", err)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, file, nil
		}
		return "", "", fmt.Errorf("mcp: %s is empty: remove it for a new token", file)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("mcp: %w", err)
	}
	if readOnly {
		return "", "", usageErr("mcp: --read-only writes nothing, not even a token: give one with --token or $ARBOR_MCP_TOKEN (or start once without --read-only to write " + tokenFile + ")")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("mcp: a token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	if err := writePrivate(file, []byte(token+"\n")); errors.Is(err, os.ErrExist) {
		return bearerToken(flagToken, root, readOnly) // another server wrote it first
	} else if err != nil {
		return "", "", fmt.Errorf("mcp: write the token: %w", err)
	}
	return token, file + " (new)", nil
}

// writePrivate writes a file readable by its owner only, atomically: a
// temporary file in the same folder, then a rename that keeps an existing
// file (written by a server that started at the same moment) rather than
// replacing it.
func writePrivate(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), api.TempPrefix+"token-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), file)
}

// listFlag is a repeatable flag whose values may also be comma separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// readCloser keeps a stream's own Close (os.Stdin's unblocks a pending
// read at shutdown) or adds one that does nothing.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}
