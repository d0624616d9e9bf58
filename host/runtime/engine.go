package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	goruntime "runtime"
	"sync"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/arborhost"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// ABIVersion is the version of docs/ABI.md this host implements.
const ABIVersion = 8

// ErrClosed is returned by calls on a closed Engine.
var ErrClosed = errors.New("arbor: engine is closed")

// ErrNoModule is returned by New when there is no engine module to run:
// the embedded host/runtime/arbor.wasm is the empty placeholder (run
// ./build.sh wasm, then rebuild) and WithWasm gave none.
var ErrNoModule = errors.New("arbor: no engine module: host/runtime/arbor.wasm is empty; run ./build.sh wasm and rebuild")

// Engine is one instance of the wasm engine serving one memory root. Its
// methods are safe for concurrent use: calls are serialized, as the ABI
// requires.
//
// When the module stops during a call (its deadline, the memory limit, a
// trap), the call returns an error saying why, and the next call starts a
// new instance and opens the root again with the parameters of the last
// successful open (docs/sandbox.md).
type Engine struct {
	mu       sync.Mutex
	cfg      *config
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	mod      api.Module
	alloc    api.Function
	free     api.Function
	call     api.Function
	fs       *arborhost.RootFS
	logf     func(level int, msg string)
	out      *outputWatch // the module's stderr
	// name and host name the instance's modules in the runtime, which
	// the writer and its readers share (readers.go).
	name, hostName string
	host           api.Module
	fam            *family
	// follow, for a WithWatch engine and for a reader, keeps it in step
	// with the disk and with the writer.
	follow *follower
	// stopped is why the module stopped: its state is lost, and the next
	// call restarts it. nil while it runs.
	stopped error
	closed  bool
	// opened is the last open request that succeeded, replayed after a
	// restart; nil while the engine is not open.
	opened []byte
	nextID int64
}

// New compiles (or loads from the compilation cache) the engine module,
// instantiates it over the memory root folder root, and initializes it.
// The engine still has to be opened: Open, or a raw "open" request.
func New(ctx context.Context, root string, opts ...Option) (*Engine, error) {
	cfg := newConfig(opts)
	if err := cfg.check(); err != nil {
		return nil, err
	}
	fsys, err := arborhost.NewRootFS(root)
	if err != nil {
		return nil, err
	}
	if cfg.readOnly {
		fsys = fsys.ReadOnly()
	}
	if len(cfg.wasm) == 0 {
		return nil, ErrNoModule
	}
	cacheDir := DefaultCacheDir()
	if cfg.cacheDir != nil {
		cacheDir = *cfg.cacheDir
	}
	e := &Engine{cfg: cfg, fs: fsys, logf: cfg.logf, out: &outputWatch{w: cfg.stderr}, name: "arbor", hostName: arborhost.ModuleName}
	e.fam = &family{writer: e}
	if err := e.startCached(ctx, cacheDir); err != nil {
		return nil, err
	}
	// Watching starts before the tree is opened: nothing changed after
	// open read a file goes unseen.
	e.startFollowing(cfg)
	return e, nil
}

// startCached starts the engine with its compiled code kept in the cache
// folder dir ("" for memory only). wazero fails the compilation itself when
// the folder holds an entry for this module that it cannot read back (a
// truncated or damaged file) or when it cannot write the entry it compiled,
// which would make every later start fail the same way. The module is then
// compiled in memory instead, and the folder's entries are removed so that
// the next process writes a fresh one: the cache only ever costs time.
func (e *Engine) startCached(ctx context.Context, dir string) error {
	err := e.start(ctx, compilationCache(dir))
	var cerr *compileError
	if err == nil || dir == "" || !errors.As(err, &cerr) {
		return err
	}
	if retry := e.start(ctx, compilationCache("")); retry != nil {
		return retry
	}
	forgetCache(dir)
	e.logf(LevelWarn, fmt.Sprintf("the compiled-code cache in %s could not be used (%v); compiled in memory, and the cache's entries were removed for the next start to rebuild", dir, cerr.err))
	return nil
}

// compileError is a failure to compile the engine module, as opposed to
// one to start it.
type compileError struct{ err error }

func (c *compileError) Error() string { return c.err.Error() }
func (c *compileError) Unwrap() error { return c.err }

// start makes the engine's runtime with compiled code kept in cache,
// registers the host modules, compiles the engine module and starts its
// first instance. On failure the runtime is closed again.
func (e *Engine) start(ctx context.Context, cache wazero.CompilationCache) (err error) {
	e.rt = wazero.NewRuntimeWithConfig(ctx, runtimeConfig(e.cfg, cache))
	defer func() {
		if err != nil {
			e.rt.Close(ctx)
			e.rt, e.compiled, e.mod = nil, nil, nil
		}
	}()
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, e.rt); err != nil {
		return fmt.Errorf("arbor: instantiate WASI: %w", err)
	}
	if e.host, err = arborhost.Instantiate(ctx, e.rt, e.hostName, e.fs, e.cfg.embedder, e.cfg.logCtx); err != nil {
		return fmt.Errorf("arbor: instantiate %s: %w", arborhost.ModuleName, err)
	}
	// A cache miss (the first start of a build on a machine) compiles the
	// whole module, seconds of CPU on one core: every core shares it.
	cctx := withModuleSum(experimental.WithCompilationWorkers(ctx, goruntime.GOMAXPROCS(0)), e.cfg.wasm)
	compiled, err := e.rt.CompileModule(cctx, e.cfg.wasm)
	if err != nil {
		return &compileError{fmt.Errorf("arbor: compile engine module%s: %w", e.cfg.memoryNote(), err)}
	}
	e.compiled = compiled
	return e.instantiate(ctx)
}

// instantiate starts an instance of the compiled module and initializes it.
func (e *Engine) instantiate(ctx context.Context) error {
	ictx := experimental.WithMemoryAllocator(ctx, linearMemory())
	if e.hostName != arborhost.ModuleName {
		// A reader's imports of arbor_host go to its own host module.
		ictx = experimental.WithImportResolver(ictx, func(name string) api.Module {
			if name == arborhost.ModuleName {
				return e.host
			}
			return nil
		})
	}
	mod, err := e.rt.InstantiateModule(ictx, e.compiled, moduleConfig(e.cfg, e.out).WithName(e.name))
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
	cctx, cancel := e.cfg.callContext(ctx)
	defer cancel()
	if _, err := initialize.Call(cctx); err != nil {
		return fmt.Errorf("arbor: initialize engine module: %w", e.stopError("_initialize", err))
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
func moduleConfig(cfg *config, w io.Writer) wazero.ModuleConfig {
	stderr := streamWriter{w}
	mc := wazero.NewModuleConfig().
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader).
		WithStderr(stderr).
		WithStdout(stderr)
	if limit := cfg.goMemLimit(); limit != "" {
		mc = mc.WithEnv("GOMEMLIMIT", limit)
	}
	return mc
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

// MemoryBytes is the size of the running instance's linear memory in
// bytes, or 0 while no instance runs (closed, or stopped until the next
// call restarts it). A WebAssembly memory never shrinks, so this is also
// the peak the instance reached: bench/scale reports it after a cold build.
func (e *Engine) MemoryBytes() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.stopped != nil || e.mod == nil {
		return 0
	}
	return uint64(e.mod.Memory().Size())
}

// Call sends one raw JSON request (docs/ABI.md §3) and returns the raw JSON
// response. An error means the request could not be delivered (closed
// engine, a trap in the module, a deadline); errors of the engine itself
// come back inside the response.
func (e *Engine) Call(ctx context.Context, req []byte) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	method := requestMethod(req)
	return e.followCall(ctx, method, func() ([]byte, error) { return e.callLocked(ctx, method, req) })
}

// callLocked delivers req, whose method is method, restarting the module
// first if it stopped.
func (e *Engine) callLocked(ctx context.Context, method string, req []byte) ([]byte, error) {
	if e.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("arbor: call: %w", err)
	}
	if e.stopped != nil {
		if err := e.restart(ctx); err != nil {
			return nil, err
		}
	}
	if method == "open" && e.fs.IsReadOnly() {
		req = grantReadOnly(req)
	}
	if method == "open" {
		// An open walks the whole tree: its first answers are listed
		// while the module reads what it keeps of the tree.
		e.fs.WalkAhead("", host.WalkAnswerBytes)
	}
	label := method
	if label == "" {
		label = "call"
	}
	mark := e.markAudit(method)
	out, err := e.exchange(ctx, label, req)
	if err != nil {
		if e.stopped != nil {
			err = e.interrupted(mark, req, err)
		}
		return nil, err
	}
	e.track(method, req, out)
	return out, nil
}

// exchange is one request through arbor_call (docs/ABI.md §5, step 3),
// under the call's deadline; label names it in errors.
func (e *Engine) exchange(ctx context.Context, label string, req []byte) ([]byte, error) {
	if len(req) > math.MaxInt32 {
		return nil, fmt.Errorf("arbor: call: request of %d bytes is too large", len(req))
	}
	ctx, cancel := e.cfg.callContext(ctx)
	defer cancel()
	mem := e.mod.Memory()
	n := uint32(len(req))
	res, err := e.alloc.Call(ctx, uint64(n))
	if err != nil {
		return nil, e.fail(label, err)
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
		return nil, e.fail(label, err)
	}
	if n > 0 {
		if _, err := e.free.Call(ctx, uint64(ptr)); err != nil {
			return nil, e.fail(label, err)
		}
	}
	outPtr, outLen := uint32(res[0]>>32), uint32(res[0])
	view, ok := mem.Read(outPtr, outLen)
	if !ok {
		return nil, fmt.Errorf("arbor: call: response [%#x, +%d) lies outside guest memory", outPtr, outLen)
	}
	out := bytes.Clone(view)
	if _, err := e.free.Call(ctx, uint64(outPtr)); err != nil {
		return nil, e.fail(label, err)
	}
	return out, nil
}

// fail records that the module stopped during label: its state is lost,
// and the next call restarts it. The error says why it stopped. The root's
// lock, which the call may have held for a write, is released now, so
// that other processes (and the next instance) need not wait for it.
func (e *Engine) fail(label string, err error) error {
	e.stopped = e.stopError(label, err)
	if uerr := e.fs.Unlock(); uerr != nil {
		e.logf(LevelError, fmt.Sprintf("release the root's lock after the engine stopped: %v", uerr))
	}
	return e.stopped
}

// restart replaces a stopped module by a new instance and, when the root
// was open, opens it again with the same request. Pending model calls
// (continuations) and signals not flushed yet are lost with the old
// instance.
func (e *Engine) restart(ctx context.Context) error {
	cause := e.stopped
	if e.mod != nil {
		_ = e.mod.Close(ctx) // already closed when it exited or met its deadline
		e.mod = nil
	}
	if err := e.instantiate(ctx); err != nil {
		return fmt.Errorf("arbor: restart the engine module, which stopped (%v): %w", cause, err)
	}
	e.stopped = nil
	if e.opened == nil {
		return nil
	}
	out, err := e.exchange(ctx, "open", e.opened)
	if err != nil {
		return fmt.Errorf("arbor: open the memory root again after the engine stopped: %w", err)
	}
	if err := responseError(out); err != nil {
		e.opened = nil
		return fmt.Errorf("arbor: open the memory root again after the engine stopped: %w", err)
	}
	if e.fam.pooled() {
		// The new instance keeps no books of accesses until told to.
		return e.openBooks(ctx)
	}
	return nil
}

// Close closes the engine (flushing its state to the root when it is
// open) and releases the module. Calling Close again does nothing. A
// module that stopped is not restarted to be closed: what it had not
// written is lost with it.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	// The readers go first: they run in the writer's runtime.
	errs := e.fam.closeReaders(ctx, e)
	if e.stopped == nil {
		if _, err := e.methodLocked(ctx, "close", nil); err != nil && !isCode(err, "not_open") {
			errs = append(errs, err)
		}
	}
	e.stopFollowing()
	if e.fam.writer != e {
		// A reader's modules go; the runtime is the writer's.
		errs = append(errs, closeModules(ctx, e.mod, e.host)...)
	} else if err := e.rt.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("arbor: close runtime: %w", err))
	}
	e.closed, e.mod, e.opened = true, nil, nil
	return errors.Join(errs...)
}
