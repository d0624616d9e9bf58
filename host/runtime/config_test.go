package runtime

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/tetratelabs/wazero"
	wapi "github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// uleb appends the unsigned LEB128 encoding of v.
func uleb(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// wasmSection appends a section: its id, its size, its contents.
func wasmSection(b []byte, id byte, contents []byte) []byte {
	b = append(b, id)
	b = uleb(b, uint32(len(contents)))
	return append(b, contents...)
}

func wasmName(b []byte, s string) []byte {
	b = uleb(b, uint32(len(s)))
	return append(b, s...)
}

// clockProbe is a hand-assembled module that uses the WASI calls behind
// the Go runtime's time and crypto/rand, so that a test can see what a
// module config gives a guest:
//
//	(import "wasi_snapshot_preview1" "random_get" (func (param i32 i32) (result i32)))
//	(import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
//	(import "wasi_snapshot_preview1" "poll_oneoff" (func (param i32 i32 i32 i32) (result i32)))
//	(memory (export "memory") 1)
//	(func (export "rand") (result i32)            ;; 16 random bytes at 0
//	  (call 0 (i32.const 0) (i32.const 16)))
//	(func (export "clock") (param i32) (result i64) ;; clock_time_get(id), nanoseconds
//	  (if (call 1 (local.get 0) (i64.const 1) (i32.const 64)) (then unreachable))
//	  (i64.load (i32.const 64)))
//	(func (export "sleep") (param i64) (result i32) ;; poll_oneoff on a relative monotonic timeout
//	  (i32.store offset=16 (i32.const 128) (i32.const 1))
//	  (i64.store offset=24 (i32.const 128) (local.get 0))
//	  (call 2 (i32.const 128) (i32.const 192) (i32.const 1) (i32.const 224)))
func clockProbe() []byte {
	const i32, i64 = 0x7f, 0x7e
	funcType := func(b []byte, params, results []byte) []byte {
		b = append(b, 0x60)
		b = append(uleb(b, uint32(len(params))), params...)
		return append(uleb(b, uint32(len(results))), results...)
	}
	var types []byte
	types = uleb(types, 6)
	types = funcType(types, []byte{i32, i32}, []byte{i32})           // 0 random_get
	types = funcType(types, []byte{i32, i64, i32}, []byte{i32})      // 1 clock_time_get
	types = funcType(types, []byte{i32, i32, i32, i32}, []byte{i32}) // 2 poll_oneoff
	types = funcType(types, nil, []byte{i32})                        // 3 rand
	types = funcType(types, []byte{i32}, []byte{i64})                // 4 clock
	types = funcType(types, []byte{i64}, []byte{i32})                // 5 sleep

	var imports []byte
	imports = uleb(imports, 3)
	for i, name := range []string{"random_get", "clock_time_get", "poll_oneoff"} {
		imports = wasmName(imports, "wasi_snapshot_preview1")
		imports = wasmName(imports, name)
		imports = append(imports, 0x00, byte(i)) // a function of type i
	}
	funcs := []byte{3, 3, 4, 5}  // three functions, of types 3, 4, 5
	memory := []byte{1, 0x00, 1} // one memory, no maximum, one page

	var exports []byte
	exports = uleb(exports, 4)
	exports = append(wasmName(exports, "memory"), 0x02, 0)
	exports = append(wasmName(exports, "rand"), 0x00, 3)
	exports = append(wasmName(exports, "clock"), 0x00, 4)
	exports = append(wasmName(exports, "sleep"), 0x00, 5)

	bodies := [][]byte{
		{0x00, 0x41, 0x00, 0x41, 0x10, 0x10, 0x00, 0x0b},
		{0x00, 0x20, 0x00, 0x42, 0x01, 0x41, 0xc0, 0x00, 0x10, 0x01, 0x04, 0x40, 0x00, 0x0b,
			0x41, 0xc0, 0x00, 0x29, 0x03, 0x00, 0x0b},
		{0x00,
			0x41, 0x80, 0x01, 0x41, 0x01, 0x36, 0x02, 0x10,
			0x41, 0x80, 0x01, 0x20, 0x00, 0x37, 0x03, 0x18,
			0x41, 0x80, 0x01, 0x41, 0xc0, 0x01, 0x41, 0x01, 0x41, 0xe0, 0x01, 0x10, 0x02, 0x0b},
	}
	var code []byte
	code = uleb(code, uint32(len(bodies)))
	for _, body := range bodies {
		code = append(uleb(code, uint32(len(body))), body...)
	}

	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = wasmSection(m, 1, types)
	m = wasmSection(m, 2, imports)
	m = wasmSection(m, 3, funcs)
	m = wasmSection(m, 5, memory)
	m = wasmSection(m, 7, exports)
	return wasmSection(m, 10, code)
}

// probe is one instance of clockProbe.
type probe struct {
	t   *testing.T
	mod wapi.Module
}

func newProbe(t *testing.T, rt wazero.Runtime, mc wazero.ModuleConfig, name string) *probe {
	t.Helper()
	ctx := context.Background()
	mod, err := rt.InstantiateWithConfig(ctx, clockProbe(), mc.WithName(name))
	if err != nil {
		t.Fatalf("instantiate the probe: %v", err)
	}
	return &probe{t, mod}
}

func (p *probe) call(name string, args ...uint64) uint64 {
	p.t.Helper()
	res, err := p.mod.ExportedFunction(name).Call(context.Background(), args...)
	if err != nil {
		p.t.Fatalf("%s: %v", name, err)
	}
	return res[0]
}

func (p *probe) random() []byte {
	p.t.Helper()
	if errno := p.call("rand"); errno != 0 {
		p.t.Fatalf("random_get: errno %d", errno)
	}
	b, _ := p.mod.Memory().Read(0, 16)
	return bytes.Clone(b)
}

// wall is the guest's wall clock (WASI clock 0).
func (p *probe) wall() time.Time { return time.Unix(0, int64(p.call("clock", 0))) }

// mono is the guest's monotonic clock (WASI clock 1).
func (p *probe) mono() time.Duration { return time.Duration(p.call("clock", 1)) }

// sleep sleeps d inside the guest and returns how long it took on the host.
func (p *probe) sleep(d time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	if errno := p.call("sleep", uint64(d)); errno != 0 {
		p.t.Fatalf("poll_oneoff: errno %d", errno)
	}
	return time.Since(start)
}

// The engine module must see the host's real clocks, sleep and random
// source; wazero's defaults are fakes (docs/design.md, WebAssembly and the host ABI). The probe module makes
// the same WASI calls as the Go runtime in the engine, under the engine's
// own module config; the default config is run too, to show that the
// probe tells the two apart.
func TestModuleConfigRealClocksAndRandom(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)

	cfg := newConfig(nil)
	a := newProbe(t, rt, moduleConfig(cfg, cfg.stderr), "a")
	b := newProbe(t, rt, moduleConfig(cfg, cfg.stderr), "b")
	fake := newProbe(t, rt, wazero.NewModuleConfig(), "fake")
	fake2 := newProbe(t, rt, wazero.NewModuleConfig(), "fake2")

	// Wall clock: now, not wazero's frozen 2022.
	if d := time.Since(a.wall()); d < -time.Minute || d > time.Minute {
		t.Errorf("wall clock is %v away from the host's", d)
	}
	if d := time.Since(fake.wall()); d < 24*time.Hour {
		t.Fatalf("the probe cannot tell wazero's fake wall clock (off by %v) from a real one", d)
	}

	// Monotonic clock: advances with real time between calls.
	const pause = 30 * time.Millisecond
	m0, f0 := a.mono(), fake.mono()
	time.Sleep(pause)
	if d := a.mono() - m0; d < pause {
		t.Errorf("monotonic clock advanced %v over a %v pause", d, pause)
	}
	if d := fake.mono() - f0; d >= pause {
		t.Fatalf("the probe cannot tell wazero's fake monotonic clock (advanced %v) from a real one", d)
	}

	// Sleep: really waits.
	if took := a.sleep(pause); took < pause {
		t.Errorf("a %v sleep in the guest took %v", pause, took)
	}
	if took := fake.sleep(time.Second); took >= time.Second {
		t.Fatalf("the probe cannot tell wazero's fake sleep (%v) from a real one", took)
	}

	// Random: different in every instance and every call, unlike wazero's
	// fixed stream.
	r1, r2, r3 := a.random(), a.random(), b.random()
	if bytes.Equal(r1, r2) || bytes.Equal(r1, r3) || bytes.Equal(r2, r3) {
		t.Errorf("random bytes repeat: %x %x %x", r1, r2, r3)
	}
	if !bytes.Equal(fake.random(), fake2.random()) {
		t.Fatal("the probe cannot tell wazero's fixed random stream from a real one")
	}
}

// DefaultCacheDir is the user cache folder's arbor/wazero, and nothing
// (memory only) when the platform has no user cache folder.
func TestDefaultCacheDir(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	user, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DefaultCacheDir(), filepath.Join(user, "arbor", "wazero"); got != want {
		t.Errorf("DefaultCacheDir() = %q, want %q", got, want)
	}
	if runtime.GOOS == "linux" && DefaultCacheDir() != filepath.Join(xdg, "arbor", "wazero") {
		t.Errorf("DefaultCacheDir() = %q ignores XDG_CACHE_HOME %q", DefaultCacheDir(), xdg)
	}
	if runtime.GOOS == "linux" {
		t.Setenv("XDG_CACHE_HOME", "")
		t.Setenv("HOME", "")
		if got := DefaultCacheDir(); got != "" {
			t.Errorf("without a user cache folder, DefaultCacheDir() = %q, want \"\"", got)
		}
	}
}

// cachedFiles maps the files wazero keeps in a cache folder to their
// modification times.
func cachedFiles(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	files := map[string]time.Time{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			files[p] = fi.ModTime()
		}
		return nil
	})
	return files
}

// By default compiled code goes to the user cache folder, where a later
// process loads it instead of compiling the module again.
func TestCompilationCacheOnDisk(t *testing.T) {
	needModule(t)
	if runtime.GOOS != "linux" {
		t.Skip("places the user cache folder with XDG_CACHE_HOME")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("wazero's interpreter keeps no compiled code")
	}
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	dir := filepath.Join(xdg, "arbor", "wazero")
	ctx := context.Background()

	e := newEngine(t, "")
	files := cachedFiles(t, dir)
	if len(files) == 0 {
		t.Fatalf("no compiled code in %s", dir)
	}
	for f := range files {
		if !strings.Contains(f, string(filepath.Separator)+"wazero-") {
			t.Errorf("unexpected file in the cache: %s", f)
		}
	}
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}

	// A new process has no in-memory cache: forget it, as one would.
	cachesMu.Lock()
	delete(caches, dir)
	cachesMu.Unlock()
	e2 := newEngine(t, "")
	if _, err := e2.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	again := cachedFiles(t, dir)
	if len(again) != len(files) {
		t.Errorf("cache went from %d to %d files for the same module", len(files), len(again))
	}
	for f, mtime := range files {
		if !again[f].Equal(mtime) {
			t.Errorf("%s was written again: the module was compiled instead of loaded", f)
		}
	}
}

// A cache folder that cannot be written costs a compilation, never a
// failure: the engine falls back to the in-memory cache.
func TestCompilationCacheFallback(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	blocked := filepath.Join(t.TempDir(), "file")
	writeFile(t, blocked, "x")
	cases := map[string]string{"below a file": filepath.Join(blocked, "cache")}
	if os.Geteuid() != 0 { // root writes through any permission
		ro := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		cases["read-only"] = ro
	}
	for what, dir := range cases {
		if c := compilationCache(dir); c != compilationCache("") {
			t.Errorf("%s: %s is used as a cache folder", what, dir)
		}
		e := newEngine(t, "", WithCacheDir(dir))
		if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// A cache entry wazero cannot read back (here truncated, as a full disk or
// a crash of the file system could leave it) made every later start fail
// with "compilationcache: error reading executable". The engine now starts
// from code compiled in memory, says so, and empties the folder so that
// the next process writes a sound entry.
func TestCompilationCacheDamagedEntry(t *testing.T) {
	needModule(t)
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("wazero's interpreter keeps no compiled code")
	}
	ctx := context.Background()
	dir := t.TempDir()
	newEngine(t, "", WithCacheDir(dir))
	files := cachedFiles(t, dir)
	if len(files) == 0 {
		t.Fatalf("no compiled code in %s", dir)
	}
	for f := range files {
		if err := os.Truncate(f, 1000); err != nil {
			t.Fatal(err)
		}
	}
	// A new process has no in-memory cache: forget it, as one would.
	cachesMu.Lock()
	delete(caches, dir)
	cachesMu.Unlock()

	var warnings []string
	e := newEngine(t, "", WithCacheDir(dir), WithLogger(func(level int, msg string) {
		if level >= LevelWarn {
			warnings = append(warnings, msg)
		}
	}))
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], dir) {
		t.Errorf("warnings = %q, want one naming the cache folder", warnings)
	}
	if left := cachedFiles(t, dir); len(left) != 0 {
		t.Errorf("the damaged entries are still there: %v", left)
	}
	if c := compilationCache(dir); c != compilationCache("") {
		t.Error("this process still uses the damaged cache folder")
	}
}
