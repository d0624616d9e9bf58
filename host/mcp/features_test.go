package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// serveWith is serveEngine with client options and the relay wired as
// the CLI wires it.
func serveWith(t *testing.T, root string, copts *sdk.ClientOptions, sopts *sdk.ClientSessionOptions, engineOpts ...runtime.Option) *sdk.ClientSession {
	t.Helper()
	relay := NewRelay(testWriter{t})
	ctx := context.Background()
	eng, err := runtime.New(ctx, root, append(append([]runtime.Option{runtime.WithCacheDir("")}, relay.EngineOptions()...), engineOpts...)...)
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	srv := New(eng, WithRelay(relay))
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx, ct, sopts)
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

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// addEntries curates n entries in one call, under folder with a title for
// the folder's context.md.
func addEntries(t *testing.T, cs *sdk.ClientSession, folder string, n int, progress any) *sdk.CallToolResult {
	t.Helper()
	ops := []any{}
	for i := range n {
		ops = append(ops, map[string]any{"type": "ADD", "path": folder, "title": fmt.Sprintf("Entry %04d", i),
			"summary": "one of many", "content": map[string]any{"narrative": fmt.Sprintf("Entry number %d of the batch.", i)}, "reason": "test"})
	}
	p := &sdk.CallToolParams{Name: ToolCurate, Arguments: map[string]any{"operations": ops}}
	if progress != nil {
		p.SetProgressToken(progress)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("curate: %v %s", err, text(res))
	}
	return res
}

// Entries and context.md files are listed as resources, in pages; each
// reads back as stored markdown; an unknown entry is "not found" and a
// URI of another scheme is refused for a subscription.
func TestResources(t *testing.T) {
	var mu sync.Mutex
	var progress []float64
	cs := serveWith(t, t.TempDir(), &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Progress)
		mu.Unlock()
	}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // resources/subscribe is of this version
	n := resourcePageSize + 3
	addEntries(t, cs, "projects/batch", n, "tok-1")

	// A long curate reports its progress, always forward.
	mu.Lock()
	got := slices.Clone(progress)
	mu.Unlock()
	if len(got) < 2 || got[len(got)-1] < float64(n) {
		t.Errorf("progress of a %d-operation curate: %v", n, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress does not increase: %v", got)
		}
	}

	var uris []string
	var cursor string
	pages := 0
	for {
		res, err := cs.ListResources(context.Background(), &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			if r.MIMEType != "text/markdown" || r.Name == "" {
				t.Fatalf("resource %+v", r)
			}
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	// projects/context.md and projects/batch/context.md, then the entries.
	if pages != 2 || len(uris) != n+2 || !slices.Contains(uris, "arbor://projects/batch/context.md") || !slices.Contains(uris, "arbor://projects/batch/entry_0007.md") {
		t.Fatalf("%d pages, %d resources: %v…", pages, len(uris), uris[:5])
	}
	if _, err := cs.ListResources(context.Background(), &sdk.ListResourcesParams{Cursor: "garbage!"}); err == nil {
		t.Error("a bad cursor is accepted")
	}

	rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "arbor://projects/batch/entry_0007.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "Entry number 7 of the batch.") || !strings.HasPrefix(rr.Contents[0].Text, "---\n") {
		t.Fatalf("read: %v %+v", err, rr)
	}
	ctxmd, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "arbor://projects/batch/context.md"})
	if err != nil || ctxmd.Contents[0].Text == "" {
		t.Fatalf("read context.md: %v %+v", err, ctxmd)
	}
	var rpcErr *jsonrpc.Error
	if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "arbor://projects/batch/nope.md"}); !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeResourceNotFound {
		t.Errorf("read of a missing entry: %v", err)
	}
	if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "arbor://../etc/passwd.md"}); !errors.As(err, &rpcErr) {
		t.Errorf("read outside the root: %v", err)
	}
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: "file:///etc/passwd"}); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("subscribe to a file URI: %v", err)
	}
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: "arbor://projects/later/not_yet.md"}); err != nil {
		t.Errorf("subscribe to an entry to come: %v", err)
	}
	tmpl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "arbor://{+path}" {
		t.Fatalf("templates: %v %+v", err, tmpl)
	}
	caps := cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Logging == nil || caps.Prompts == nil || caps.Completions == nil {
		t.Errorf("capabilities %+v", caps)
	}
}

// EntryURI escapes what a URI cannot hold, and entryPath reads it back.
func TestEntryURI(t *testing.T) {
	for _, p := range []string{"a/b/c.md", "notes/my notes/été 2024.md", "a/b/100%.md"} {
		uri := EntryURI(p)
		if strings.ContainsAny(uri, " %é") && !strings.Contains(uri, "%") {
			t.Errorf("%s: %s not escaped", p, uri)
		}
		back, err := entryPath(uri)
		if err != nil || back != p {
			t.Errorf("%s → %s → %q, %v", p, uri, back, err)
		}
	}
	for _, bad := range []string{"arbor://a/b", "arbor://../x.md", "http://a/b.md", "arbor://a/%zz.md"} {
		if _, err := entryPath(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// The prompts: recall embeds the matching entries as they are stored,
// record and tidy carry the tree's outline; a missing argument is an
// invalid-params error. A read-only memory has recall only.
func TestPrompts(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, root)
	call(t, cs, ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Invoice retry policy",
			"content": map[string]any{"narrative": "Failed invoices are retried three times."}, "reason": "r"},
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Dunning emails",
			"content": map[string]any{"narrative": "A reminder goes out after each failed retry."}, "reason": "r"},
	}})
	list, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{PromptRecall, PromptRecord, PromptTidy}) {
		t.Fatalf("prompts %v", names)
	}

	got, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: PromptRecall, Arguments: map[string]string{"topic": "invoice retries", "task": "change the billing job"}})
	if err != nil {
		t.Fatal(err)
	}
	first := got.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.Contains(first, "change the billing job") || !strings.Contains(first, "invoice retries") || !strings.Contains(first, "cite each entry") {
		t.Errorf("recall text: %s", first)
	}
	var embedded []string
	for _, m := range got.Messages[1:] {
		r := m.Content.(*sdk.EmbeddedResource).Resource
		embedded = append(embedded, r.URI)
		if !strings.Contains(r.Text, "---\n") {
			t.Errorf("embedded %s is not the stored markdown: %q", r.URI, r.Text)
		}
	}
	if len(embedded) == 0 || embedded[0] != "arbor://engineering/billing/invoice_retry_policy.md" {
		t.Errorf("recall embeds %v", embedded)
	}
	none, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: PromptRecall, Arguments: map[string]string{"topic": "quantum chromodynamics"}})
	if err != nil || len(none.Messages) != 1 || !strings.Contains(none.Messages[0].Content.(*sdk.TextContent).Text, "found no entry") {
		t.Errorf("recall of nothing: %v %+v", err, none)
	}

	rec, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: PromptRecord, Arguments: map[string]string{"learned": "Refunds take 5 days.", "source": "support call"}})
	if err != nil {
		t.Fatal(err)
	}
	recText := rec.Messages[0].Content.(*sdk.TextContent).Text
	for _, want := range []string{"Refunds take 5 days.", `"support call"`, "arbor-curate", "- engineering (", "  - engineering/billing"} {
		if !strings.Contains(recText, want) {
			t.Errorf("record lacks %q:\n%s", want, recText)
		}
	}
	tidy, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: PromptTidy, Arguments: map[string]string{"path": "engineering/billing"}})
	if err != nil || !strings.Contains(tidy.Messages[0].Content.(*sdk.TextContent).Text, "engineering/billing/dunning_emails.md (Dunning emails)") {
		t.Errorf("tidy: %v %+v", err, tidy)
	}
	var rpcErr *jsonrpc.Error
	if _, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: PromptRecall}); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `"topic" is required`) {
		t.Errorf("recall without topic: %v", err)
	}
	if _, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: PromptTidy, Arguments: map[string]string{"path": "nowhere"}}); err == nil {
		t.Error("tidy of a missing folder succeeds")
	}

	ro := serveEngine(t, root, []runtime.Option{runtime.WithReadOnly()})
	list, err = ro.ListPrompts(context.Background(), nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != PromptRecall {
		t.Errorf("read-only prompts: %v %+v", err, list)
	}
}

// completion/complete offers folders for arbor-tidy and entry paths for
// the entry template; other arguments get none.
func TestCompletion(t *testing.T) {
	cs := serve(t, t.TempDir())
	call(t, cs, ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Invoice retry policy", "content": map[string]any{"narrative": "x"}, "reason": "r"},
		map[string]any{"type": "ADD", "path": "personal/health", "title": "Allergies", "content": map[string]any{"narrative": "x"}, "reason": "r"},
	}})
	complete := func(ref *sdk.CompleteReference, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(context.Background(), &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Completion.Values
	}
	if got := complete(&sdk.CompleteReference{Type: "ref/prompt", Name: PromptTidy}, "path", "eng"); !slices.Equal(got, []string{"engineering", "engineering/billing"}) {
		t.Errorf("tidy path: %v", got)
	}
	if got := complete(&sdk.CompleteReference{Type: "ref/resource", URI: "arbor://{+path}"}, "path", "personal/"); !slices.Equal(got, []string{"personal/health/allergies.md"}) {
		t.Errorf("entry path: %v", got)
	}
	if got := complete(&sdk.CompleteReference{Type: "ref/prompt", Name: PromptRecall}, "topic", "eng"); len(got) != 0 {
		t.Errorf("recall topic: %v", got)
	}
}

// Log lines reach a client at or above the level it asked for: with
// logging/setLevel (protocol 2025-11-25; none before it), or per request
// (2026-07-28). Each call ends with a debug line saying how long it waited
// for its turn and ran.
func TestLogging(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			lines := make(chan string, 16)
			cs := serveWith(t, t.TempDir(), &sdk.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
				lines <- fmt.Sprintf("%s %v", r.Params.Level, r.Params.Data)
			}}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			search := func(level sdk.LoggingLevel) {
				p := &sdk.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": "x"}}
				if level != "" && version >= "2026" {
					p.Meta = sdk.Meta{sdk.MetaKeyLogLevel: level}
				}
				if res, err := cs.CallTool(context.Background(), p); err != nil || res.IsError {
					t.Fatalf("search: %v %+v", err, res)
				}
			}
			search("") // no level yet: no line
			if version < "2026" {
				if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			search("info") // above debug: no line
			if version < "2026" {
				if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatal(err)
				}
			}
			p := &sdk.CallToolParams{Name: ToolTree, Arguments: map[string]any{}}
			if version >= "2026" {
				p.Meta = sdk.Meta{sdk.MetaKeyLogLevel: "debug"}
			}
			if _, err := cs.CallTool(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			for line := range lines {
				if strings.Contains(line, "arbor-search") {
					t.Fatalf("a line below the level asked for: %q", line)
				}
				if strings.HasPrefix(line, "debug arbor-tree: ran ") && strings.Contains(line, "after waiting") {
					break
				}
				t.Fatalf("unexpected line %q", line)
			}
		})
	}
}

// A client of protocol 2026-07-28 subscribes through a subscriptions/listen
// stream, which stays open: it hears of the entry's change, and its
// session still ends cleanly (serveWith's cleanup checks Run's error).
func TestListenStreamSubscription(t *testing.T) {
	updated := make(chan string, 4)
	cs := serveWith(t, t.TempDir(), &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}}, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	uri := "arbor://engineering/billing/invoice_retry_policy.md"
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, ToolCurate, map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "engineering/billing",
		"title": "Invoice retry policy", "content": map[string]any{"narrative": "x"}, "reason": "r"}}})
	select {
	case got := <-updated:
		if got != uri {
			t.Errorf("updated %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/updated on the listen stream")
	}
}

// What the engine reports during a call reaches the caller: its log lines
// at the caller's level (warnings and errors also to stderr), its progress
// as one value that only grows across the engine's phases.
func TestRelay(t *testing.T) {
	ctx := context.Background()
	eng, err := runtime.New(ctx, t.TempDir(), runtime.WithCacheDir(""))
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	var stderr strings.Builder
	relay := NewRelay(&stderr)
	srv := New(eng, WithRelay(relay))
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 8)
	progress := make(chan string, 16)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			lines <- fmt.Sprintf("%s %v", r.Params.Level, r.Params.Data)
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			progress <- fmt.Sprintf("%v %g %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Message)
		},
	}).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}

	warn(&stderr, runtime.LevelWarn, "outside any call") // what EngineOptions' logger does: stderr only
	cctx, end := relay.begin(ctx, caller{session: ss, token: "p1"})
	c := cctx.Value(sinkKey{}).(*sink)
	c.log(runtime.LevelDebug, "below the level")
	c.log(runtime.LevelWarn, "index rebuilt")
	for _, p := range []api.Progress{{Phase: "write", Done: 0, Total: 3}, {Phase: "write", Done: 2, Total: 3}, {Phase: "write", Done: 3, Total: 3},
		{Phase: "index", Done: 0, Total: 2}, {Phase: "index", Done: 2, Total: 2}} {
		c.progress(p)
	}
	drain := end()
	c.progress(api.Progress{Phase: "write", Done: 9}) // after the call: dropped
	drain()

	if got := <-lines; got != "warning index rebuilt" {
		t.Errorf("log line %q", got)
	}
	var got []string
	for range 4 {
		got = append(got, <-progress)
	}
	want := []string{"p1 0 write: 0 of 3", "p1 2 write: 2 of 3", "p1 3 write: 3 of 3", "p1 5 index: 2 of 2"}
	if !slices.Equal(got, want) {
		t.Errorf("progress %q, want %q", got, want)
	}
	if s := stderr.String(); s != "arbor: warn: outside any call\narbor: warn: index rebuilt\n" {
		t.Errorf("stderr %q", s)
	}
}

// A client that stops reading does not stall the engine: the notifications
// of its call wait in their own queue, and beyond it are dropped. (Sent by
// the engine's goroutine, the first one would block on the unread pipe.)
func TestRelayDoesNotWaitForAClient(t *testing.T) {
	ctx := context.Background()
	eng, err := runtime.New(ctx, t.TempDir(), runtime.WithCacheDir(""))
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	relay := NewRelay(io.Discard)
	srv := New(eng, WithRelay(relay))
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// A client that initializes, then never reads again.
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	init, _ := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	initialized, _ := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err := conn.Write(ctx, init); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, initialized); err != nil {
		t.Fatal(err)
	}

	cctx, end := relay.begin(ctx, caller{session: ss, token: "p"})
	c := cctx.Value(sinkKey{}).(*sink)
	for i := range 4 * relayBuffer {
		c.progress(api.Progress{Phase: "write", Done: i + 1, Total: 4 * relayBuffer})
	}
	end() // its drain would wait for the client: never called
}

// A folder the watch reports stands for the entries in it, dot-folders
// aside; a path that is no folder stays as it is.
func TestEntriesBelow(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a/b/x.md", "a/b/context.md", "a/.hidden/y.md", "a/c.txt", "other/z.md"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := entriesBelow(root, []string{"a", "gone/removed.md", "other/z.md"})
	want := []string{"a/b/context.md", "a/b/x.md", "gone/removed.md", "other/z.md"}
	if !slices.Equal(got, want) {
		t.Errorf("entriesBelow: %v, want %v", got, want)
	}
}
