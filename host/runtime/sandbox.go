package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/tetratelabs/wazero"
)

// The sandbox limits of docs/sandbox.md: a deadline per call, a cap on the
// module's memory, and a read-only grant of the root.

// ErrMemoryLimit is wrapped by the error of a call that needed more memory
// than WithMaxMemory allows. The module stops; the next call restarts it.
var ErrMemoryLimit = errors.New("arbor: the engine needs more memory than its limit")

// pageSize is the size of a WebAssembly memory page.
const pageSize = 1 << 16

// sandbox holds the limits an Engine is created with.
type sandbox struct {
	callTimeout time.Duration
	maxMemory   int64 // bytes; 0: wazero's limit of 4 GiB
	readOnly    bool
}

// WithCallTimeout bounds every call into the module (each method call, and
// each step of Drive) to d, and makes calls stoppable: a call whose context
// is done (this deadline, the ctx's own, or a cancel) is stopped at once,
// wherever the module is. It returns an error wrapping
// context.DeadlineExceeded (or context.Canceled), and the next call starts
// a new instance and opens the root again. Each file the stopped call
// wrote is whole (writes are atomic), but a call that writes several files
// may have written only some of them.
//
// Stoppable calls cost time: CPU-bound calls run 4 to 6 times slower
// (docs/sandbox.md). Without this option (d = 0, the default) a call runs
// to its end, and its ctx is checked only before it starts.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) { c.callTimeout = d }
}

// WithMaxMemory caps the module's linear memory at n bytes (rounded down to
// 64 KiB pages; wazero's own limit is 4 GiB). A call that needs more stops
// with an error wrapping ErrMemoryLimit and the next call restarts the
// module, as after a deadline. The Go runtime inside the module is told to
// collect garbage harder as it nears the cap (GOMEMLIMIT), so only a call
// that really needs the memory fails. New fails when n is below what the
// module needs to start.
func WithMaxMemory(n int64) Option {
	return func(c *config) { c.maxMemory = n }
}

// WithReadOnly grants the module the root read-only: the host refuses
// every write, removal and rename (code DENIED, docs/ABI.md §2), and every
// open is sent with "readOnly": true, so the engine writes nothing, keeps
// its index and lifecycle signals in memory, and refuses curate, ingest
// and curateFrom with the error code read_only.
func WithReadOnly() Option {
	return func(c *config) { c.readOnly = true }
}

// ReadOnly reports whether the engine was created WithReadOnly.
func (e *Engine) ReadOnly() bool { return e.fs.IsReadOnly() }

func (s sandbox) check() error {
	switch {
	case s.callTimeout < 0:
		return fmt.Errorf("arbor: call timeout %v: want 0 (none) or more", s.callTimeout)
	case s.maxMemory < 0 || (s.maxMemory > 0 && s.maxMemory < pageSize):
		return fmt.Errorf("arbor: max memory of %d bytes: want 0 (no cap) or at least one 64 KiB page", s.maxMemory)
	}
	return nil
}

// memoryPages is the cap in pages, 0 for none.
func (s sandbox) memoryPages() uint32 {
	pages := s.maxMemory / pageSize
	if pages > 1<<16 {
		return 1 << 16 // wazero's limit, 4 GiB
	}
	return uint32(pages)
}

// memoryNote names the cap in errors about the module's memory.
func (s sandbox) memoryNote() string {
	if s.maxMemory == 0 {
		return ""
	}
	return fmt.Sprintf(" (memory capped at %s)", mib(int64(s.memoryPages())*pageSize))
}

// goMemLimit is the GOMEMLIMIT the module starts with under a cap: the Go
// runtime then collects garbage harder as its memory nears the cap
// instead of growing into it. The quarter left above it is for what the
// limit does not count (the module's data, stacks) and for the overshoot
// of a soft limit.
func (s sandbox) goMemLimit() string {
	if s.maxMemory == 0 {
		return ""
	}
	return fmt.Sprint(int64(s.memoryPages()) * pageSize / 4 * 3)
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// callContext is ctx bounded by the call timeout.
func (s sandbox) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.callTimeout > 0 {
		return context.WithTimeout(ctx, s.callTimeout)
	}
	return ctx, func() {}
}

// runtimeConfig is the wazero configuration of an Engine's runtime. With a
// call timeout the module is compiled to stop when its context is done:
// wazero then leaves the compiled code for Go at every loop iteration and
// function entry to check, which makes CPU-bound calls 4 to 6 times slower
// (docs/sandbox.md), so an engine without a timeout is compiled without.
// Nothing cheaper stops a call: the engine can compute for seconds without
// calling the host, where a check could be made.
func runtimeConfig(cfg *config, cache wazero.CompilationCache) wazero.RuntimeConfig {
	rc := wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(cfg.callTimeout > 0)
	if pages := cfg.memoryPages(); pages > 0 {
		rc = rc.WithMemoryLimitPages(pages)
	}
	return rc
}

// stopError says why the module stopped during label (a method, or an
// export of the module): its deadline, a cancel, the memory cap, or
// anything else (a trap, an exit).
func (e *Engine) stopError(label string, err error) error {
	const next = "the engine restarts at the next call"
	switch {
	case e.out.outOfMemory():
		return fmt.Errorf("arbor: %s: stopped: the engine needed more memory than its cap of %s; %s: %w",
			label, mib(int64(e.cfg.memoryPages())*pageSize), next, ErrMemoryLimit)
	case errors.Is(err, context.DeadlineExceeded):
		limit := ""
		if e.cfg.callTimeout > 0 {
			limit = fmt.Sprintf(" (calls may run for %v)", e.cfg.callTimeout)
		}
		return fmt.Errorf("arbor: %s: stopped at its deadline%s; %s: %w", label, limit, next, context.DeadlineExceeded)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("arbor: %s: stopped: cancelled; %s: %w", label, next, context.Canceled)
	}
	return fmt.Errorf("arbor: %s: the engine module stopped; %s: %w", label, next, err)
}

// outputWatch passes the module's standard error on and notices the Go
// runtime's fatal error when memory.grow fails, which it prints before it
// exits or traps: the only sign, since the module sees a failed grow and
// wazero reports the exit or the trap, not its cause.
type outputWatch struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte // the end of the output so far, for a phrase split across writes
	oom  bool
}

// oomPhrases are how the Go runtime says it: a failed heap growth, or
// a failed allocation of its own metadata.
var oomPhrases = [][]byte{[]byte("fatal error: out of memory"), []byte("fatal error: runtime: cannot allocate memory")}

func (o *outputWatch) Write(p []byte) (int, error) {
	o.mu.Lock()
	buf := append(o.tail, p...)
	keep := 0
	for _, phrase := range oomPhrases {
		o.oom = o.oom || bytes.Contains(buf, phrase)
		keep = max(keep, len(phrase)-1)
	}
	if len(buf) > keep {
		buf = buf[len(buf)-keep:]
	}
	o.tail = append(o.tail[:0], buf...)
	o.mu.Unlock()
	return o.w.Write(p)
}

// outOfMemory reports, once, whether the module ran out of memory since
// the last report.
func (o *outputWatch) outOfMemory() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	oom := o.oom
	o.oom, o.tail = false, o.tail[:0]
	return oom
}

// requestMethod is the method of a raw request, "" when it has none.
func requestMethod(req []byte) string {
	var env struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(req, &env) != nil {
		return ""
	}
	return env.Method
}

// grantReadOnly sets "readOnly": true in the params of an open request,
// replacing any readOnly the caller sent (keys match without regard to
// case, as the engine reads them). A request it cannot read is sent as it
// is: the engine refuses it without opening anything.
func grantReadOnly(req []byte) []byte {
	var top map[string]json.RawMessage
	var env struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(req, &top) != nil || json.Unmarshal(req, &env) != nil {
		return req
	}
	params := map[string]json.RawMessage{}
	if len(env.Params) > 0 && string(env.Params) != "null" && json.Unmarshal(env.Params, &params) != nil {
		return req
	}
	for k := range params {
		if strings.EqualFold(k, "readOnly") {
			delete(params, k)
		}
	}
	params["readOnly"] = json.RawMessage("true")
	for k := range top {
		if strings.EqualFold(k, "params") {
			delete(top, k)
		}
	}
	var err error
	if top["params"], err = json.Marshal(params); err != nil {
		return req
	}
	out, err := json.Marshal(top)
	if err != nil {
		return req
	}
	return out
}

// responseError is the error a raw response holds, nil for a result.
func responseError(out []byte) error {
	var env envelope
	if err := json.Unmarshal(out, &env); err != nil {
		return fmt.Errorf("arbor: invalid response from the engine: %w", err)
	}
	if env.Error != nil {
		return env.Error
	}
	return nil
}

// track keeps the open request that a restart replays: set by an open that
// succeeded, dropped by one that failed after closing what was open (any
// failure but refused parameters, which the engine checks first) and by a
// close.
func (e *Engine) track(method string, req, out []byte) {
	switch method {
	case "open":
		switch err := responseError(out); {
		case err == nil:
			e.opened = req
		case !isCode(err, api.CodeInvalidParams):
			e.opened = nil
		}
	case "close":
		if responseError(out) == nil {
			e.opened = nil
		}
	}
}
