package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// serve opens an engine on root and connects a client to a Server over
// in-memory pipes; the end of the test closes both and waits for Run.
func serve(t *testing.T, root string, opts ...Option) *sdk.ClientSession {
	t.Helper()
	return serveEngine(t, root, nil, opts...)
}

// serveEngine is serve with an engine created with engineOpts.
func serveEngine(t *testing.T, root string, engineOpts []runtime.Option, opts ...Option) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	eng, err := runtime.New(ctx, root, append([]runtime.Option{runtime.WithCacheDir("")}, engineOpts...)...)
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	srv := New(eng, opts...)
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		eng.Close(ctx)
	})
	return cs
}

func call(t *testing.T, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// decode reads a result's structured content into v.
func decode(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The tools carry typed schemas with what inference alone cannot say.
func TestToolSchemas(t *testing.T) {
	cs := serve(t, t.TempDir())
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	for _, name := range []string{ToolQuery, ToolSearch, ToolCurate, ToolRead, ToolTree, ToolMove, ToolRecent, ToolSync, ToolContext} {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("tool %s not listed", name)
		}
		if len(tool.Description) < 200 || tool.OutputSchema == nil {
			t.Errorf("%s: description of %d characters, output schema %v", name, len(tool.Description), tool.OutputSchema)
		}
	}
	var in struct {
		Properties map[string]struct {
			Minimum, Maximum *float64
			Default          json.RawMessage
			Description      string
			Items            struct {
				Required   []string
				Properties map[string]struct {
					Enum  []string
					Type  any
					Items json.RawMessage
				}
			}
		}
		Required []string
	}
	schema := func(name string) {
		in.Properties = nil
		in.Required = nil
		b, _ := json.Marshal(tools[name].InputSchema)
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
	}
	schema(ToolQuery)
	if l := in.Properties["limit"]; l.Minimum == nil || *l.Minimum != 1 || *l.Maximum != 20 || string(l.Default) != "5" || !slices.Equal(in.Required, []string{"query"}) {
		t.Errorf("arbor-query input schema: %+v", in)
	}
	schema(ToolSearch)
	if l := in.Properties["limit"]; l.Maximum == nil || *l.Maximum != 100 || string(l.Default) != "10" {
		t.Errorf("arbor-search limit: %+v", l)
	}
	schema(ToolContext)
	if d, b := in.Properties["depth"], in.Properties["budget"]; d.Maximum == nil || *d.Maximum != 3 || string(d.Default) != "1" ||
		b.Minimum == nil || *b.Minimum != 100 || string(b.Default) != "2000" || len(in.Required) != 0 {
		t.Errorf("arbor-context input schema: %+v", in)
	}
	for _, name := range []string{ToolQuery, ToolSearch} {
		schema(name)
		for _, f := range []string{"domain", "topic", "tags", "since", "until", "maturity", "minImportance", "sort"} {
			if in.Properties[f].Description == "" {
				t.Errorf("%s: filter %s not described: %+v", name, f, in.Properties[f])
			}
		}
		if imp := in.Properties["minImportance"]; imp.Maximum == nil || *imp.Maximum != 100 {
			t.Errorf("%s minImportance: %+v", name, imp)
		}
	}
	schema(ToolCurate)
	op := in.Properties["operations"].Items
	if !slices.Equal(op.Properties["type"].Enum, []string{"ADD", "UPDATE", "UPSERT", "MERGE", "DELETE", "MOVE"}) {
		t.Errorf("operation type enum: %v", op.Properties["type"].Enum)
	}
	if slices.Contains(op.Required, "content") || !slices.Contains(op.Required, "reason") || !slices.Contains(op.Required, "path") {
		t.Errorf("operation required: %v", op.Required)
	}
}

// arbor-search and arbor-query take the filters and sort of the engine; a
// bad one is a tool error.
func TestFilterTools(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, root)
	add := func(path, title string, tags ...any) map[string]any {
		return map[string]any{"type": "ADD", "path": path, "title": title,
			"content": map[string]any{"narrative": title + " invoice notes.", "tags": tags}, "reason": "r"}
	}
	ops := []any{add("engineering/billing", "Invoice retry", "billing"), add("ops/billing", "Invoice runbook", "billing", "payments"), add("ops/pager", "Invoice pager")}
	if res := call(t, cs, ToolCurate, map[string]any{"operations": ops}); res.IsError {
		t.Fatalf("curate: %s", text(res))
	}
	paths := func(hs []api.Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Path)
		}
		slices.Sort(out)
		return out
	}
	var sr api.SearchResult
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "invoice", "domain": "ops", "tags": []string{"BILLING"}}), &sr)
	if got := paths(sr.Results); !slices.Equal(got, []string{"ops/billing/invoice_runbook.md"}) || sr.Total != 1 {
		t.Errorf("search in ops tagged billing: %v (total %d)", got, sr.Total)
	}
	var qr api.QueryResult
	decode(t, call(t, cs, ToolQuery, map[string]any{"query": "invoice", "topic": "billing", "sort": "recent", "minImportance": 10, "maturity": []string{"draft"}}), &qr)
	if got := paths(qr.Results); !slices.Equal(got, []string{"engineering/billing/invoice_retry.md", "ops/billing/invoice_runbook.md"}) {
		t.Errorf("query in topic billing: %v", got)
	}
	if res := call(t, cs, ToolSearch, map[string]any{"query": "invoice", "sort": "title"}); !res.IsError || !strings.Contains(text(res), "sort") {
		t.Errorf("a bad sort: %s", text(res))
	}
}

// arbor-move moves an entry and rewrites the link to it; a move onto an
// existing entry is a tool error that changes nothing.
func TestMoveTool(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, root)
	add := func(title string, relations ...any) map[string]any {
		return map[string]any{"type": "ADD", "path": "engineering/billing", "title": title,
			"content": map[string]any{"narrative": title + " notes.", "relations": relations}, "reason": "r"}
	}
	if res := call(t, cs, ToolCurate, map[string]any{"operations": []any{add("Invoice retry policy"), add("Dunning emails", "engineering/billing/invoice_retry_policy.md")}}); res.IsError {
		t.Fatalf("curate: %s", text(res))
	}
	var cur api.CurateResult
	decode(t, call(t, cs, ToolMove, map[string]any{"path": "engineering/billing/invoice_retry_policy.md", "to": "finance/billing", "reason": "finance owns it"}), &cur)
	if cur.Summary.Moved != 1 || cur.Applied[0].To != "finance/billing/invoice_retry_policy.md" {
		t.Fatalf("move: %+v", cur)
	}
	var recent api.RecentResult
	decode(t, call(t, cs, ToolRecent, map[string]any{"since": "1d", "domain": "finance"}), &recent)
	if recent.Total != 1 || recent.Entries[0].Path != "finance/billing/invoice_retry_policy.md" || recent.Entries[0].Title != "Invoice retry policy" {
		t.Errorf("recent: %+v", recent)
	}
	if res := call(t, cs, ToolRecent, map[string]any{"since": "lately"}); !res.IsError || !strings.Contains(text(res), "since") {
		t.Errorf("recent with a bad since: %s", text(res))
	}
	var read api.ReadResult
	decode(t, call(t, cs, ToolRead, map[string]any{"path": "finance/billing/invoice_retry_policy.md"}), &read)
	if !slices.Equal(read.Backlinks, []string{"engineering/billing/dunning_emails.md"}) {
		t.Errorf("backlinks after the move: %v", read.Backlinks)
	}
	var ctx api.ContextResult
	decode(t, call(t, cs, ToolContext, map[string]any{"query": "dunning", "budget": 400}), &ctx)
	if ctx.Path != "engineering/billing/dunning_emails.md" || len(ctx.Entries) != 2 || ctx.Entries[1].Path != "finance/billing/invoice_retry_policy.md" ||
		ctx.Entries[1].Link != api.ContextLinkRelation || ctx.Tokens > 400 || !strings.Contains(ctx.Markdown, "# Invoice retry policy\nPath: finance/billing/invoice_retry_policy.md") {
		t.Errorf("context: %+v", ctx)
	}
	if res := call(t, cs, ToolContext, map[string]any{"path": "finance/billing/invoice_retry_policy.md", "depth": 7}); !res.IsError || !strings.Contains(text(res), "depth") {
		t.Errorf("context with a depth of 7: %s", text(res))
	}
	res := call(t, cs, ToolMove, map[string]any{"path": "finance/billing/invoice_retry_policy.md", "to": "engineering/billing/dunning_emails.md", "reason": "r"})
	if !res.IsError || !strings.Contains(text(res), "already exists") {
		t.Errorf("move onto an entry: %s", text(res))
	}
	if _, err := os.Stat(filepath.Join(root, "finance/billing/invoice_retry_policy.md")); err != nil {
		t.Errorf("a failed move changed the entry: %v", err)
	}
}

// Both forms of narrative that the schema allows reach the entry, and every
// content field survives the trip.
func TestCurateReadBack(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, root)
	res := call(t, cs, ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Invoice retry policy",
			"summary": "three retries, then escalation",
			"content": map[string]any{
				"narrative":  map[string]any{"rules": "Failed invoices are retried three times.", "examples": "+1, +3, +7 days"},
				"facts":      []any{map[string]any{"subject": "retries", "statement": "three", "category": "policy"}},
				"snippets":   []any{"retries = 3"},
				"rawConcept": map[string]any{"task": "record the policy", "files": []any{"billing/retry.go"}, "author": "agent"},
				"tags":       []any{"billing"}, "keywords": []any{"dunning"},
			},
			"reason": "agreed in the billing sync"},
		map[string]any{"type": "UPSERT", "path": "engineering/billing", "title": "Dunning emails",
			"content": map[string]any{"narrative": "A reminder goes out after each failed retry.",
				"relations": []any{"engineering/billing/invoice_retry_policy.md"}},
			"reason": "link the reminder to the policy"},
	}})
	var cur struct {
		Applied []struct{ Path, Status, Message string }
		Summary map[string]int
	}
	decode(t, res, &cur)
	if res.IsError || cur.Summary["added"] != 2 || cur.Applied[1].Path != "engineering/billing/dunning_emails.md" {
		t.Fatalf("curate: %s", text(res))
	}
	md, err := os.ReadFile(filepath.Join(root, "engineering/billing/invoice_retry_policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Rules", "retried three times", "### Examples", "**retries**: three [policy]", "retries = 3", "billing/retry.go", "agent", "dunning", "agreed in the billing sync"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("entry lacks %q:\n%s", want, md)
		}
	}
	var read api.ReadResult
	decode(t, call(t, cs, ToolRead, map[string]any{"path": "engineering/billing/invoice_retry_policy.md"}), &read)
	if read.Title != "Invoice retry policy" || !slices.Equal(read.Backlinks, []string{"engineering/billing/dunning_emails.md"}) {
		t.Errorf("read: %+v", read)
	}
}

// Arguments the schema refuses, paths the engine refuses and operations
// that fail are tool errors that say why; the session lives on.
func TestToolErrors(t *testing.T) {
	cs := serve(t, t.TempDir())
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{ToolRead, map[string]any{"path": "../etc/passwd"}, "invalid_path"},
		{ToolRead, map[string]any{"path": "nope/missing.md"}, "not_found"},
		{ToolRead, map[string]any{}, "path"},
		{ToolQuery, map[string]any{"query": "x", "limit": 500}, "maximum"},
		{ToolSearch, map[string]any{"query": 42}, "query"},
		{ToolTree, map[string]any{"path": "nowhere"}, "not_found"},
		{ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "a/b", "title": "T", "content": map[string]any{"narrative": "x"}}}}, "reason"},
		{ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "CREATE", "path": "a/b", "title": "T", "reason": "r"}}}, "type"},
		{ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "a/b", "title": "T", "narrative": "misplaced", "reason": "r"}}}, "narrative"},
		{ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "a/b", "title": "T", "contnet": map[string]any{"narrative": "lost"}, "reason": "r"}}}, "contnet"},
		{ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "DELETE", "path": "a/b/missing.md", "reason": "r"}}}, "failed"},
	} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: isError %v, %q; want an error mentioning %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
	// Nothing was written by the refused operations.
	var tree api.Node
	decode(t, call(t, cs, ToolTree, map[string]any{"depth": 0}), &tree)
	if len(tree.Children) != 0 {
		t.Errorf("refused operations wrote %+v", tree.Children)
	}
}

// An idle server writes the signals that reads accumulated without waiting
// for shutdown.
func TestIdleFlush(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, root, WithFlushInterval(20*time.Millisecond))
	call(t, cs, ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "notes/misc", "title": "Zebra crossing",
		"content": map[string]any{"narrative": "The zebra crossing on Elm street got new paint."}, "reason": "r"}}})
	var q api.QueryResult
	decode(t, call(t, cs, ToolQuery, map[string]any{"query": "zebra crossing"}), &q)
	if q.Tier != api.TierDirect || q.TierName != "direct" {
		t.Fatalf("query: %+v", q)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(root, ".arbor/state.json"))
		if err == nil && strings.Contains(string(b), `"accesses": 1`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("state.json not written while idle: %v\n%s", err, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Calls made at once from many goroutines are all served, each with its
// own answer (run with -race, this also checks the queue and the ordered
// connection).
func TestConcurrentCalls(t *testing.T) {
	cs := serve(t, t.TempDir())
	const n = 8
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolCurate, Arguments: map[string]any{"operations": []any{
				map[string]any{"type": "ADD", "path": "notes/load", "title": fmt.Sprintf("Note %d", i), "content": map[string]any{"narrative": fmt.Sprintf("word%d", i)}, "reason": "load"}}}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("curate %d: %v %v", i, err, res)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolTree, Arguments: map[string]any{}}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var tree api.Node
	decode(t, call(t, cs, ToolTree, map[string]any{"path": "notes/load"}), &tree)
	if len(tree.Children) != n {
		t.Errorf("%d notes written, want %d", len(tree.Children), n)
	}
}

// An agent writing through the server while a person edits the same file:
// the agent's update keeps the person's sentence, and a write that would
// overwrite it is a conflict the agent is told about.
func TestEditorAndAgent(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, root)
	p := "engineering/billing/invoice_retry_policy.md"
	if res := call(t, cs, ToolCurate, map[string]any{"operations": []any{map[string]any{
		"type": "ADD", "path": "engineering/billing", "title": "Invoice retry policy",
		"content": map[string]any{"narrative": "Failed invoices are retried three times."}, "reason": "r"}}}); res.IsError {
		t.Fatal(text(res))
	}
	file := filepath.Join(root, p)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "three times.", "three times. Finance reviews them monthly.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, ToolCurate, map[string]any{"operations": []any{map[string]any{
		"type": "UPDATE", "path": p, "content": map[string]any{"facts": []any{map[string]any{"statement": "escalation goes to support"}}}, "reason": "r"}}})
	b, _ = os.ReadFile(file)
	if res.IsError || !strings.Contains(string(b), "Finance reviews them monthly.") || !strings.Contains(string(b), "escalation goes to support") {
		t.Fatalf("update: %s\n%s", text(res), b)
	}
	// The person edits again; an update replacing the narrative they changed
	// since the server last read it is refused.
	b = []byte(strings.Replace(string(b), "monthly", "weekly", 1))
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res = call(t, cs, ToolCurate, map[string]any{"operations": []any{map[string]any{
		"type": "UPDATE", "path": p, "content": map[string]any{"narrative": "Retried twice."}, "reason": "r"}}})
	if !res.IsError || !strings.Contains(text(res), `"status":"conflict"`) {
		t.Errorf("an update over the person's edit: %s", text(res))
	}
	if b2, _ := os.ReadFile(file); string(b2) != string(b) {
		t.Errorf("the conflict changed the file:\n%s", b2)
	}
}

// An agent reads an entry, a person edits it, the server's watcher reads
// the edit, and the agent, writing from what it read, replaces the
// narrative: the server gives the version the agent read as the
// operation's base, so the write is a conflict and the edit stays. Read
// again, the same write applies, and the agent's next write builds on the
// version it wrote.
func TestAgentWritesFromWhatItRead(t *testing.T) {
	root := t.TempDir()
	cs := serveEngine(t, root, []runtime.Option{runtime.WithWatch(time.Hour)})
	p := "engineering/billing/invoice_retry_policy.md"
	curate := func(op map[string]any) (*sdk.CallToolResult, api.CurateResult) {
		t.Helper()
		op["reason"] = "r"
		res := call(t, cs, ToolCurate, map[string]any{"operations": []any{op}})
		var out api.CurateResult
		decode(t, res, &out)
		return res, out
	}
	if res, _ := curate(map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Invoice retry policy",
		"content": map[string]any{"narrative": "Failed invoices are retried three times."}}); res.IsError {
		t.Fatal(text(res))
	}
	var read api.ReadResult
	decode(t, call(t, cs, ToolRead, map[string]any{"path": p}), &read)
	file := filepath.Join(root, p)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := []byte(strings.Replace(string(b), "three times.", "three times. Finance reviews them monthly.", 1))
	if err := os.WriteFile(file, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var s api.SearchResult
		decode(t, call(t, cs, ToolSearch, map[string]any{"query": "finance reviews monthly"}), &s)
		if len(s.Results) > 0 {
			break // the engine holds the person's edit
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not report the edit")
		}
	}
	update := map[string]any{"type": "UPDATE", "path": p, "content": map[string]any{"narrative": "Failed invoices are retried twice."}}
	res, out := curate(update)
	if !res.IsError || len(out.Applied) != 1 || out.Applied[0].Status != api.StatusConflict || !strings.Contains(out.Applied[0].Message, read.Version) {
		t.Fatalf("an update written from the version read before the edit: %s", text(res))
	}
	if b, _ := os.ReadFile(file); string(b) != string(edited) {
		t.Fatalf("the conflict changed the file:\n%s", b)
	}
	decode(t, call(t, cs, ToolRead, map[string]any{"path": p}), &read)
	if res, out = curate(update); res.IsError || out.Applied[0].Version == read.Version {
		t.Fatalf("the update, made from the version read after the edit: %s", text(res))
	}
	if res, _ = curate(map[string]any{"type": "UPDATE", "path": p, "content": map[string]any{"tags": []any{"billing"}}}); res.IsError {
		t.Fatalf("the next update, made from the version the agent wrote: %s", text(res))
	}
	// An operation's own base wins over the one remembered: from the older
	// version, replacing the narrative changed since is a conflict.
	res, out = curate(map[string]any{"type": "UPDATE", "path": p, "base": read.Version, "content": map[string]any{"narrative": "Retried once."}})
	if !res.IsError || out.Applied[0].Status != api.StatusConflict {
		t.Fatalf("an update from an older base it names: %s", text(res))
	}
}

// A memory granted read-only is served without arbor-curate, with
// instructions that say so, and nothing is written: not by the calls, not
// by the idle flush, not at shutdown.
func TestReadOnlyServer(t *testing.T) {
	root := t.TempDir()
	entry := filepath.Join(root, "notes/misc/zebra_crossing.md")
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, []byte("---\ntitle: Zebra crossing\n---\n\n## Narrative\nThe zebra crossing on Elm street got new paint.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	listing := func() []string {
		var names []string
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			names = append(names, p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	before := listing()
	t.Cleanup(func() { // runs after the server has stopped
		if after := listing(); !slices.Equal(after, before) {
			t.Errorf("the read-only server wrote to the root:\nbefore %v\nafter  %v", before, after)
		}
	})
	cs := serveEngine(t, root, []runtime.Option{runtime.WithReadOnly()}, WithFlushInterval(time.Millisecond))
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{ToolContext, ToolQuery, ToolRead, ToolRecent, ToolSearch, ToolTree}) {
		t.Fatalf("tools of a read-only server: %v", names)
	}
	if in := cs.InitializeResult().Instructions; !strings.Contains(in, "read-only") || strings.Contains(in, ToolCurate) {
		t.Fatalf("instructions: %s", in)
	}
	var q api.QueryResult
	decode(t, call(t, cs, ToolQuery, map[string]any{"query": "zebra crossing"}), &q)
	if q.Tier != api.TierDirect || len(q.Results) != 1 {
		t.Fatalf("query: %+v", q)
	}
	if res := call(t, cs, ToolRead, map[string]any{"path": "notes/misc/zebra_crossing.md"}); res.IsError {
		t.Fatalf("read: %s", text(res))
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolCurate, Arguments: map[string]any{"operations": []any{}}}); err == nil {
		t.Fatal("arbor-curate was served")
	}
}
