package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/tetratelabs/wazero"
	wapi "github.com/tetratelabs/wazero/api"
)

const fixedTime = "2026-01-01T00:00:00Z"

func needModule(t *testing.T) {
	t.Helper()
	if len(embeddedWasm) == 0 {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
}

// newEngine starts an engine on dir (a new temporary root when empty),
// closed at the end of the test.
func newEngine(t *testing.T, dir string, opts ...Option) *Engine {
	t.Helper()
	needModule(t)
	if dir == "" {
		dir = t.TempDir()
	}
	var stderr bytes.Buffer
	e, err := New(context.Background(), dir, append([]Option{WithStderr(&stderr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		if stderr.Len() > 0 {
			t.Logf("engine stderr:\n%s", stderr.String())
		}
	})
	return e
}

// maxInitialPages bounds the module's initial memory: 82 pages (5.1 MiB)
// measured with Go 1.26 on 2026-11-22, plus headroom. A module that pulls
// in the crypto FIPS DRBG starts at 32 MiB or more (docs/design.md), far above.
const maxInitialPages = 128

func TestInitialMemory(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compilationCache(DefaultCacheDir())))
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, embeddedWasm)
	if err != nil {
		t.Fatal(err)
	}
	mem, ok := compiled.ExportedMemories()["memory"]
	if !ok {
		t.Fatal("the module exports no memory")
	}
	pages := mem.Min()
	t.Logf("initial memory: %d pages (%.1f MiB); module %.1f MiB", pages, float64(pages)/16, float64(len(embeddedWasm))/(1<<20))
	if pages > maxInitialPages {
		t.Fatalf("initial memory is %d pages (%.1f MiB), more than %d: did a crypto package reach the FIPS DRBG? (docs/design.md)", pages, float64(pages)/16, maxInitialPages)
	}
}

func errorCodeOf(t *testing.T, resp []byte) (id json.RawMessage, code string) {
	t.Helper()
	var env envelope
	if err := json.Unmarshal(resp, &env); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, resp)
	}
	if env.Error == nil {
		t.Fatalf("want an error response, got %s", resp)
	}
	return env.ID, env.Error.Code
}

func TestABIErrors(t *testing.T) {
	e := newEngine(t, "")
	ctx := context.Background()
	cases := []struct{ req, code, id string }{
		{`not json`, api.CodeInvalidJSON, "null"},
		{`[1,2]`, api.CodeInvalidJSON, "null"},
		{"{\"id\":1,\"method\":\"stats\"\xff}", api.CodeInvalidJSON, "null"},
		{`{"id":1,"method":"no_such_method"}`, api.CodeUnknownMethod, "1"},
		{`{"id":"x","method":"search","params":{"query":"retry"}}`, api.CodeNotOpen, `"x"`},
		{`{"id":3,"method":"stats"}`, api.CodeNotOpen, "3"},
		{`{"id":4,"method":"open","params":{"fixedTime":"yesterday"}}`, api.CodeInvalidParams, "4"},
		{`{"id":5,"method":"open","params":{"maxFileBytes":"big"}}`, api.CodeInvalidParams, "5"},
	}
	for _, c := range cases {
		resp, err := e.Call(ctx, []byte(c.req))
		if err != nil {
			t.Fatalf("%s: %v", c.req, err)
		}
		id, code := errorCodeOf(t, resp)
		if code != c.code || string(id) != c.id {
			t.Errorf("%s: id %s code %q, want id %s code %q (%s)", c.req, id, code, c.id, c.code, resp)
		}
	}
	// An empty request is delivered as a zero-length block.
	resp, err := e.Call(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, code := errorCodeOf(t, resp); code != api.CodeInvalidRequest && code != api.CodeInvalidJSON {
		t.Errorf("empty request: %s", resp)
	}
	// The typed helpers return *api.Error.
	_, err = e.Stats(ctx)
	var ee *api.Error
	if !errors.As(err, &ee) || ee.Code != api.CodeNotOpen {
		t.Fatalf("Stats before open: %v", err)
	}
}

// arbor_call must answer a request outside the memory it gave out with an
// error response, never a trap.
func TestABIBogusPointers(t *testing.T) {
	e := newEngine(t, "")
	ctx := context.Background()
	size := e.mod.Memory().Size()
	res, err := e.alloc.Call(ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	block := wapi.DecodeU32(res[0])
	bogus := []struct {
		name     string
		ptr, len uint32
	}{
		{"past the end of memory", size - 8, 100},
		{"wrapping around", 0xfffffff0, 0x100},
		{"huge length", 0, 0xffffffff},
		{"unknown pointer inside memory", 1024, 8},
		{"longer than its block", block, 4096},
		{"inside a block, not its start", block + 4, 4},
	}
	for _, b := range bogus {
		out, err := e.call.Call(ctx, uint64(b.ptr), uint64(b.len))
		if err != nil {
			t.Fatalf("%s: arbor_call trapped: %v", b.name, err)
		}
		p, n := uint32(out[0]>>32), uint32(out[0])
		view, ok := e.mod.Memory().Read(p, n)
		if !ok {
			t.Fatalf("%s: response outside memory", b.name)
		}
		if _, code := errorCodeOf(t, bytes.Clone(view)); code != api.CodeInvalidRequest {
			t.Errorf("%s: code %q, want invalid_request", b.name, code)
		}
		if _, err := e.free.Call(ctx, uint64(p)); err != nil {
			t.Fatal(err)
		}
	}
	// Unknown pointers given to arbor_free are ignored.
	for _, p := range []uint32{0, 12345, size + 100, 0xffffffff} {
		if _, err := e.free.Call(ctx, uint64(p)); err != nil {
			t.Fatalf("arbor_free(%#x) trapped: %v", p, err)
		}
	}
	// The engine still works afterwards.
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const retryEntry = `---
title: Invoice retry policy
summary: failed invoices are retried three times
tags: [billing]
keywords: [invoice, retry]
createdAt: 2025-06-01T10:00:00Z
updatedAt: 2025-06-01T10:00:00Z
---

## Reason
agreed in the billing sync

## Narrative
Failed invoices are retried three times, then escalated to a person.
`

func TestEngineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	e := newEngine(t, dir)
	ctx := context.Background()

	opened, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	if opened.Entries != 1 {
		t.Fatalf("open: %+v", opened)
	}
	res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{
		Type: api.OpAdd, Path: "engineering/billing", Title: "Refund limits",
		Content: api.Content{
			Narrative: &api.Narrative{Text: "Support refunds up to 200 EUR without approval."},
			Relations: []string{"engineering/billing/invoice_retry_policy.md"},
			Tags:      []string{"billing"},
		},
		Reason: "support sync",
	}, {
		Type: api.OpAdd, Path: "../outside", Title: "Escape", Reason: "must fail",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Added != 1 || res.Summary.Failed != 1 || len(res.Applied) != 2 ||
		res.Applied[0].Path != "engineering/billing/refund_limits.md" || res.Applied[1].Status != api.StatusFailed {
		t.Fatalf("curate: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "engineering/billing/refund_limits.md")); err != nil {
		t.Fatalf("the entry was not written: %v", err)
	}

	found, err := e.Search(ctx, api.SearchParams{Query: "refund approval", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Results) == 0 || found.Results[0].Path != "engineering/billing/refund_limits.md" {
		t.Fatalf("search: %+v", found)
	}
	q, err := e.Query(ctx, api.SearchParams{Query: "invoice retry"})
	if err != nil {
		t.Fatal(err)
	}
	if q.TierName == "" || len(q.Results) == 0 {
		t.Fatalf("query: %+v", q)
	}
	read, err := e.Read(ctx, api.ReadParams{Path: "engineering/billing/invoice_retry_policy.md"})
	if err != nil {
		t.Fatal(err)
	}
	if read.Title != "Invoice retry policy" || len(read.Backlinks) != 1 || read.Backlinks[0] != "engineering/billing/refund_limits.md" {
		t.Fatalf("read: %+v", read)
	}
	tree, err := e.Tree(ctx, api.TreeParams{})
	if err != nil {
		t.Fatal(err)
	}
	if tree == nil || len(tree.Children) != 1 || tree.Children[0].Name != "engineering" {
		t.Fatalf("tree: %+v", tree)
	}
	stats, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Entries != 2 || stats.Domains["engineering"] != 2 {
		t.Fatalf("stats: %+v", stats)
	}

	for _, c := range []struct{ path, code string }{
		{"../etc/passwd", api.CodeInvalidPath},
		{"/etc/passwd", api.CodeInvalidPath},
		{"engineering/billing/missing.md", api.CodeNotFound},
	} {
		_, err := e.Read(ctx, api.ReadParams{Path: c.path})
		var ee *api.Error
		if !errors.As(err, &ee) || ee.Code != c.code {
			t.Errorf("read %s: %v, want code %s", c.path, err, c.code)
		}
	}

	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor/audit.jsonl")); err != nil {
		t.Errorf("audit log: %v", err)
	}
	if _, err := e.Call(ctx, []byte(`{"id":1,"method":"stats"}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// Without fixedTime the engine must see the real clock (wazero's default
// clock is fake).
func TestEngineRealClock(t *testing.T) {
	e := newEngine(t, "")
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Minute)
	_, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{
		Type: api.OpAdd, Path: "a/b", Title: "Now", Reason: "clock",
		Content: api.Content{Narrative: &api.Narrative{Text: "what time is it"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	read, err := e.Read(ctx, api.ReadParams{Path: "a/b/now.md"})
	if err != nil {
		t.Fatal(err)
	}
	if read.CreatedAt == nil || read.CreatedAt.Before(before) || read.CreatedAt.After(time.Now().Add(time.Minute)) {
		t.Fatalf("createdAt %v is not the real time", read.CreatedAt)
	}
}

// The engine cannot read or write outside its root, whatever the tree holds.
func TestEngineConfinement(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.md"), "---\ntitle: Secret\n---\nzanzibar launch codes\n")
	writeFile(t, filepath.Join(dir, "notes/plain.md"), "# Plain\nnothing to see\n")
	if err := os.Symlink(outside, filepath.Join(dir, "notes/escape")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "notes/secret.md")); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, dir)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	found, err := e.Search(ctx, api.SearchParams{Query: "zanzibar"})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Results) != 0 {
		t.Fatalf("content from outside the root was indexed: %+v", found.Results)
	}
	if _, err := e.Read(ctx, api.ReadParams{Path: "notes/escape/secret.md"}); err == nil {
		t.Fatal("read through a link leaving the root")
	}
	res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{
		Type: api.OpAdd, Path: "notes/escape/x.md", Title: "X", Reason: "escape",
		Content: api.Content{Narrative: &api.Narrative{Text: "pwned"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Failed != 1 {
		t.Fatalf("a write through a link leaving the root succeeded: %+v", res)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("files appeared outside the root: %v", ents)
	}
}

// A link back up the tree (a cycle) is listed but not walked: the open
// used to walk it round until the path was too long, and failed.
func TestEngineOpensATreeWithACycle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sub/a.md"), "---\ntitle: A\n---\nhello walkers\n")
	if err := os.Symlink("..", filepath.Join(dir, "sub/loop")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	e := newEngine(t, dir)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	found, err := e.Search(ctx, api.SearchParams{Query: "walkers"})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Results) != 1 || found.Results[0].Path != "sub/a.md" {
		t.Fatalf("results %+v, want sub/a.md once", found.Results)
	}
}

// A link to a folder inside the root showed its entries under a second
// name. Deleting the link's folder, or merging one name of an entry into
// the other (as tidy does with duplicates), removed the files at the first
// name: writes never pass through a link, and now the tree is read without
// following one, so an operation naming a path through the link fails
// whole, saying why, and a DELETE of the link's folder deletes its own
// entries and keeps the link.
func TestEngineWritesNeverPassThroughALink(t *testing.T) {
	dir := t.TempDir()
	z := "---\ntitle: Z\n---\n\n## Narrative\nzebra crossing, must survive\n"
	writeFile(t, filepath.Join(dir, "a/b/x.md"), "---\ntitle: X\n---\n\n## Narrative\nx in b\n")
	writeFile(t, filepath.Join(dir, "a/c/z.md"), z)
	if err := os.Symlink("../c", filepath.Join(dir, "a/b/link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	e := newEngine(t, dir)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []api.Operation{
		{Type: api.OpMerge, Path: "a/b/link/z.md", MergeTarget: "a/c/z.md", Reason: "duplicates"},
		{Type: api.OpDelete, Path: "a/b/link/z.md", Reason: "duplicate"},
		{Type: api.OpMove, Path: "a/b/link/z.md", To: "a/d/z.md", Reason: "move"},
		{Type: api.OpUpdate, Path: "a/b/link/z.md", Title: "Z", Content: api.Content{Tags: []string{"overwritten"}}, Reason: "edit"},
		{Type: api.OpAdd, Path: "a/b/link", Title: "New", Content: api.Content{Tags: []string{"new"}}, Reason: "add"},
	} {
		res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{op}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Failed != 1 {
			t.Errorf("%s %s through a link: %+v", op.Type, op.Path, res.Applied)
		}
		if m := res.Applied[0].Message; !strings.Contains(m, "symbolic link") {
			t.Errorf("%s %s: the message does not name the link: %s", op.Type, op.Path, m)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "a/c/z.md")); err != nil || string(b) != z {
			t.Fatalf("after %s %s: a/c/z.md = %q, %v", op.Type, op.Path, b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "a/b/x.md")); err != nil {
			t.Fatalf("after %s %s: a failed operation changed a/b/x.md: %v", op.Type, op.Path, err)
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "a/c")); len(ents) != 1 {
			t.Fatalf("after %s %s: a/c holds %v", op.Type, op.Path, ents)
		}
	}
	res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpDelete, Path: "a/b", Reason: "drop b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Applied[0]; a.Status != api.StatusSuccess || !strings.Contains(a.Message, "1 entr") {
		t.Fatalf("DELETE a/b: %+v", a)
	}
	if _, err := os.Stat(filepath.Join(dir, "a/b/x.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a/b/x.md after DELETE a/b: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "a/b/link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link after DELETE a/b: %v, %v", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a/c/z.md")); err != nil || string(b) != z {
		t.Fatalf("after DELETE a/b: a/c/z.md = %q, %v", b, err)
	}
}

// Calls from many goroutines are serialized.
func TestEngineConcurrentCalls(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	e := newEngine(t, dir)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Search(ctx, api.SearchParams{Query: "invoice"})
			if err == nil && len(res.Results) != 1 {
				err = fmt.Errorf("search: %d results, want 1", len(res.Results))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := New(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing root was accepted")
	}
	if _, err := New(ctx, t.TempDir(), WithWasm([]byte{})); !errors.Is(err, ErrNoModule) {
		t.Fatalf("empty module: %v", err)
	}
	if _, err := New(ctx, t.TempDir(), WithWasm([]byte("\x00asm garbage"))); err == nil {
		t.Fatal("a broken module was accepted")
	}
	// A cache folder that cannot be used falls back to memory.
	needModule(t)
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, "x")
	e, err := New(ctx, t.TempDir(), WithCacheDir(filepath.Join(file, "cache")))
	if err != nil {
		t.Fatalf("unusable cache folder: %v", err)
	}
	e.Close(ctx)
}

// Bad requests of every kind, sent to an open engine through the real
// module, each get their stable error code and a message, and leave the
// engine serving: its state (the open tree, the index) is intact.
func TestEngineKeepsWorkingAfterBadRequests(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	e := newEngine(t, dir)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	searchWorks := func(after string) {
		t.Helper()
		res, err := e.Search(ctx, api.SearchParams{Query: "invoice retry"})
		if err != nil || len(res.Results) != 1 {
			t.Fatalf("after %s: search = %+v, %v", after, res, err)
		}
	}
	size := e.mod.Memory().Size()
	for _, b := range []struct {
		name     string
		ptr, len uint32
	}{
		{"a pointer past the end of memory", size - 4, 64},
		{"a length past the end of memory", 0, size + 1},
		{"a range wrapping around", 0xffffff00, 0x200},
	} {
		out, err := e.call.Call(ctx, uint64(b.ptr), uint64(b.len))
		if err != nil {
			t.Fatalf("%s: arbor_call trapped: %v", b.name, err)
		}
		view, ok := e.mod.Memory().Read(uint32(out[0]>>32), uint32(out[0]))
		if !ok {
			t.Fatalf("%s: the response lies outside memory", b.name)
		}
		resp := bytes.Clone(view)
		e.free.Call(ctx, out[0]>>32)
		var env envelope
		if err := json.Unmarshal(resp, &env); err != nil || env.Error == nil ||
			env.Error.Code != api.CodeInvalidRequest || env.Error.Message == "" {
			t.Errorf("%s: response %s, want an invalid_request error with a message", b.name, resp)
		}
		searchWorks(b.name)
	}
	for _, c := range []struct{ name, req, code, alt string }{
		{"invalid JSON", `{"id":1,"method":`, api.CodeInvalidJSON, ""},
		{"a JSON string", `"stats"`, api.CodeInvalidJSON, ""},
		{"invalid UTF-8", "{\"id\":2,\"method\":\"search\",\"params\":{\"query\":\"\xff\xfe\"}}", api.CodeInvalidJSON, ""},
		{"an unknown method", `{"id":3,"method":"drop_everything"}`, api.CodeUnknownMethod, ""},
		{"a method of the wrong type", `{"id":4,"method":42}`, api.CodeInvalidRequest, ""},
		{"params of the wrong type", `{"id":5,"method":"search","params":{"query":7}}`, api.CodeInvalidParams, ""},
	} {
		resp, err := e.Call(ctx, []byte(c.req))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var env envelope
		if err := json.Unmarshal(resp, &env); err != nil || env.Error == nil || env.Error.Message == "" {
			t.Fatalf("%s: response %s, want an error with a message", c.name, resp)
		}
		if env.Error.Code != c.code && env.Error.Code != c.alt {
			t.Errorf("%s: code %q, want %q (%s)", c.name, env.Error.Code, c.code, resp)
		}
		searchWorks(c.name)
	}
	// The typed helper reports an unknown method as an *api.Error.
	_, err := e.CallMethod(ctx, "no_such_method", nil)
	var ee *api.Error
	if !errors.As(err, &ee) || ee.Code != api.CodeUnknownMethod {
		t.Fatalf("CallMethod(no_such_method) = %v", err)
	}
	searchWorks("CallMethod(no_such_method)")
}

// TestMemoryBytes checks the linear memory size MemoryBytes reports: whole
// pages, at least the module's initial memory, never smaller after a call
// that allocates, and 0 once the engine is closed.
func TestMemoryBytes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	e := newEngine(t, dir)
	ctx := context.Background()
	start := e.MemoryBytes()
	if start == 0 || start%pageSize != 0 {
		t.Fatalf("a started engine reports %d bytes of linear memory: want whole pages, more than none", start)
	}
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	// A request larger than the memory has ever been makes it grow.
	big := fmt.Sprintf(`{"id":1,"method":"stats","params":{"pad":%q}}`, strings.Repeat("x", int(start)))
	if _, err := e.Call(ctx, []byte(big)); err != nil {
		t.Fatal(err)
	}
	grown := e.MemoryBytes()
	if grown <= start || grown%pageSize != 0 {
		t.Fatalf("after a %d-byte request the memory is %d bytes (it was %d): want more, in whole pages", len(big), grown, start)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.MemoryBytes(); got != 0 {
		t.Fatalf("a closed engine reports %d bytes of linear memory, want 0", got)
	}
}

// A folder the walks leave out (here a name the engine refuses, not
// UTF-8, as old archives hold) is said once as a warning, not passed over
// without a word: what it holds is missing from every answer.
func TestOpenWarnsOnceOfAFolderLeftOut(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"ops/pager/rotation.md", "ops/caf\xe9/menu.md"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("---\ntitle: A note\n---\n\nText.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var warned []string
	e := newEngine(t, dir, WithLogger(func(level int, msg string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(msg, "left out of the memory") {
			warned = append(warned, fmt.Sprint(level, " ", msg))
		}
	}))
	ctx := context.Background()
	res, err := e.Open(ctx, api.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Status(ctx); err != nil { // a second walk of the tree
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if res.Entries != 1 || len(warned) != 1 || !strings.HasPrefix(warned[0], fmt.Sprint(LevelWarn, " fs_walk: ops/caf\xe9: left out of the memory: the engine refuses its name")) {
		t.Errorf("entries %d, warnings %q", res.Entries, warned)
	}
}

// An open of a tree whose walk takes several fs_walk answers, listed ahead
// while the engine reads (host/arborhost, walkAnswer): every entry is
// found, those in the folders of the last answers too, and so is one
// written through the engine, which drops what was listed ahead.
func TestOpenReadsATreeOfSeveralWalkAnswers(t *testing.T) {
	e := newEngine(t, "")
	dir := e.Root()
	// 18,000 attachments in 60 folders (the walk's records, not entries:
	// the open only lists them), then notes in folders that sort after.
	for f := range 60 {
		folder := filepath.Join(dir, fmt.Sprintf("attach-%02d", f))
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("blob-%05d.bin", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeFile(t, filepath.Join(dir, "a-first/note.md"), "---\ntitle: First note\n---\n\n## Narrative\nThe aardvark survey.\n")
	writeFile(t, filepath.Join(dir, "z-last/deep/note.md"), "---\ntitle: Last note\n---\n\n## Narrative\nThe zebra census.\n")
	ctx := context.Background()
	res, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 2 {
		t.Fatalf("the open found %d entries, want 2", res.Entries)
	}
	q, err := e.Query(ctx, api.SearchParams{Query: "zebra census"})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Results) == 0 || q.Results[0].Path != "z-last/deep/note.md" {
		t.Fatalf("the note in the last folder: %+v", q.Results)
	}
	added, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "zz_new/tallies/note.md", Title: "New note", Content: api.Content{Narrative: &api.Narrative{Text: "The yak tally."}}, Reason: "test"}}})
	if err != nil || added.Applied[0].Status != api.StatusSuccess {
		t.Fatalf("ADD: %+v, %v", added, err)
	}
	e.Close(ctx)
	e2 := newEngine(t, dir)
	if res, err = e2.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil || res.Entries != 3 {
		t.Fatalf("reopened: %d entries, %v; want 3", res.Entries, err)
	}
}
