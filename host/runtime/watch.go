package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/watch"
)

// WithWatch keeps a long-lived engine (an MCP server, an embedding
// program) in step with the files others change in its root — an editor,
// git, another process: the root is watched (host/watch), and before each
// call the engine reads again the paths that changed (the refresh method,
// docs/ABI.md §4.12). Where watching fails or may have missed events, or
// the root is on a network file system whose changes made on other
// machines raise no event here (watch.Remote), the engine lists the whole
// tree, at most once every scanEvery, and reads only the files whose size
// or time moved; scanEvery <= 0 means
// DefaultScanEvery. The engine's readers (AddReaders) follow the same
// watcher.
func WithWatch(scanEvery time.Duration) Option {
	return func(c *config) {
		if scanEvery <= 0 {
			scanEvery = DefaultScanEvery
		}
		c.scanEvery = scanEvery
	}
}

// DefaultScanEvery is how often, at most, a watching engine lists the
// whole tree when it cannot rely on the watcher.
const DefaultScanEvery = 2 * time.Second

// syncTimeout is how long a call waits for the watcher to hear of its
// barrier (watch.Sync) before it scans the tree instead. The event takes
// microseconds; this bounds a machine stalled for other reasons.
const syncTimeout = 500 * time.Millisecond

// follower is how one instance follows its root and, for a reader, its
// writer: what it must take in before its next call.
type follower struct {
	lastScan time.Time
	retry    bool // the last refresh failed: scan at the next call
	opened   bool
	// Under the family's lock: the paths others changed (the watcher's,
	// the writer's writes), whether to scan the whole tree, and the
	// lifecycle signals the writer changed.
	paths  map[string]bool
	rescan bool
	set    map[string]*api.Signal
}

// startFollowing starts the watcher of a WithWatch engine.
func (e *Engine) startFollowing(cfg *config) {
	if cfg.scanEvery <= 0 {
		return
	}
	e.fam.scanEvery = cfg.scanEvery
	w, err := watch.New(e.fs.Dir())
	if err != nil {
		e.logf(LevelWarn, fmt.Sprintf("%v; the tree is scanned for changes instead, at most every %s", err, cfg.scanEvery))
	} else {
		e.fam.w = w
		if kind, remote := remoteFS(e.fs.Dir()); remote {
			e.fam.remote = true
			e.logf(LevelInfo, fmt.Sprintf("the root is on a %s file system, where what other machines change raises no event here: the tree is also scanned for changes, at most every %s", kind, cfg.scanEvery))
		}
	}
	e.follow = &follower{}
}

// remoteFS tells a root the watcher cannot be trusted with (a variable
// for the tests, which have no network file system to mount).
var remoteFS = watch.Remote

// catchUp runs before a call of method: it has the engine read again what
// changed on disk since the last call, and take in the signals its writer
// changed. A failure is logged; the call still runs, and the changes are
// scanned for at the next one.
func (e *Engine) catchUp(ctx context.Context, method string) {
	f := e.follow
	switch {
	case f == nil || !f.opened:
		return
	case method == "open" || method == "close" || method == "refresh" || method == "signals":
		return
	}
	if e.fam.w != nil {
		// A save made just before this call is in the kernel's queue, not
		// yet in the watcher's record: wait for it.
		e.fam.w.Sync(syncTimeout)
	}
	paths, rescan, set := e.fam.take(e)
	rescan = rescan || f.retry || (e.fam.scanEvery > 0 && (e.fam.w == nil || e.fam.remote) && time.Since(f.lastScan) >= e.fam.scanEvery)
	if rescan || len(paths) > 0 {
		p := api.RefreshParams{Paths: paths}
		if rescan {
			p.Paths = nil
			f.lastScan = time.Now()
		}
		res, err := decodeResult[api.RefreshResult]("refresh")(e.rawMethod(ctx, "refresh", p))
		// Paths taken and not refreshed are found by a scan next time.
		f.retry = err != nil
		if err != nil {
			e.logf(LevelWarn, fmt.Sprintf("refresh after changes on disk: %v", err))
		}
		e.changed(res.Paths)
	}
	if len(set) > 0 {
		if _, err := e.rawMethod(ctx, "signals", api.SignalsParams{Set: set}); err != nil {
			e.logf(LevelWarn, fmt.Sprintf("take in the lifecycle signals the writer changed: %v", err))
		}
	}
}

// followCall runs a raw request of method between before and after.
func (e *Engine) followCall(ctx context.Context, method string, call func() ([]byte, error)) ([]byte, error) {
	e.before(ctx, method)
	out, err := call()
	var env envelope
	if err == nil && method == "open" && e.follow != nil && json.Unmarshal(out, &env) == nil && env.Error == nil {
		e.follow.opened = true
	}
	e.after(ctx, method)
	return out, err
}

// stopFollowing stops the watcher.
func (e *Engine) stopFollowing() {
	if e.fam.writer == e && e.fam.w != nil {
		e.fam.w.Close()
	}
}

// Refresh has the engine read again the paths others changed (files or
// folders), or, with none, scan the whole tree (docs/ABI.md §4.12); its
// readers do so before their next call. A WithWatch engine does this
// itself before each call.
func (e *Engine) Refresh(ctx context.Context, p api.RefreshParams) (api.RefreshResult, error) {
	res, err := method[api.RefreshResult](ctx, e, "refresh", p)
	if e.fam.writer == e {
		e.fam.spread(p.Paths, len(p.Paths) == 0, nil)
	}
	e.changed(res.Paths)
	return res, err
}

// changed reports what a refresh of the writer found (WithChanges).
func (e *Engine) changed(paths []string) {
	if len(paths) > 0 && e.fam.writer == e && e.cfg.changes != nil {
		e.cfg.changes(paths)
	}
}
