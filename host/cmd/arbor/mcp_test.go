package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/mcp"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	needEngine(t)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arbor-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "arbor")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// mcpClient spawns `arbor mcp` on root with flags and connects the SDK's
// client to it over the process's stdin and stdout.
func mcpClient(t *testing.T, root string, flags ...string) (*sdk.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--root", root, "mcp"}, flags...)...)
	cmd.Stderr = os.Stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "arbor-test", Version: "1"}, nil).
		Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The server stops before the root is removed: left running until the
	// test binary exits, its last flush would write into a removed root.
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

func callTool(t *testing.T, cs *sdk.ClientSession, tool string, args any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if out != nil && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", tool, b, err)
		}
	}
	return res
}

func toolText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func examplesCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../../examples/notes")); err != nil {
		t.Fatal(err)
	}
	must(t, "", "init", dir)
	return dir
}

// The real binary over real pipes: every tool, as an agent would call them.
func TestMCPBinaryTools(t *testing.T) {
	root := examplesCopy(t)
	cs, cmd := mcpClient(t, root)

	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != "arbor-context arbor-curate arbor-ingest arbor-move arbor-query arbor-read arbor-recent arbor-search arbor-sync arbor-tidy arbor-tree" {
		t.Fatalf("tools: %v", names)
	}

	var q api.QueryResult
	callTool(t, cs, mcp.ToolQuery, map[string]any{"query": "which tokenizer did we pick for Korean"}, &q)
	if q.Tier != api.TierDirect || q.TierName != "direct" || !strings.Contains(q.Answer, "character bigrams") ||
		len(q.Results) != 5 || q.Results[0].Path != "research/retrieval/korean_tokenizer_findings.md" || q.Results[0].Lifecycle == nil {
		t.Fatalf("query: %+v", q)
	}
	callTool(t, cs, mcp.ToolQuery, map[string]any{"query": "what is the capital of Peru"}, &q)
	if !q.OutOfDomain {
		t.Errorf("out-of-domain query: %+v", q)
	}

	var s api.SearchResult
	callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "korean tokenizer", "limit": 3}, &s)
	if len(s.Results) != 3 || s.Results[0].Path != "research/retrieval/korean_tokenizer_findings.md" || s.Results[0].Score <= 0 || s.Results[0].Lifecycle != nil {
		t.Fatalf("search: %+v", s)
	}

	var cur struct {
		Applied []struct{ Type, Path, Status, Message string }
		Summary map[string]int
	}
	res := callTool(t, cs, mcp.ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Refund approval limits",
			"content": map[string]any{"narrative": "Refunds above 200 EUR need a billing lead.",
				"relations": []any{"engineering/billing/invoice_retry_policy.md"}, "keywords": []any{"refund"}},
			"reason": "support sync"},
		map[string]any{"type": "MERGE", "path": "engineering/billing/missing.md", "mergeTarget": "engineering/billing/proration_rules.md", "reason": "tidy"},
	}}, &cur)
	if !res.IsError || len(cur.Applied) != 2 || cur.Applied[0].Status != "success" || cur.Applied[1].Status != "failed" || cur.Summary["added"] != 1 || cur.Summary["failed"] != 1 {
		t.Fatalf("curate: isError %v %+v", res.IsError, cur)
	}

	var r api.ReadResult
	callTool(t, cs, mcp.ToolRead, map[string]any{"path": "engineering/billing/invoice_retry_policy.md"}, &r)
	if r.Title != "Invoice Retry Policy" || !strings.Contains(strings.Join(r.Backlinks, " "), "engineering/billing/refund_approval_limits.md") || !strings.HasPrefix(r.Markdown, "---\n") {
		t.Fatalf("read: backlinks %v, title %q", r.Backlinks, r.Title)
	}

	var tree api.Node
	callTool(t, cs, mcp.ToolTree, map[string]any{"path": "engineering"}, &tree)
	if tree.Kind != "domain" || len(tree.Children) == 0 {
		t.Fatalf("tree: %+v", tree)
	}
	for _, topic := range tree.Children {
		for _, c := range topic.Children {
			if len(c.Children) > 0 {
				t.Errorf("default depth 2 shows %s's children", c.Path)
			}
		}
	}

	// Bad requests are answered, and the server keeps serving.
	for _, bad := range []struct {
		tool string
		args any
	}{
		{mcp.ToolRead, map[string]any{"path": "../../etc/passwd"}},
		{mcp.ToolRead, map[string]any{"path": "/etc/passwd"}},
		{mcp.ToolSearch, map[string]any{"limit": 3}},
		{mcp.ToolCurate, map[string]any{"operations": "ADD everything"}},
	} {
		if res := callTool(t, cs, bad.tool, bad.args, nil); !res.IsError || toolText(res) == "" {
			t.Errorf("%s %v: not a tool error: %+v", bad.tool, bad.args, res)
		}
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "arbor-nope"}); err == nil {
		t.Error("an unknown tool was accepted")
	}
	if res := callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "refund"}, &s); res.IsError || s.Total == 0 {
		t.Fatalf("the server stopped serving after bad requests: %+v", s)
	}

	// Closing stdin ends the server cleanly, with the signals written.
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("arbor mcp exited %d", code)
	}
	state, err := os.ReadFile(filepath.Join(root, ".arbor/state.json"))
	if err != nil || !strings.Contains(string(state), `"engineering/billing/invoice_retry_policy.md": {`) {
		t.Fatalf("state.json after shutdown: %v\n%s", err, state)
	}
}

// Concurrent calls from one client are all answered, none lost or mixed up.
func TestMCPBinaryConcurrentCalls(t *testing.T) {
	root := examplesCopy(t)
	cs, _ := mcpClient(t, root)
	defer cs.Close()
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Add(3)
		go func() {
			defer wg.Done()
			title := fmt.Sprintf("Concurrent note %d", i)
			var cur struct {
				Applied []struct{ Path, Status string }
			}
			res := callTool(t, cs, mcp.ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "scratch/concurrency",
				"title": title, "content": map[string]any{"narrative": fmt.Sprintf("marker%d", i)}, "reason": "load"}}}, &cur)
			if res.IsError || cur.Applied[0].Path != fmt.Sprintf("scratch/concurrency/concurrent_note_%d.md", i) {
				errs <- fmt.Errorf("curate %d: %s", i, toolText(res))
			}
		}()
		go func() {
			defer wg.Done()
			var q api.QueryResult
			callTool(t, cs, mcp.ToolQuery, map[string]any{"query": "refresh token rotation"}, &q)
			if len(q.Results) == 0 || q.Results[0].Path != "engineering/auth/refresh_token_rotation.md" {
				errs <- fmt.Errorf("query %d: %+v", i, q.Results)
			}
		}()
		go func() {
			defer wg.Done()
			var r api.ReadResult
			callTool(t, cs, mcp.ToolRead, map[string]any{"path": "personal/preferences/coffee_preferences.md"}, &r)
			if r.Path != "personal/preferences/coffee_preferences.md" {
				errs <- fmt.Errorf("read %d: %+v", i, r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var tree api.Node
	callTool(t, cs, mcp.ToolTree, map[string]any{"path": "scratch/concurrency", "depth": 0}, &tree)
	if len(tree.Children) != n {
		t.Errorf("%d entries written, want %d", len(tree.Children), n)
	}
}

// rawServer speaks newline-delimited JSON-RPC to `arbor mcp` directly, to
// control exactly what goes on the wire and when.
type rawServer struct {
	cmd *exec.Cmd
	in  *os.File
	out *bufio.Scanner
}

func startRaw(t *testing.T, root string) *rawServer {
	t.Helper()
	cmd := exec.Command(binary(t), "--root", root, "mcp")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	r := &rawServer{cmd: cmd, out: sc}
	r.in = stdin.(*os.File)
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.responses(t, 1)
	return r
}

// send writes the lines in one write, so that the server finds them all
// waiting at once.
func (r *rawServer) send(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := r.in.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// responses reads n responses, by id.
func (r *rawServer) responses(t *testing.T, n int) map[int]json.RawMessage {
	t.Helper()
	got := map[int]json.RawMessage{}
	for len(got) < n && r.out.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(r.out.Bytes(), &m); err != nil {
			t.Fatalf("not JSON-RPC: %s", r.out.Bytes())
		}
		if m.ID == nil {
			continue // a notification
		}
		if m.Error != nil {
			got[*m.ID] = m.Error
		} else {
			got[*m.ID] = m.Result
		}
	}
	if len(got) < n {
		t.Fatalf("%d responses of %d: %v", len(got), n, r.out.Err())
	}
	return got
}

func toolCall(id int, tool string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// A write sent before a read is applied before it, even when the client
// sends both without waiting: calls reach the engine in wire order.
func TestMCPBinaryWireOrder(t *testing.T) {
	root := examplesCopy(t)
	r := startRaw(t, root)
	const pairs = 15
	var lines []string
	for i := range pairs {
		word := fmt.Sprintf("zqx%dvw", i)
		lines = append(lines,
			toolCall(2*i+1, mcp.ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "scratch/order",
				"title": "Order note " + word, "content": map[string]any{"narrative": "the code word is " + word}, "reason": "order test"}}}),
			toolCall(2*i+2, mcp.ToolSearch, map[string]any{"query": word}))
	}
	r.send(t, lines...)
	got := r.responses(t, 2*pairs)
	for i := range pairs {
		var res struct {
			StructuredContent api.SearchResult `json:"structuredContent"`
		}
		if err := json.Unmarshal(got[2*i+2], &res); err != nil {
			t.Fatal(err)
		}
		if res.StructuredContent.Total != 1 {
			t.Errorf("search %d ran before the curate sent ahead of it: %s", i, got[2*i+2])
		}
	}
}

// Calls read before stdin closes are answered, and SIGTERM stops the
// server after writing its state: both are clean exits.
func TestMCPBinaryShutdown(t *testing.T) {
	root := examplesCopy(t)
	r := startRaw(t, root)
	r.send(t, toolCall(1, mcp.ToolQuery, map[string]any{"query": "which tokenizer did we pick for Korean"}),
		toolCall(2, mcp.ToolQuery, map[string]any{"query": "standing desk"}))
	r.in.Close()
	got := r.responses(t, 2)
	if !strings.Contains(string(got[1]), "korean_tokenizer_findings.md") {
		t.Errorf("query before end of input: %s", got[1])
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("exit after end of input: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, ".arbor/state.json")); err != nil || !strings.Contains(string(b), `"accesses": 1`) {
		t.Fatalf("state after end of input: %v\n%s", err, b)
	}

	os.Remove(filepath.Join(root, ".arbor/state.json"))
	r = startRaw(t, root)
	r.send(t, toolCall(1, mcp.ToolRead, map[string]any{"path": "engineering/auth/session_lifetime.md"}))
	r.responses(t, 1)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("arbor mcp ignored SIGTERM")
	}
	b, err := os.ReadFile(filepath.Join(root, ".arbor/state.json"))
	if err != nil || !strings.Contains(string(b), `"engineering/auth/session_lifetime.md": {`) {
		t.Fatalf("state after SIGTERM: %v\n%s", err, b)
	}
}

// The mcpServers snippet of the README, run as a client runs it (the
// command and args as written, with the binary and the root filled in):
// with no LLM settings at all, the agent curates and queries.
func TestMCPReadmeSnippet(t *testing.T) {
	bin := binary(t)
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var snippet string
	for _, block := range strings.Split(string(readme), "```json\n")[1:] {
		if body, _, ok := strings.Cut(block, "```"); ok && strings.Contains(body, "mcpServers") {
			snippet = body
			break
		}
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
		t.Fatalf("README snippet %q: %v", snippet, err)
	}
	server, ok := cfg.MCPServers["arbor"]
	if !ok || server.Command != "arbor" {
		t.Fatalf("README snippet: %+v", cfg)
	}
	root := t.TempDir()
	must(t, "", "init", root)
	args := append([]string(nil), server.Args...)
	for i, a := range args {
		if a == "/absolute/path/to/notes" {
			args[i] = root
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()} // no ARBOR_LLM_* or provider keys
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "readme", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := callTool(t, cs, mcp.ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "personal/preferences", "title": "Coffee", "summary": "Flat white, no sugar, before 11:00 only.",
			"content": map[string]any{"narrative": "Asked for a flat white twice; never after 11:00.", "keywords": []any{"coffee", "flat white"}}, "reason": "asked twice"},
		map[string]any{"type": "ADD", "path": "personal/preferences", "title": "Standing desk",
			"content": map[string]any{"narrative": "Stand until noon; desk presets 74 cm and 112 cm."}, "reason": "new desk"},
	}}, nil)
	if res.IsError {
		t.Fatalf("curate: %s", toolText(res))
	}
	var q api.QueryResult
	callTool(t, cs, mcp.ToolQuery, map[string]any{"query": "how do I like my coffee"}, &q)
	if q.NeedsLLM || q.OutOfDomain || !strings.Contains(q.Answer, "Flat white") {
		t.Fatalf("query: %+v", q)
	}
	if _, err := os.Stat(filepath.Join(root, "personal/preferences/coffee.md")); err != nil {
		t.Fatal(err)
	}
}

// Lines that are not JSON-RPC messages are answered with JSON-RPC errors
// and skipped; the session goes on.
func TestMCPBinaryBadLines(t *testing.T) {
	root := t.TempDir()
	must(t, "", "init", root)
	r := startRaw(t, root)
	r.send(t, "this is not json", `{"no":"jsonrpc"}`, "", toolCall(7, mcp.ToolTree, map[string]any{}))
	var codes []int
	answered := false
	for !answered && r.out.Scan() {
		var m struct {
			ID    *int `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.out.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %s", r.out.Bytes())
		}
		switch {
		case m.ID == nil && m.Error != nil:
			codes = append(codes, m.Error.Code)
		case m.ID != nil && *m.ID == 7:
			answered = m.Error == nil
		}
	}
	if !answered || len(codes) != 2 || codes[0] != -32700 || codes[1] != -32600 {
		t.Fatalf("answered %v, error codes %v", answered, codes)
	}
}

// everything maps every file under dir, .arbor/ included, to its content.
func everything(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The read-only grant over real pipes: no arbor-curate, and every byte of
// the root left as it was, .arbor/ included, through a query and a
// shutdown.
func TestMCPBinaryReadOnly(t *testing.T) {
	root := examplesCopy(t)
	before := everything(t, root)
	cs, cmd := mcpClient(t, root, "--read-only")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != "arbor-context arbor-query arbor-read arbor-recent arbor-search arbor-tree" {
		t.Fatalf("tools of a read-only server: %v", names)
	}
	var q api.QueryResult
	callTool(t, cs, mcp.ToolQuery, map[string]any{"query": "how many times are failed invoices retried"}, &q)
	if q.Tier != api.TierDirect || q.Results[0].Path != "engineering/billing/invoice_retry_policy.md" {
		t.Fatalf("query: %+v", q)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("arbor mcp exited %d", code)
	}
	if after := everything(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the read-only server changed the root:\nbefore %v\nafter  %v", keys(before), keys(after))
	}
}

// The memory cap over real pipes: a call that needs more is a tool error
// naming the cap, it changes nothing, and the server keeps serving.
func TestMCPBinaryMemoryCap(t *testing.T) {
	root := examplesCopy(t)
	cs, _ := mcpClient(t, root, "--max-memory", "48")
	defer cs.Close()
	before := snapshot(t, root)
	// Decoding 100,000 operations takes far more than 48 MiB (30,000
	// came close to fitting once the index stopped being held whole).
	ops := make([]any, 100000)
	for i := range ops {
		ops[i] = map[string]any{"type": "UPDATE", "path": fmt.Sprintf("notes/misc/missing_%d.md", i), "content": map[string]any{"narrative": "text"}, "reason": "test"}
	}
	res := callTool(t, cs, mcp.ToolCurate, map[string]any{"operations": ops}, nil)
	if msg := toolText(res); !res.IsError || !strings.Contains(msg, "its cap of 48 MiB") || !strings.Contains(msg, "restarts at the next call") {
		t.Fatalf("curate over the cap: isError %v, %.300s", res.IsError, msg)
	}
	if after := snapshot(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("the stopped call changed the tree")
	}
	var s api.SearchResult
	if res := callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "korean tokenizer", "limit": 3}, &s); res.IsError || s.Results[0].Path != "research/retrieval/korean_tokenizer_findings.md" {
		t.Fatalf("search after the stop: %s %+v", toolText(res), s)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The limits reach the engine: a deadline nothing can meet and a cap below
// what the engine needs to start each stop the server with a message
// saying which, and bad values are usage errors.
func TestMCPLimitFlags(t *testing.T) {
	needEngine(t)
	root := examplesCopy(t)
	for _, c := range []struct {
		flags []string
		code  int
		want  string
	}{
		{[]string{"--call-timeout", "1ns"}, exitError, "stopped at its deadline (calls may run for 1ns)"},
		{[]string{"--max-memory", "1"}, exitError, "memory capped at 1 MiB"},
		{[]string{"--max-memory", "-5"}, exitUsage, "must not be negative"},
		{[]string{"--call-timeout", "-1s"}, exitUsage, "must not be negative"},
	} {
		r := arbor(t, "", append([]string{"--root", root, "mcp"}, c.flags...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("mcp %v: exit %d, stderr %q; want exit %d saying %q", c.flags, r.code, r.stderr, c.code, c.want)
		}
	}
}
