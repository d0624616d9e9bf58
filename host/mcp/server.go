// Package mcp serves an Arbor memory root to AI agents over the Model
// Context Protocol (github.com/modelcontextprotocol/go-sdk): tools to query,
// search, read, browse and curate the tree, backed by the engine running
// under wazero (host/runtime). The calling agent is the curator, so none of
// the tools needs an LLM of Arbor's own.
//
// Calls reach the engine one at a time, in the order they arrived on the
// wire; the package never touches the memory root except through the
// engine.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// Server serves one open engine to MCP clients.
type Server struct {
	eng           *runtime.Engine
	srv           *sdk.Server
	flushInterval time.Duration
	q             *queue
	mu            sync.Mutex
	dirty         bool // a call since the last flush
}

// Option configures New.
type Option func(*Server)

// WithFlushInterval sets how often an idle server writes the lifecycle
// signals that queries and reads accumulate (default 5 minutes; 0 writes
// them only at shutdown). The engine also writes them at the first call
// that finds changes older than its own flushMinutes, but an idle server
// makes no calls.
func WithFlushInterval(d time.Duration) Option {
	return func(s *Server) { s.flushInterval = d }
}

// instructions is what a client may show its model about the server as a
// whole; each tool's description says the rest.
const instructions = `Arbor is a long-term memory kept as a tree of markdown entries (domain/topic[/subtopic]/entry.md).
Before answering from your own knowledge about this user, project or domain, call arbor-query; when you learn something worth keeping (a decision, a fact, a preference, a procedure), call arbor-curate with an ADD or UPSERT and a reason.
Use arbor-search for ranked candidates, arbor-read to open an entry with its relations and backlinks, arbor-tree to see the hierarchy.
Paths are relative to the memory root. Nothing here calls an LLM: you are the curator.`

// readOnlyInstructions replace instructions when the memory is granted
// read-only (docs/sandbox.md): there is no arbor-curate to call.
const readOnlyInstructions = `Arbor is a long-term memory kept as a tree of markdown entries (domain/topic[/subtopic]/entry.md). This server grants it read-only: you can consult it, not change it.
Before answering from your own knowledge about this user, project or domain, call arbor-query.
Use arbor-search for ranked candidates, arbor-read to open an entry with its relations and backlinks, arbor-tree to see the hierarchy.
Paths are relative to the memory root. Nothing here calls an LLM.`

// New returns a server for eng, which must be open. The server does not
// close it. An engine created runtime.WithReadOnly is served without
// arbor-curate.
func New(eng *runtime.Engine, opts ...Option) *Server {
	s := &Server{eng: eng, flushInterval: 5 * time.Minute}
	for _, o := range opts {
		o(s)
	}
	text := instructions
	if eng.ReadOnly() {
		text = readOnlyInstructions
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "arbor", Title: "Arbor memory", Version: api.Version},
		&sdk.ServerOptions{Instructions: text, Capabilities: &sdk.ServerCapabilities{}})
	addTools(s)
	return s
}

// Run serves one client over t until the client disconnects (for stdio,
// end of input) or ctx ends, then finishes the calls already queued and
// flushes the engine's lifecycle signals and index. A client that
// disconnects, or a cancelled ctx, is a normal end: Run returns nil; an
// error means the transport failed or the final flush did.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	s.q = newQueue()
	served := make(chan struct{})
	go func() {
		s.q.serve()
		close(served)
	}()
	stopTicker := s.startFlushTicker()
	err := s.srv.Run(ctx, ordered{Transport: t, q: s.q})
	stopTicker()
	s.q.close()
	<-served
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	// The flush runs on a fresh context: a cancelled ctx is how a signal
	// asks for exactly this shutdown.
	if _, ferr := s.eng.Flush(context.WithoutCancel(ctx)); ferr != nil {
		err = errors.Join(err, fmt.Errorf("flush on shutdown: %w", ferr))
	}
	return err
}

// startFlushTicker flushes every flushInterval when calls were made since
// the last flush, through the queue like any call; it returns its stop.
func (s *Server) startFlushTicker() (stop func()) {
	return runtime.Every(s.flushInterval, func() {
		s.mu.Lock()
		dirty := s.dirty
		s.dirty = false
		s.mu.Unlock()
		if !dirty {
			return
		}
		s.q.do(context.Background(), false, func(ctx context.Context) {
			if _, err := s.eng.Flush(ctx); err != nil {
				// The signals stay pending in the engine; the next
				// flush or the one at shutdown retries them.
				s.markDirty()
			}
		})
	})
}

func (s *Server) markDirty() {
	s.mu.Lock()
	s.dirty = true
	s.mu.Unlock()
}

// call runs f on the engine in its turn.
func (s *Server) call(ctx context.Context, f func(ctx context.Context) error) error {
	var err error
	if qerr := s.q.do(ctx, true, func(ctx context.Context) { err = f(ctx) }); qerr != nil {
		return qerr
	}
	s.markDirty()
	return err
}
