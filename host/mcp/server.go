// Package mcp serves an Arbor memory root to AI agents over the Model
// Context Protocol (github.com/modelcontextprotocol/go-sdk): tools to query,
// search, read, browse and curate the tree, its entries as resources, and
// prompts, backed by the engine running under wazero (host/runtime). The
// calling agent is the curator, so none of the tools needs an LLM of
// Arbor's own.
//
// One Server is one registry of tools, resources and prompts, served over
// stdio to one client (Run) or over Streamable HTTP to many (Serve).
// Calls reach the engine first come first served across all clients (on
// stdio in the order they arrived on the wire): a write alone, reads at
// the same time on an engine with readers (runtime.Engine.AddReaders),
// each of which reflects every write before the next read starts. The package
// writes to the memory root only through the engine; it watches the root
// itself, to tell subscribed clients of changes made by others.
package mcp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
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
	relay         *Relay
	q             *queue
	mu            sync.Mutex
	dirty         bool // a call since the last flush
	serving       bool // Run or Serve is serving
	// readHook, set by tests, runs in every read's turn.
	readHook func()
	// bases holds the versions each session's client read (bases.go).
	bases bases
	// announced holds a hash of each entry as last announced (announce).
	announcedMu sync.Mutex
	announced   map[string][sha256.Size]byte
	// pending counts the goroutines that announce or scan apart from the
	// calls; the end of serving waits for them.
	pending sync.WaitGroup
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

// WithRelay sends what the engine reports during a call (its log lines,
// its progress) to the client that made it: r must be the Relay whose
// EngineOptions the engine was created with.
func WithRelay(r *Relay) Option {
	return func(s *Server) { s.relay = r }
}

// instructions is what a client may show its model about the server as a
// whole; each tool's description says the rest.
const instructions = `Arbor is a long-term memory kept as a tree of markdown entries (domain/topic[/subtopic]/entry.md).
Before answering from your own knowledge about this user, project or domain, call arbor-query; when you learn something worth keeping (a decision, a fact, a preference, a procedure), call arbor-curate with an ADD or UPSERT and a reason.
Use arbor-search for ranked candidates, arbor-read to open an entry with its relations and backlinks, arbor-context to gather an entry and its linked entries within a token budget, arbor-tree to see the hierarchy.
Entries are also resources (arbor://domain/topic/entry.md; subscribe to one to hear when it changes), and the prompts arbor-recall and arbor-record wrap the usual before-a-task and after-a-task steps.
Paths are relative to the memory root. Nothing here calls an LLM: you are the curator.`

// readOnlyInstructions replace instructions when the memory is granted
// read-only (docs/sandbox.md): there is no arbor-curate to call.
const readOnlyInstructions = `Arbor is a long-term memory kept as a tree of markdown entries (domain/topic[/subtopic]/entry.md). This server grants it read-only: you can consult it, not change it.
Before answering from your own knowledge about this user, project or domain, call arbor-query.
Use arbor-search for ranked candidates, arbor-read to open an entry with its relations and backlinks, arbor-context to gather an entry and its linked entries within a token budget, arbor-tree to see the hierarchy.
Entries are also resources (arbor://domain/topic/entry.md), and the prompt arbor-recall wraps the usual before-a-task step.
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
		&sdk.ServerOptions{
			Instructions: text,
			// Logging: the engine's lines during a call go to its client at
			// the level the client set. Resources: the list is the tree as
			// it is at each request (resources.go), so there is no list
			// to announce changes of; a subscribed entry is announced.
			Capabilities: &sdk.ServerCapabilities{
				Logging:   &sdk.LoggingCapabilities{},
				Resources: &sdk.ResourceCapabilities{Subscribe: true},
			},
			CompletionHandler:  s.complete,
			SubscribeHandler:   s.subscribe,
			UnsubscribeHandler: s.unsubscribe,
		})
	addTools(s)
	addResources(s)
	addPrompts(s)
	s.relay.announceWith(s.announceLater)
	return s
}

// errServing refuses a second Run or Serve while one serves: the
// queue and the flush ticker belong to one serving.
var errServing = errors.New("arbor mcp: the server is already serving")

// begin starts what one serving needs: the queue, the flush ticker and
// the watch that announces changed entries (resources.go). Its
// end stops them once the calls already queued have run, then flushes the
// engine's lifecycle signals and index, joining a flush error to err.
func (s *Server) begin() (end func(ctx context.Context, err error) error, _ error) {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return nil, errServing
	}
	s.serving = true
	s.mu.Unlock()
	s.q = newQueue(s.eng.Readers())
	served := make(chan struct{})
	go func() {
		s.q.serve()
		close(served)
	}()
	stopTicker := s.startFlushTicker()
	stopWatch := s.watchRoot()
	return func(ctx context.Context, err error) error {
		stopWatch()
		stopTicker()
		s.q.close()
		<-served
		s.pending.Wait()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
		// The flush runs on a fresh context: a cancelled ctx is how a
		// signal asks for exactly this shutdown.
		if _, ferr := s.eng.Flush(context.WithoutCancel(ctx)); ferr != nil {
			err = errors.Join(err, fmt.Errorf("flush on shutdown: %w", ferr))
		}
		s.mu.Lock()
		s.serving = false
		s.mu.Unlock()
		return err
	}, nil
}

// Run serves one client over t until the client disconnects (for stdio,
// end of input) or ctx ends, then finishes the calls already queued and
// flushes the engine's lifecycle signals and index. A client that
// disconnects, or a cancelled ctx, is a normal end: Run returns nil; an
// error means the transport failed or the final flush did.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	end, err := s.begin()
	if err != nil {
		return err
	}
	return end(ctx, s.srv.Run(ctx, ordered{Transport: t, q: s.q}))
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
		s.q.do(context.Background(), false, false, func(ctx context.Context) {
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

// caller is who made a call: its session (nil for the server's own
// calls), the progress token it sent if any, and what it asked for.
type caller struct {
	session *sdk.ServerSession
	token   any
	what    string
}

// callerOf reads the caller of a request.
func callerOf(req sdk.Request) caller {
	c := caller{}
	c.session, _ = req.GetSession().(*sdk.ServerSession)
	params := req.GetParams()
	if params == nil || reflect.ValueOf(params).IsNil() {
		return c // a request may come without params: a typed nil
	}
	switch p := params.(type) {
	case *sdk.CallToolParamsRaw:
		c.what = p.Name
	case *sdk.ReadResourceParams:
		c.what = "resources/read " + p.URI
	case *sdk.GetPromptParams:
		c.what = "prompts/get " + p.Name
	case *sdk.ListResourcesParams:
		c.what = "resources/list"
	case *sdk.CompleteParams:
		c.what = "completion/complete"
	}
	if p, ok := params.(interface{ GetProgressToken() any }); ok {
		c.token = p.GetProgressToken()
	}
	return c
}

// call runs f on the engine in its turn, alone: a call that writes (or
// may). While it runs, the engine's log lines and progress go to who, and
// then a debug line saying how long the call waited for its turn and ran,
// which is what tells a client sharing the server with others why a call
// was slow.
func (s *Server) call(ctx context.Context, who caller, f func(ctx context.Context) error) error {
	return s.run(ctx, who, false, f)
}

// read is call for a call that only reads: it may run beside other reads,
// on the engine's readers (runtime.Engine.AddReaders).
func (s *Server) read(ctx context.Context, who caller, f func(ctx context.Context) error) error {
	return s.run(ctx, who, true, f)
}

func (s *Server) run(ctx context.Context, who caller, read bool, f func(ctx context.Context) error) error {
	var err error
	var waited, ran time.Duration
	drain := func() {}
	queued := time.Now()
	qerr := s.q.do(ctx, true, read, func(ctx context.Context) {
		ctx, end := s.relay.begin(ctx, who)
		started := time.Now()
		waited = started.Sub(queued)
		if read && s.readHook != nil {
			s.readHook()
		}
		err = f(ctx)
		ran = time.Since(started)
		drain = end()
	})
	if qerr != nil {
		return qerr
	}
	drain() // out of the engine's turn: a slow client delays only itself
	s.markDirty()
	if who.session != nil && who.what != "" {
		_ = who.session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Logger: "arbor",
			Data: fmt.Sprintf("%s: ran %.1f ms after waiting %.1f ms for its turn", who.what, ms(ran), ms(waited))})
	}
	return err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
