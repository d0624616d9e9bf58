package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/arborhost"
)

// Option configures New.
type Option func(*config)

type config struct {
	stderr   io.Writer
	cacheDir *string
	logf     func(level int, msg string)
	progress func(api.Progress)
	wasm     []byte
	embedder arborhost.Embedder
	// scanEvery > 0 makes the engine follow changes on disk (WithWatch).
	scanEvery time.Duration
	changes   func(paths []string)
	sandbox   // the limits of sandbox.go
}

// Log levels of the arbor_host log import.
const (
	LevelDebug = 0
	LevelInfo  = 1
	LevelWarn  = 2
	LevelError = 3
	// LevelProgress carries a progress report (docs/ABI.md §2.2), which
	// goes to WithProgress, never to the logger.
	LevelProgress = 4
)

var levelNames = [...]string{"debug", "info", "warn", "error"}

// WithEmbedder gives the engine an embedding model (docs/ABI.md §2.3):
// the vectors of the tree's files are fused with BM25's matches. Without
// it, or with a nil one, the embed import answers that the host has none.
func WithEmbedder(em arborhost.Embedder) Option {
	return func(c *config) { c.embedder = em }
}

// WithStderr sends the module's standard error (and standard output, which
// the engine does not use) to w instead of os.Stderr. An *os.File is only
// written to: the module never holds its descriptor, so it cannot change
// the descriptor's flags (O_NONBLOCK) under the host and the processes
// sharing it.
func WithStderr(w io.Writer) Option {
	return func(c *config) { c.stderr = w }
}

// WithCacheDir keeps compiled code in dir instead of the user cache folder
// (os.UserCacheDir()/arbor/wazero). The empty string keeps it in memory
// only, for the life of the process.
func WithCacheDir(dir string) Option {
	return func(c *config) { c.cacheDir = &dir }
}

// WithLogger receives the engine's diagnostic lines (level LevelDebug to
// LevelError). By default warnings and errors go to the standard error
// writer and the rest is dropped.
func WithLogger(f func(level int, msg string)) Option {
	return func(c *config) { c.logf = f }
}

// WithProgress receives the engine's reports of how far a long call has
// got (reading and indexing a tree at open, the operations of a curate or
// an ingest, their indexing), about one per percent, from the goroutine
// making the call. By default they are dropped.
func WithProgress(f func(api.Progress)) Option {
	return func(c *config) { c.progress = f }
}

// WithChanges receives the files each refresh of the engine found added,
// updated or removed on disk (api.RefreshResult.Paths): those it makes
// before a call (WithWatch) and those it is asked for (Refresh). Its
// readers' refreshes, which find the same, are not reported. f is called
// in the engine's call: it must not call the engine, nor wait for long.
func WithChanges(f func(paths []string)) Option {
	return func(c *config) { c.changes = f }
}

// WithWasm runs this module instead of the embedded one (for tests).
func WithWasm(wasm []byte) Option {
	return func(c *config) { c.wasm = wasm }
}

func newConfig(opts []Option) *config {
	c := &config{stderr: os.Stderr, wasm: embeddedWasm}
	for _, o := range opts {
		o(c)
	}
	if c.logf == nil {
		w := c.stderr
		c.logf = func(level int, msg string) {
			if level >= LevelWarn {
				fmt.Fprintf(w, "arbor: %s: %s\n", levelName(level), msg)
			}
		}
	}
	logf := c.logf
	c.logf = func(level int, msg string) {
		if level != LevelProgress {
			logf(level, msg)
			return
		}
		var p api.Progress
		if c.progress != nil && json.Unmarshal([]byte(msg), &p) == nil {
			c.progress(p)
		}
	}
	return c
}

// reportsKey carries a call's own receivers of log lines and progress
// (WithReports).
type reportsKey struct{}

type reports struct {
	log      func(level int, msg string)
	progress func(api.Progress)
}

// WithReports returns ctx carrying where the engine's log lines (level
// LevelDebug to LevelError) and progress reports go during a call made
// with it, instead of WithLogger's and WithProgress's receivers: a host
// serving several clients at once, whose calls may run at the same time
// on an engine with readers, sends each call's reports to its own client.
// Either may be nil to drop them.
func WithReports(ctx context.Context, log func(level int, msg string), progress func(api.Progress)) context.Context {
	return context.WithValue(ctx, reportsKey{}, &reports{log: log, progress: progress})
}

// logCtx is the arbor_host log import: the call's own receivers when its
// ctx carries them (WithReports), else the engine's.
func (c *config) logCtx(ctx context.Context, level int, msg string) {
	r, _ := ctx.Value(reportsKey{}).(*reports)
	switch {
	case r == nil:
		c.logf(level, msg)
	case level != LevelProgress:
		if r.log != nil {
			r.log(level, msg)
		}
	case r.progress != nil:
		var p api.Progress
		if json.Unmarshal([]byte(msg), &p) == nil {
			r.progress(p)
		}
	}
}

func levelName(level int) string {
	if level >= 0 && level < len(levelNames) {
		return levelNames[level]
	}
	return fmt.Sprintf("level %d", level)
}
