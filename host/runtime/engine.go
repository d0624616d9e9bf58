package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/arbormem/arbor/host/arborhost"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// ABIVersion is the version of docs/ABI.md this host implements.
const ABIVersion = 2

// ErrClosed is returned by calls on a closed Engine.
var ErrClosed = errors.New("arbor: engine is closed")

// ErrNoModule is returned by New when there is no engine module to run:
// the embedded host/runtime/arbor.wasm is the empty placeholder (run
// ./build.sh wasm, then rebuild) and WithWasm gave none.
var ErrNoModule = errors.New("arbor: no engine module: host/runtime/arbor.wasm is empty; run ./build.sh wasm and rebuild")

// Engine is one instance of the wasm engine serving one memory root. Its
// methods are safe for concurrent use: calls are serialized, as the ABI
// requires.
type Engine struct {
	mu    sync.Mutex
	rt    wazero.Runtime
	mod   api.Module
	alloc api.Function
	free  api.Function
	call  api.Function
	fs    *arborhost.RootFS
	logf  func(level int, msg string)
	// follow, for a WithWatch engine, keeps it in step with the disk.
	follow *follower
	// dead is set once the module trapped or exited; it cannot serve again.
	dead   error
	nextID int64
}

// New compiles (or loads from the compilation cache) the engine module,
// instantiates it over the memory root folder root, and initializes it.
// The engine still has to be opened: Open, or a raw "open" request.
func New(ctx context.Context, root string, opts ...Option) (*Engine, error) {
	cfg := newConfig(opts)
	fsys, err := arborhost.NewRootFS(root)
	if err != nil {
		return nil, err
	}
	if len(cfg.wasm) == 0 {
		return nil, ErrNoModule
	}
	cacheDir := DefaultCacheDir()
	if cfg.cacheDir != nil {
		cacheDir = *cfg.cacheDir
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compilationCache(cacheDir)))
	e := &Engine{rt: rt, fs: fsys, logf: cfg.logf}
	if err := e.start(ctx, cfg); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	// Watching starts before the tree is opened: nothing changed after
	// open read a file goes unseen.
	e.startFollowing(cfg)
	return e, nil
}

func (e *Engine) start(ctx context.Context, cfg *config) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, e.rt); err != nil {
		return fmt.Errorf("arbor: instantiate WASI: %w", err)
	}
	if _, err := arborhost.Instantiate(ctx, e.rt, e.fs, cfg.logf); err != nil {
		return fmt.Errorf("arbor: instantiate %s: %w", arborhost.ModuleName, err)
	}
	compiled, err := e.rt.CompileModule(ctx, cfg.wasm)
	if err != nil {
		return fmt.Errorf("arbor: compile engine module: %w", err)
	}
	mod, err := e.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, linearMemory()), compiled, moduleConfig(cfg).WithName("arbor"))
	if err != nil {
		return fmt.Errorf("arbor: instantiate engine module: %w", err)
	}
	e.mod = mod
	exports := map[string]*api.Function{"arbor_alloc": &e.alloc, "arbor_free": &e.free, "arbor_call": &e.call}
	for name, fn := range exports {
		if *fn = mod.ExportedFunction(name); *fn == nil {
			return fmt.Errorf("arbor: engine module does not export %s", name)
		}
	}
	if mod.Memory() == nil {
		return errors.New("arbor: engine module does not export its memory")
	}
	initialize := mod.ExportedFunction("_initialize")
	if initialize == nil {
		return errors.New("arbor: engine module does not export _initialize (not a reactor)")
	}
	if _, err := initialize.Call(ctx); err != nil {
		return fmt.Errorf("arbor: initialize engine module: %w", err)
	}
	version := mod.ExportedFunction("arbor_abi_version")
	if version == nil {
		return errors.New("arbor: engine module does not export arbor_abi_version")
	}
	res, err := version.Call(ctx)
	if err != nil {
		return fmt.Errorf("arbor: arbor_abi_version: %w", err)
	}
	if v := api.DecodeI32(res[0]); v != ABIVersion {
		return fmt.Errorf("arbor: engine module speaks ABI version %d, this host speaks %d", v, ABIVersion)
	}
	return nil
}

// moduleConfig is how the engine module is instantiated: a reactor (no
// start function: start calls _initialize itself) with the host's real
// wall clock, monotonic clock, sleep and random source. wazero's defaults
// are fakes (a wall clock frozen in 2022, a clock advancing 1 ms per read,
// sleeps that return at once, a fixed random stream), under which recency
// and lifecycle decay would be wrong (docs/design.md, WebAssembly and the host ABI). Standard output goes to
// standard error too: the engine has no use for it, and a stray write must
// not corrupt a command's output.
func moduleConfig(cfg *config) wazero.ModuleConfig {
	stderr := streamWriter{cfg.stderr}
	return wazero.NewModuleConfig().
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader).
		WithStderr(stderr).
		WithStdout(stderr)
}

// streamWriter keeps the host's descriptor out of the module's reach. Given
// an *os.File, wazero hands the module the descriptor itself, and
// fd_fdstat_set_flags then changes the real one; Go's wasip1 runtime asks
// for O_NONBLOCK on fds 0-2 as it starts (syscall/fs_wasip1.go). O_NONBLOCK
// belongs to the open file, not the descriptor, so the host's stderr would
// turn non-blocking for every process that shares it: the terminal of the
// shell and of `arbor tree | cat`, whose cat then fails with EAGAIN, or the
// pipe that is also stdout under 2>&1, where the CLI's own writes fail once
// the pipe is full. Behind a plain io.Writer the module sees a blocking
// stream that does not take the flag (its request fails and Go's runtime
// ignores that), and its writes block in the host as any write does.
type streamWriter struct{ w io.Writer }

func (s streamWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// Root returns the memory root folder (absolute, symbolic links resolved).
func (e *Engine) Root() string { return e.fs.Dir() }

// Call sends one raw JSON request (docs/ABI.md §3) and returns the raw JSON
// response. An error means the request could not be delivered (closed
// engine, a trap in the module); errors of the engine itself come back
// inside the response.
func (e *Engine) Call(ctx context.Context, req []byte) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.followCall(ctx, req, func() ([]byte, error) { return e.callLocked(ctx, req) })
}

func (e *Engine) callLocked(ctx context.Context, req []byte) ([]byte, error) {
	if e.mod == nil {
		return nil, ErrClosed
	}
	if e.dead != nil {
		return nil, e.dead
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("arbor: call: %w", err)
	}
	if len(req) > math.MaxInt32 {
		return nil, fmt.Errorf("arbor: call: request of %d bytes is too large", len(req))
	}
	mem := e.mod.Memory()
	n := uint32(len(req))
	res, err := e.alloc.Call(ctx, uint64(n))
	if err != nil {
		return nil, e.fail("arbor_alloc", err)
	}
	ptr := api.DecodeU32(res[0])
	if n > 0 && (ptr == 0 || !mem.Write(ptr, req)) {
		if ptr != 0 {
			e.free.Call(ctx, uint64(ptr))
		}
		return nil, fmt.Errorf("arbor: call: arbor_alloc(%d) returned an unusable block %#x", n, ptr)
	}
	res, err = e.call.Call(ctx, uint64(ptr), uint64(n))
	if err != nil {
		return nil, e.fail("arbor_call", err)
	}
	if n > 0 {
		if _, err := e.free.Call(ctx, uint64(ptr)); err != nil {
			return nil, e.fail("arbor_free", err)
		}
	}
	outPtr, outLen := uint32(res[0]>>32), uint32(res[0])
	view, ok := mem.Read(outPtr, outLen)
	if !ok {
		return nil, fmt.Errorf("arbor: call: response [%#x, +%d) lies outside guest memory", outPtr, outLen)
	}
	out := bytes.Clone(view)
	if _, err := e.free.Call(ctx, uint64(outPtr)); err != nil {
		return nil, e.fail("arbor_free", err)
	}
	return out, nil
}

// fail records that the module trapped or exited: its state is lost, so
// every later call gets the same error.
func (e *Engine) fail(export string, err error) error {
	e.dead = fmt.Errorf("arbor: %s: the engine module stopped: %w", export, err)
	return e.dead
}

// Close closes the engine (flushing its state to the root when it is
// open) and releases the module. Calling Close again does nothing.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mod == nil {
		return nil
	}
	var errs []error
	if e.dead == nil {
		if _, err := e.methodLocked(ctx, "close", nil); err != nil && !isCode(err, "not_open") {
			errs = append(errs, err)
		}
	}
	e.stopFollowing()
	if err := e.rt.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("arbor: close runtime: %w", err))
	}
	e.mod = nil
	return errors.Join(errs...)
}
