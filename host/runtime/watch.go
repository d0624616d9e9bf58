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
// docs/ABI.md §4.12). Where watching fails or may have missed events, the
// engine lists the whole tree instead, at most once every scanEvery, and
// reads only the files whose size or time moved; scanEvery <= 0 means
// DefaultScanEvery.
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

// follower is how an engine follows its root: a watcher, or only scans.
type follower struct {
	w         *watch.Watcher // nil: watching failed, scan instead
	scanEvery time.Duration
	lastScan  time.Time
	retry     bool // the last refresh failed: scan at the next call
	opened    bool
}

// startFollowing starts the watcher of a WithWatch engine.
func (e *Engine) startFollowing(cfg *config) {
	if cfg.scanEvery <= 0 {
		return
	}
	f := &follower{scanEvery: cfg.scanEvery}
	w, err := watch.New(e.fs.Dir())
	if err != nil {
		e.logf(LevelWarn, fmt.Sprintf("%v; the tree is scanned for changes instead, at most every %s", err, cfg.scanEvery))
	} else {
		f.w = w
	}
	e.follow = f
}

// catchUp runs before a call of method: it has the engine read again what
// changed on disk since the last call. A failure is logged; the call
// still runs, and the changes are scanned for at the next one.
func (e *Engine) catchUp(ctx context.Context, method string) {
	f := e.follow
	if f == nil || !f.opened || method == "open" || method == "close" || method == "refresh" {
		return
	}
	rescan := f.retry || (f.w == nil && time.Since(f.lastScan) >= f.scanEvery)
	var paths []string
	if f.w != nil {
		var missed bool
		paths, missed = f.w.Take()
		rescan = rescan || missed
	}
	if !rescan && len(paths) == 0 {
		return
	}
	p := api.RefreshParams{Paths: paths}
	if rescan {
		p.Paths = nil
		f.lastScan = time.Now()
	}
	_, err := e.rawMethod(ctx, "refresh", p)
	// Paths taken and not refreshed are found by a scan next time.
	f.retry = err != nil
	if err != nil {
		e.logf(LevelWarn, fmt.Sprintf("refresh after changes on disk: %v", err))
	}
}

// followCall catches up before a raw request of method and notes a
// successful open after it.
func (e *Engine) followCall(ctx context.Context, method string, call func() ([]byte, error)) ([]byte, error) {
	if e.follow == nil {
		return call()
	}
	e.catchUp(ctx, method)
	out, err := call()
	var env envelope
	if err == nil && method == "open" && json.Unmarshal(out, &env) == nil && env.Error == nil {
		e.follow.opened = true
	}
	return out, err
}

// stopFollowing stops the watcher.
func (e *Engine) stopFollowing() {
	if e.follow != nil && e.follow.w != nil {
		e.follow.w.Close()
	}
}

// Refresh has the engine read again the paths others changed (files or
// folders), or, with none, scan the whole tree (docs/ABI.md §4.12). A
// WithWatch engine does this itself before each call.
func (e *Engine) Refresh(ctx context.Context, p api.RefreshParams) (api.RefreshResult, error) {
	return method[api.RefreshResult](ctx, e, "refresh", p)
}
