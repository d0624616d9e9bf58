package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"

	coreapi "github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/arborhost"
	"github.com/arbormem/arbor/host/watch"
)

// family is an engine (the writer) and its readers: instances of the one
// compiled module in the writer's runtime, open on the same root, each
// with its own index in its own linear memory. The engine module is
// single-threaded (docs/ABI.md §5): readers are how reads run at the same
// time. Its lock is taken after an instance's own, never before.
type family struct {
	writer *Engine
	// w is the watcher every instance follows (nil: not watching, or
	// watching failed and scanEvery > 0 has each instance scan instead).
	w *watch.Watcher
	// remote: the root's file system raises no event for what other
	// machines change (watch.Remote), so the instances scan as well.
	remote    bool
	scanEvery time.Duration
	// partialSaid: the warning that the watcher stopped hearing of some
	// folders (watch.Partial) was logged.
	partialSaid atomic.Bool
	mu          sync.Mutex
	readers     []*Engine
	idle        chan *Engine // readers free for a call; nil with none
	closed      bool
	accessed    map[string]int // the readers' accesses, for the writer
}

// readMethods are the methods a writer with readers sends to one of them:
// they change nothing but the lifecycle signals of what they return,
// which the readers hand to the writer (docs/ABI.md §4.18).
var readMethods = map[string]bool{"search": true, "query": true, "read": true, "tree": true, "recent": true, "context": true, "stats": true}

// AddReaders starts n readers beside e, which must be open and is then
// their writer: read-only instances of the engine module in e's runtime
// (compiled once), each opened on e's root as e was, which answer the
// reads of e's methods (Search, Query without a model, Read, Tree,
// Recent, Context, Stats) on as many goroutines at once as there are
// readers, while everything else, writes first, runs on e. Every reader
// reflects each of e's writes before its next call: e notes what it
// writes (arborhost.RootFS.RecordWrites) and tells every reader, which
// reads those paths again (refresh, §4.12) before it answers; a WithWatch
// engine's readers follow its watcher. The accesses readers count reach e
// at its next call, and the lifecycle signals e changes reach the readers
// at theirs (signals, §4.18). Each reader holds its own index in its own
// memory: bench/mcphttp/REPORT.md measures what one costs. An embedder
// (WithEmbedder) is then called from several goroutines at once. Close
// closes the readers with e.
func (e *Engine) AddReaders(ctx context.Context, n int) error {
	if e.fam.writer != e {
		return errors.New("arbor: a reader has no readers")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if e.opened == nil {
		return errors.New("arbor: add readers: the engine is not open")
	}
	// The readers open what the writer persisted, reusing its index.
	if _, err := e.methodLocked(ctx, "flush", nil); err != nil {
		return fmt.Errorf("arbor: add readers: %w", err)
	}
	e.fs.RecordWrites()
	for range n {
		if err := e.addReader(ctx); err != nil {
			return err
		}
	}
	return e.openBooks(ctx)
}

// addReader starts one reader and opens it on e's root.
func (e *Engine) addReader(ctx context.Context) error {
	f := e.fam
	f.mu.Lock()
	k := len(f.readers) + 1
	f.mu.Unlock()
	r := &Engine{cfg: e.cfg, fs: e.fs.ReadOnly(), logf: e.logf, out: &outputWatch{w: e.cfg.stderr}, rt: e.rt, compiled: e.compiled,
		fam: f, follow: &follower{}, name: fmt.Sprintf("arbor-reader-%d", k), hostName: fmt.Sprintf("%s-reader-%d", arborhost.ModuleName, k)}
	var err error
	if r.host, err = arborhost.Instantiate(ctx, e.rt, r.hostName, r.fs, e.cfg.embedder, e.cfg.logCtx); err != nil {
		return fmt.Errorf("arbor: reader %d: instantiate %s: %w", k, arborhost.ModuleName, err)
	}
	if err := r.instantiate(ctx); err != nil {
		r.host.Close(ctx)
		return fmt.Errorf("arbor: reader %d: %w", k, err)
	}
	// A member before its open: what changes meanwhile waits for it.
	f.mu.Lock()
	f.readers = append(f.readers, r)
	f.mu.Unlock()
	out, err := r.callLocked(ctx, "open", e.opened)
	if err == nil {
		err = responseError(out)
	}
	if err == nil {
		r.follow.opened = true
		err = r.openBooks(ctx)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.readers = f.readers[:len(f.readers)-1]
		closeModules(ctx, r.mod, r.host)
		return fmt.Errorf("arbor: reader %d: open: %w", k, err)
	}
	if f.idle == nil {
		// Room for every reader a family may get: release never blocks.
		f.idle = make(chan *Engine, maxReaders)
	}
	f.idle <- r
	return nil
}

// maxReaders bounds AddReaders: each reader holds the whole index.
const maxReaders = 256

// Readers is the number of e's readers.
func (e *Engine) Readers() int {
	e.fam.mu.Lock()
	defer e.fam.mu.Unlock()
	return len(e.fam.readers)
}

// openBooks starts the instance's accounts of accesses and changed
// signals (signals, §4.18): after its open, and again after a restart,
// which loses them.
func (e *Engine) openBooks(ctx context.Context) error {
	_, err := e.rawMethod(ctx, "signals", nil)
	return err
}

// pooled reports whether the family has readers.
func (f *family) pooled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.readers) > 0
}

// before runs ahead of a call of method on e: e takes in what changed,
// and a writer counts the accesses its readers handed over.
func (e *Engine) before(ctx context.Context, method string) {
	e.catchUp(ctx, method)
	if e.fam.writer != e || method == "signals" || method == "open" || e.opened == nil {
		return
	}
	if acc := e.fam.takeAccessed(); len(acc) > 0 {
		res, _ := e.signalsCall(ctx, coreapi.SignalsParams{Accessed: acc})
		e.fam.spread(nil, false, res.Changed)
	}
}

// after runs after a call of method on e in a family with readers: a
// writer tells its readers what it wrote and which signals changed; a
// reader hands the accesses it counted to the writer.
func (e *Engine) after(ctx context.Context, method string) {
	if method == "signals" || e.opened == nil || !e.fam.pooled() {
		return
	}
	// An instance that stopped during the call lost its books with it:
	// asking for them would only start a new one (or, under the call's
	// spent deadline, fail). What a writer wrote before it stopped is on
	// disk, and the readers still read it again.
	if e.fam.writer != e {
		if e.stopped == nil {
			if res, ok := e.signalsCall(ctx, coreapi.SignalsParams{}); ok {
				e.fam.addAccessed(res.Accessed)
			}
		}
		return
	}
	written := e.fs.TakeWritten()
	var changed map[string]*coreapi.Signal
	if e.stopped == nil {
		res, _ := e.signalsCall(ctx, coreapi.SignalsParams{})
		changed = res.Changed
	}
	e.fam.spread(written, false, changed)
}

// signalsCall makes a signals call, logging a failure.
func (e *Engine) signalsCall(ctx context.Context, p coreapi.SignalsParams) (coreapi.SignalsResult, bool) {
	res, err := decodeResult[coreapi.SignalsResult]("signals")(e.rawMethod(ctx, "signals", p))
	if err != nil {
		e.logf(LevelWarn, fmt.Sprintf("lifecycle signals between the engine's instances: %v", err))
		return res, false
	}
	return res, true
}

// take pulls what the watcher heard into every instance's follower, then
// takes e's: the paths to read again, whether to scan, and the signals
// to take in.
func (f *family) take(e *Engine) (paths []string, rescan bool, set map[string]*coreapi.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != nil {
		heard, missed := f.w.Take()
		f.spreadLocked(f.members(), heard, missed, nil)
	}
	fl := e.follow
	for p := range fl.paths {
		paths = append(paths, p)
	}
	rescan, set = fl.rescan, fl.set
	fl.paths, fl.rescan, fl.set = nil, false, nil
	return paths, rescan, set
}

// members are the instances that follow: the readers, and the writer
// when it follows its root.
func (f *family) members() []*Engine {
	if f.writer.follow != nil {
		return append([]*Engine{f.writer}, f.readers...)
	}
	return f.readers
}

// spread gives the readers what the writer changed.
func (f *family) spread(paths []string, rescan bool, set map[string]*coreapi.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spreadLocked(f.readers, paths, rescan, set)
}

func (f *family) spreadLocked(to []*Engine, paths []string, rescan bool, set map[string]*coreapi.Signal) {
	if len(paths) == 0 && !rescan && len(set) == 0 {
		return
	}
	for _, m := range to {
		fl := m.follow
		if len(paths) > 0 && fl.paths == nil {
			fl.paths = map[string]bool{}
		}
		for _, p := range paths {
			fl.paths[p] = true
		}
		fl.rescan = fl.rescan || rescan
		if len(set) > 0 && fl.set == nil {
			fl.set = map[string]*coreapi.Signal{}
		}
		for p, s := range set {
			fl.set[p] = s
		}
	}
}

func (f *family) takeAccessed() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	acc := f.accessed
	f.accessed = nil
	return acc
}

func (f *family) addAccessed(acc map[string]int) {
	if len(acc) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.accessed == nil {
		f.accessed = map[string]int{}
	}
	for p, n := range acc {
		f.accessed[p] += n
	}
}

// reader waits for a free reader of the writer e; nil when e has none (or
// is itself a reader). release gives it back.
func (e *Engine) reader(ctx context.Context) (r *Engine, release func(), err error) {
	f := e.fam
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	if idle == nil || f.writer != e {
		return nil, nil, nil
	}
	select {
	case r, ok := <-idle:
		if !ok {
			return nil, nil, ErrClosed
		}
		return r, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if !f.closed {
				f.idle <- r
			}
		}, nil
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("arbor: wait for a reader: %w", ctx.Err())
	}
}

// closeReaders closes the readers of the writer w, waiting for the calls
// they run.
func (f *family) closeReaders(ctx context.Context, w *Engine) []error {
	if f.writer != w {
		return nil
	}
	f.mu.Lock()
	readers := f.readers
	if f.idle != nil && !f.closed {
		close(f.idle)
	}
	f.closed = true
	f.mu.Unlock()
	var errs []error
	for _, r := range readers {
		if err := r.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	f.mu.Lock()
	f.readers = nil
	f.mu.Unlock()
	return errs
}

// closeModules closes a reader's modules.
func closeModules(ctx context.Context, mods ...api.Module) []error {
	var errs []error
	for _, m := range mods {
		if m == nil {
			continue
		}
		if err := m.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("arbor: close reader: %w", err))
		}
	}
	return errs
}
