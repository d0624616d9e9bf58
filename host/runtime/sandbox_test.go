package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/arborhost"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// runawayEngine is a hand-assembled module with the exports of docs/ABI.md
// §1 whose arbor_call never returns and never calls the host:
//
//	(memory (export "memory") 1)
//	(func (export "_initialize"))
//	(func (export "arbor_abi_version") (result i32) (i32.const <ABIVersion>))
//	(func (export "arbor_alloc") (param i32) (result i32) (i32.const 1024))
//	(func (export "arbor_free") (param i32))
//	(func (export "arbor_call") (param i32 i32) (result i64) (loop (br 0)) unreachable)
func runawayEngine() []byte {
	const i32, i64 = 0x7f, 0x7e
	var types []byte
	types = uleb(types, 5)
	types = append(types, 0x60, 0, 0)                // 0: () -> ()
	types = append(types, 0x60, 0, 1, i32)           // 1: () -> i32
	types = append(types, 0x60, 1, i32, 1, i32)      // 2: (i32) -> i32
	types = append(types, 0x60, 1, i32, 0)           // 3: (i32) -> ()
	types = append(types, 0x60, 2, i32, i32, 1, i64) // 4: (i32 i32) -> i64
	funcs := []byte{5, 0, 1, 2, 3, 4}
	memory := []byte{1, 0x00, 1}
	var exports []byte
	exports = uleb(exports, 6)
	exports = append(wasmName(exports, "memory"), 0x02, 0)
	for i, name := range []string{"_initialize", "arbor_abi_version", "arbor_alloc", "arbor_free", "arbor_call"} {
		exports = append(wasmName(exports, name), 0x00, byte(i))
	}
	bodies := [][]byte{
		{0x00, 0x0b},
		{0x00, 0x41, ABIVersion, 0x0b},
		{0x00, 0x41, 0x80, 0x08, 0x0b},
		{0x00, 0x0b},
		{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x00, 0x0b},
	}
	var code []byte
	code = uleb(code, uint32(len(bodies)))
	for _, body := range bodies {
		code = append(uleb(code, uint32(len(body))), body...)
	}
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = wasmSection(m, 1, types)
	m = wasmSection(m, 3, funcs)
	m = wasmSection(m, 5, memory)
	m = wasmSection(m, 7, exports)
	return wasmSection(m, 10, code)
}

// A call that would never end is stopped at its deadline, with an error
// that says so; the engine is not closed by it: the next call runs on a
// new instance (and meets its own deadline).
func TestCallTimeoutStopsARunawayModule(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, t.TempDir(), WithWasm(runawayEngine()), WithCacheDir(""), WithCallTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	for i := range 2 {
		_, err := e.Call(ctx, []byte(`{"id":1,"method":"stats"}`))
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
			t.Fatalf("call %d: %v, want a deadline error", i+1, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "stopped at its deadline (calls may run for 20ms)") || !strings.Contains(msg, "restarts at the next call") {
			t.Fatalf("call %d: the error does not explain itself: %s", i+1, msg)
		}
	}
}

// stopAt returns a logger that, at the first line containing trigger,
// cancels the call's context and waits, inside the module's log import,
// until the module is stopped: the call then ends there, deterministically.
func stopAt(e **Engine, trigger string, cancel func()) func(int, string) {
	var once sync.Once
	return func(_ int, msg string) {
		if !strings.Contains(msg, trigger) {
			return
		}
		once.Do(func() {
			cancel()
			for !(*e).mod.IsClosed() {
				runtime.Gosched()
			}
		})
	}
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".arbor-tmp-") {
			found = append(found, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// stoppingIngest is a root whose ingest stops halfway, after it wrote its
// entries, and the engine it stops in (not open yet; open it with ctx).
// The ingest manifest is a symbolic link: the host reads through it but
// refuses to write through it, and the engine logs that, at the end of
// the ingest, after the entries; at that line the call's context is
// cancelled, which stops the module.
func stoppingIngest(t *testing.T) (string, context.Context, *Engine) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	writeFile(t, filepath.Join(dir, ".arbor/manifest.json"), `{"version":1,"sources":{}}`)
	if err := os.Symlink("manifest.json", filepath.Join(dir, ".arbor/ingest.json")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var e *Engine
	e = newEngine(t, dir, WithCallTimeout(time.Hour), WithLogger(stopAt(&e, "ingest: write .arbor/ingest.json", cancel)))
	return dir, ctx, e
}

// deploySteps is an ingest of deploy.jsonl: 12 records, each titled
// "Step i" with text (a format taking i) as its text.
func deploySteps(text string) api.IngestParams {
	var steps strings.Builder
	for i := range 12 {
		fmt.Fprintf(&steps, `{"title":"Step %d","text":%q}`+"\n", i, fmt.Sprintf(text, i))
	}
	return api.IngestParams{Files: []api.SourceFile{{Name: "deploy.jsonl", Content: steps.String()}}}
}

// A call stopped halfway (here an ingest, after it wrote its entries and
// while it reports that its manifest cannot be written) leaves every file
// whole and no temporary file behind; the next call restarts the module,
// which opens the root again with the parameters of the last open that
// succeeded, and sees what the stopped call wrote.
func TestStoppedCallRestartsAndReopens(t *testing.T) {
	dir, ctx, e := stoppingIngest(t)
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	// Parameters the engine refuses leave that open in place.
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: "yesterday"}); !isCode(err, api.CodeInvalidParams) {
		t.Fatalf("open with a bad fixedTime: %v", err)
	}
	_, err := e.Ingest(ctx, deploySteps("Step %d of the deploy checklist."))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "restarts at the next call") {
		t.Fatalf("ingest: %v, want it stopped by the cancel", err)
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Fatalf("temporary files left by the stopped call: %v", tmp)
	}
	written, err := filepath.Glob(filepath.Join(dir, "data/deploy/step_*.md"))
	if err != nil || len(written) != 12 {
		t.Fatalf("entries written before the stop: %v %v", written, err)
	}
	ctx = context.Background()
	st, err := e.Stats(ctx)
	if err != nil {
		t.Fatalf("the call after the stop: %v", err)
	}
	if st.Entries != 13 {
		t.Fatalf("after the restart the engine sees %d entries, want 13", st.Entries)
	}
	for _, p := range written {
		rel, _ := filepath.Rel(dir, p)
		if _, err := e.Read(ctx, api.ReadParams{Path: filepath.ToSlash(rel)}); err != nil {
			t.Errorf("%s after the stop: %v", rel, err)
		}
	}
	// The reopened engine kept the open's parameters: its clock is frozen.
	res, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "notes/misc", Title: "Frozen clock", Reason: "test"}}})
	if err != nil || res.Summary.Added != 1 {
		t.Fatalf("curate after the restart: %+v %v", res, err)
	}
	rd, err := e.Read(ctx, api.ReadParams{Path: res.Applied[0].Path})
	if err != nil || rd.CreatedAt == nil || rd.CreatedAt.Format(time.RFC3339) != fixedTime {
		t.Fatalf("the reopened engine lost fixedTime: %+v %v", rd.CreatedAt, err)
	}
}

// A call that needs more memory than the cap fails with ErrMemoryLimit,
// not a crash of the host, and the engine serves the next call.
func TestMaxMemory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	ctx := context.Background()
	e := newEngine(t, dir, WithMaxMemory(64<<20))
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)
	// Decoding 200,000 operations takes far more than 64 MiB (the misspelt
	// key of the last one would refuse the call once they are decoded);
	// 50,000 fit once the module shrank.
	ops := make([]map[string]any, 0, 200001)
	for i := range 200000 {
		ops = append(ops, map[string]any{"type": "ADD", "path": "notes/misc", "title": fmt.Sprintf("Note %d", i), "content": "text", "reason": "test"})
	}
	ops = append(ops, map[string]any{"type": "ADD", "path": "notes/misc", "title": "Typo", "contnet": "text", "reason": "test"})
	_, err := e.CallMethod(ctx, "curate", map[string]any{"operations": ops})
	if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "its cap of 64 MiB") {
		t.Fatalf("curate over the cap: %.300v, want ErrMemoryLimit naming the cap", err)
	}
	if after := dirState(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("the stopped call changed the root")
	}
	res, err := e.Search(ctx, api.SearchParams{Query: "invoice retry"})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("search after the stop: %+v %v", res, err)
	}
	// Work that fits goes through.
	notes := strings.Repeat("A paragraph about invoices and the people who retry them.\n\n", 2000)
	if r, err := e.Ingest(ctx, api.IngestParams{Files: []api.SourceFile{{Name: "notes.md", Content: notes}}}); err != nil || r.Summary.FailedFiles != 0 {
		t.Fatalf("an ingest under the cap: %+v %v", r.Summary, err)
	}
}

func TestSandboxOptionErrors(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	for _, c := range []struct {
		opt  Option
		want string
	}{
		{WithMaxMemory(1 << 20), "memory capped at 1 MiB"}, // the module starts bigger
		{WithMaxMemory(100), "at least one 64 KiB page"},
		{WithMaxMemory(-1), "at least one 64 KiB page"},
		{WithCallTimeout(-time.Second), "call timeout"},
	} {
		if _, err := New(ctx, t.TempDir(), c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want an error saying %q", err, c.want)
		}
	}
}

func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		content := ""
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			content = string(b)
		}
		out[rel] = fmt.Sprintf("%v %v %q", info.Mode(), info.ModTime().UnixNano(), content)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Under the read-only grant the engine answers every read and refuses
// every write with read_only, whatever the open request says, and the
// root is left exactly as it was: no file, folder or time changes.
func TestReadOnlyGrant(t *testing.T) {
	dir := llmRoot(t)
	ctx := context.Background()
	// A root used before: index, signals and audit log on disk.
	w := newEngine(t, dir)
	if _, err := w.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Read(ctx, api.ReadParams{Path: "engineering/billing/invoice_retry_policy.md"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)

	var mu sync.Mutex
	var warnings []string
	e := newEngine(t, dir, WithReadOnly(), WithLogger(func(level int, msg string) {
		if level >= LevelWarn {
			mu.Lock()
			warnings = append(warnings, msg)
			mu.Unlock()
		}
	}))
	if !e.ReadOnly() {
		t.Fatal("ReadOnly() is false")
	}
	// A raw open that asks for writes is opened read-only all the same.
	resp, err := e.Call(ctx, []byte(`{"id":1,"method":"open","params":{"fixedTime":"`+fixedTime+`","ReadOnly":false}}`))
	if err != nil || responseError(resp) != nil {
		t.Fatalf("open: %s %v", resp, err)
	}
	if q, err := e.Query(ctx, api.SearchParams{Query: "how often are failed invoices retried"}); err != nil || len(q.Results) == 0 {
		t.Fatalf("query: %+v %v", q, err)
	}
	if _, err := e.Read(ctx, api.ReadParams{Path: "operations/oncall/escalation.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Curate(ctx, api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "notes/misc", Title: "X", Reason: "test"}}}); !isCode(err, api.CodeReadOnly) {
		t.Fatalf("curate: %v, want %s", err, api.CodeReadOnly)
	}
	if _, err := e.Ingest(ctx, api.IngestParams{Files: []api.SourceFile{{Name: "n.md", Content: "# N\n\ntext\n"}}}); !isCode(err, api.CodeReadOnly) {
		t.Fatalf("ingest: %v, want %s", err, api.CodeReadOnly)
	}
	model := &fakeModel{t: t} // no call is scripted: curateFrom must be refused before any
	if _, err := e.CurateFrom(ctx, api.CurateFromParams{Files: []api.SourceFile{{Name: "n.txt", Content: "Refunds need two approvals."}}}, model); !isCode(err, api.CodeReadOnly) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("curateFrom: %v, want %s", err, api.CodeReadOnly)
	}
	if fl, err := e.Flush(ctx); err != nil || fl.Written {
		t.Fatalf("flush: %+v %v", fl, err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if after := dirState(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the read-only engine changed the root:\nbefore %v\nafter  %v", before, after)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) > 0 {
		t.Fatalf("the engine tried to write: %q", warnings)
	}
}

// writerProbe is a hand-assembled module that calls the writing imports
// of arbor_host on the path "x.md" (at 0), as a module ignoring the grant
// would:
//
//	(import "arbor_host" "fs_write" (func (param i32 i32 i32 i32) (result i32)))
//	(import "arbor_host" "fs_remove" (func (param i32 i32) (result i32)))
//	(import "arbor_host" "fs_rename" (func (param i32 i32 i32 i32) (result i32)))
//	(memory (export "memory") 1)
//	(data (i32.const 0) "x.md")
//	(func (export "write") (result i32) (call 0 (i32.const 0) (i32.const 4) (i32.const 0) (i32.const 4)))
//	(func (export "remove") (result i32) (call 1 (i32.const 0) (i32.const 4)))
//	(func (export "rename") (result i32) (call 2 (i32.const 0) (i32.const 4) (i32.const 0) (i32.const 4)))
func writerProbe() []byte {
	const i32 = 0x7f
	var types []byte
	types = uleb(types, 3)
	types = append(types, 0x60, 4, i32, i32, i32, i32, 1, i32) // 0
	types = append(types, 0x60, 2, i32, i32, 1, i32)           // 1
	types = append(types, 0x60, 0, 1, i32)                     // 2
	var imports []byte
	imports = uleb(imports, 3)
	for i, name := range []string{"fs_write", "fs_remove", "fs_rename"} {
		imports = wasmName(imports, arborhost.ModuleName)
		imports = wasmName(imports, name)
		imports = append(imports, 0x00, []byte{0, 1, 0}[i])
	}
	var exports []byte
	exports = uleb(exports, 4)
	exports = append(wasmName(exports, "memory"), 0x02, 0)
	for i, name := range []string{"write", "remove", "rename"} {
		exports = append(wasmName(exports, name), 0x00, byte(3+i))
	}
	four := []byte{0x41, 0x00, 0x41, 0x04} // i32.const 0, i32.const 4
	bodies := [][]byte{
		append(append(append([]byte{0x00}, four...), four...), 0x10, 0, 0x0b),
		append(append([]byte{0x00}, four...), 0x10, 1, 0x0b),
		append(append(append([]byte{0x00}, four...), four...), 0x10, 2, 0x0b),
	}
	var code []byte
	code = uleb(code, uint32(len(bodies)))
	for _, body := range bodies {
		code = append(uleb(code, uint32(len(body))), body...)
	}
	data := []byte{1, 0x00, 0x41, 0x00, 0x0b, 4, 'x', '.', 'm', 'd'}
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = wasmSection(m, 1, types)
	m = wasmSection(m, 2, imports)
	m = wasmSection(m, 3, []byte{3, 2, 2, 2})
	m = wasmSection(m, 5, []byte{1, 0x00, 1})
	m = wasmSection(m, 7, exports)
	m = wasmSection(m, 10, code)
	return wasmSection(m, 11, data)
}

// The grant is the host's, not the engine's goodwill: a module that writes
// anyway gets DENIED from every writing import, and the log says why.
func TestReadOnlyHostRefusesWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.md"), "kept")
	root, err := arborhost.NewRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var lines []string
	if _, err := arborhost.Instantiate(ctx, rt, arborhost.ModuleName, root.ReadOnly(), nil, func(_ context.Context, level int, msg string) { lines = append(lines, msg) }); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, writerProbe())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"write", "remove", "rename"} {
		res, err := mod.ExportedFunction(name).Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rc := int32(res[0]); rc != -2 {
			t.Errorf("%s: rc %d, want -2 (DENIED)", name, rc)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x.md")); err != nil || string(b) != "kept" {
		t.Fatalf("x.md: %q %v", b, err)
	}
	want := []string{"fs_write: refused: the memory root is granted read-only", "fs_remove: refused: the memory root is granted read-only", "fs_rename: refused: the memory root is granted read-only"}
	if !slices.Equal(lines, want) {
		t.Fatalf("log: %q, want %q", lines, want)
	}
}
